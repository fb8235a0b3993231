"""Tables in the shape of Kumar et al. 2020, Tables 4-5, from a run directory's ``metrics.json``.

Table 5 of the paper gives, per model (rows) and prompt (columns), a tuple of percentages for one test case;
the paper's Sec. 3.1 statistics are the share of negatively and positively impacted essays and the mean
score difference as % of the score range. :func:`kumar_tables` turns a run into one such table per target
with the test-case configurations as rows (grouped by family: add, delete, modify, generate, in Table 1's
order) and the prompts as columns (``all`` pools them), each cell ``(neg_pct, pos_pct, mean_diff_pct,
not_lowered_pct)`` rounded to integers as in the paper. ``not_lowered_pct`` (score not lowered; Sec. 3.1: a
human lowers it for every test case) replaces the paper's fourth, garbled entry. Prompt-level generators
(BabelGen) have no pairs: their rows form a Table 4 (targets x prompts, the mean score as % of the range).
:func:`kumar_rows` gives the same figures as tidy rows (CSV).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from callbluff.render.catalogue import attack_meta

PAIR_FIELDS: tuple[str, ...] = ("neg_pct", "pos_pct", "mean_diff_pct", "not_lowered_pct")
"""The four cell entries of a Table 5-style cell, in order."""
GENERATED_FIELDS: tuple[str, ...] = ("mean_score_pct", "arr")
FAMILY_ORDER: tuple[str, ...] = ("add", "delete", "modify", "generate")
TABLE1_ORDER: tuple[str, ...] = (
    "AddWikiRelated", "AddWikiUnrelated", "RepeatSent", "AddSong", "AddSpeech", "AddRC", "AddTruth", "AddLies",
    "DelStart", "DelEnd", "DelRand", "ModGrammar", "ModFluency", "ModLexicon", "ShuffleSent", "BabelGen",
)
"""Kumar et al. Table 1's order of the test cases."""


def load_metrics(run_dir: Path | str) -> list[dict[str, Any]]:
    """The rows of ``RUN/metrics.json``; a clear error when the run has none yet."""
    p = Path(run_dir) / "metrics.json"
    if not p.exists():
        raise FileNotFoundError(f"{p}: no metrics.json; finish the run first (`callbluff run SUITE.toml --out "
                                f"{run_dir}`)")
    rows = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(rows, list):
        raise ValueError(f"{p}: expected a JSON list of metric rows")
    return rows


def _family(attack: str) -> str:
    meta = attack_meta(attack)
    return str(meta["family"]) if meta and meta.get("family") else "other"


def _prompt_key(p: str) -> tuple[int, float, str]:
    if p == "all":
        return (2, 0.0, p)
    try:
        return (0, float(p), p)
    except ValueError:
        return (1, 0.0, p)


def _config_key(row: Mapping[str, Any]) -> tuple[int, int, str, str]:
    fam = _family(row["attack"])
    fam_rank = FAMILY_ORDER.index(fam) if fam in FAMILY_ORDER else len(FAMILY_ORDER)
    rank = TABLE1_ORDER.index(row["attack"]) if row["attack"] in TABLE1_ORDER else len(TABLE1_ORDER)
    return (fam_rank, rank, row["attack"], str(row["params"]))


def _num(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _int(v: Any) -> str:
    x = _num(v)
    return "–" if x is None else str(int(round(x)))


def _scoring_attack_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The attack rows these tables show: those with the scoring figures (Kumar et al.'s pair statistics, or a
    prompt-level generator's mean score), whatever task names them."""
    return [r for r in rows if r.get("attack") != "clean" and ("neg_pct" in r or "mean_score_pct" in r)]


def _is_generated(row: Mapping[str, Any]) -> bool:
    return row.get("neg_pct") is None and row.get("mean_score_pct") is not None


_SHOWN = ("mode", "variant", "count", "percent", "position", "bounded", "items")
"""Parameters :func:`paper_params` always shows (the paper's own vocabulary), in this order."""


def paper_params(attack: str, params: Any) -> str:
    """A configuration in the paper's short form: ``"25% end"``, ``"25% end, bounded"``, ``"svo"``,
    ``"introduction, 1 sentence"``, ``"1 whole item end"`` (the additions' released form, ``items``: ``percent``
    and ``bounded`` do not apply to it); other parameters only where they differ from the attack's defaults
    (``key=value``). Kumar et al. name a test case by its mode / variant, size and position (Sec. 3.1-3.3);
    ``percent=100`` (every sentence, the Mod adversaries' default) and the Del series' default ``mode=keep``
    are left out (the default series reads ``"series k = 1, 2, ..."``). Params that are not JSON are shown as given; an unknown attack shows every non-null
    parameter besides those above as ``key=value``."""
    try:
        d = json.loads(params) if isinstance(params, str) else dict(params)
    except (TypeError, ValueError):
        return str(params)
    meta = attack_meta(attack)
    defaults = meta["defaults"] if meta else None
    parts: list[str] = [str(d[k]) for k in ("mode", "variant") if d.get(k) is not None
                        and not (attack.startswith("Del") and k == "mode" and d[k] == "keep")]
    if d.get("count") is not None:
        c = d["count"]
        parts.append(f"{c} sentence{'s' if c != 1 else ''}" if attack == "RepeatSent" else f"count={c}")
    where = []
    items = d.get("items")  # the released form of the additions: whole pool entries, not a share of sentences
    if items is not None:
        where.append(f"{items} whole item{'s' if items != 1 else ''}")
    elif d.get("percent") is not None and float(d["percent"]) < 100:
        where.append(f"{float(d['percent']):g}%")
    if d.get("position") is not None:
        where.append(str(d["position"]))
    if where:
        parts.append(" ".join(where))
    if d.get("bounded") is not None and items is None:
        parts.append("bounded" if d["bounded"] else "unbounded")
    parts += [f"{k}={v}" for k, v in d.items() if k not in _SHOWN and v is not None
              and (defaults is None or defaults.get(k) != v)]
    if not parts and attack in ("DelStart", "DelEnd"):
        return "series k = 1, 2, ..."  # Sec. 3.3: the first / last k lines kept
    return ", ".join(parts) or "defaults"


def kumar_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tidy rows (one per target, configuration and prompt) with family, the four pair statistics, the
    generator statistics and ``n``, ordered as :func:`kumar_tables` prints them."""
    out = []
    for r in sorted(_scoring_attack_rows(rows), key=lambda r: (str(r["target"]), _config_key(r),
                                                               _prompt_key(str(r["prompt"])))):
        out.append({"target": r["target"], "family": _family(r["attack"]), "attack": r["attack"],
                    "params": paper_params(r["attack"], r["params"]), "prompt": r["prompt"], "n": r.get("n"),
                    **{f: _num(r.get(f)) for f in (*PAIR_FIELDS, *GENERATED_FIELDS)}})
    return out


def _md_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return lines


def kumar_tables(run_dir: Path | str | None = None, *, rows: Sequence[Mapping[str, Any]] | None = None) -> str:
    """Markdown tables in the shape of Kumar et al. Tables 4-5 for a run directory (or given metric ``rows``).

    Per target, a Table 5-style table: one row per (family, attack, params), one column per prompt, cells
    ``(neg_pct, pos_pct, mean_diff_pct, not_lowered_pct)``; then, if the run has generator rows, a Table 4:
    one row per (target, configuration), one column per prompt, cells ``mean_score_pct`` (BabelGen's score as
    % of the range; the paper: at least 60%)."""
    if rows is None:
        if run_dir is None:
            raise ValueError("kumar_tables needs a run directory or metric rows")
        rows = load_metrics(run_dir)
    attack_rows = _scoring_attack_rows(rows)
    if not attack_rows:
        return "(no essay or content-scoring attack rows in this run)\n"
    prompts = sorted({str(r["prompt"]) for r in attack_rows}, key=_prompt_key)
    cell: dict[tuple[str, tuple[int, int, str, str], str], Mapping[str, Any]] = {}
    for r in attack_rows:
        cell[(str(r["target"]), _config_key(r), str(r["prompt"]))] = r
    out = ["Cells: (neg_pct, pos_pct, mean_diff_pct, not_lowered_pct), % of essays / % of the score range, "
           "rounded (Kumar et al. 2020, Table 5 shape).", ""]
    generated = []
    for target in sorted({str(r["target"]) for r in attack_rows}):
        configs = sorted({_config_key(r) for r in attack_rows if str(r["target"]) == target})
        body = []
        for key in configs:
            some = next(cell[(target, key, p)] for p in prompts if (target, key, p) in cell)
            if _is_generated(some):
                generated.append((target, key))
                continue
            cells = []
            for p in prompts:
                r = cell.get((target, key, p))
                cells.append("" if r is None else "(" + ",".join(_int(r.get(f)) for f in PAIR_FIELDS) + ")")
            body.append([_family(key[2]), key[2], paper_params(key[2], key[3]), *cells])
        if body:
            out += [f"### Target {target}", ""]
            out += _md_table(["family", "attack", "params", *prompts], body)
            out.append("")
    if generated:
        out += ["### Prompt-level generators (Table 4 shape): mean score as % of the score range", ""]
        body = []
        for target, key in generated:
            cells = [_int(cell[(target, key, p)].get("mean_score_pct")) if (target, key, p) in cell else ""
                     for p in prompts]
            body.append([target, key[2], paper_params(key[2], key[3]), *cells])
        out += _md_table(["target", "attack", "params", *prompts], body)
        out.append("")
    return "\n".join(out)


def kumar_csv(run_dir: Path | str | None = None, *, rows: Sequence[Mapping[str, Any]] | None = None) -> str:
    """:func:`kumar_rows` as CSV text (header first)."""
    if rows is None:
        if run_dir is None:
            raise ValueError("kumar_csv needs a run directory or metric rows")
        rows = load_metrics(run_dir)
    tidy = kumar_rows(rows)
    buf = io.StringIO()
    fields = ["target", "family", "attack", "params", "prompt", "n", *PAIR_FIELDS, *GENERATED_FIELDS]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(tidy)
    return buf.getvalue()
