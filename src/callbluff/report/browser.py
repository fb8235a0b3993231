"""The report's example browser: a stratified, seeded sample per attack configuration, word-level diffs,
script-safe JSON.

Sampling (a choice; the papers show a few hand-picked examples), so that the page stays small for any suite:

- per attack configuration (attack, params), the examples are split into strata by their outcome: fooled a
  target (a verdict False), robust (judged, never fooled) and not judged; within a stratum they are ordered by
  ``derive_seed(seed, "report", example_id)`` and then taken in turn from each prompt (so a sample spans the
  prompts); the strata are merged so that every prefix of the list holds them in proportion to their sizes
  (largest deficit first, fooled first on ties). The sample depends on the run's seed and the example ids
  only, so a re-rendered report shows the same examples;
- each configuration gets at most ``per_attack`` (the suite's ``output.examples_in_report``), fewer when the
  run has many configurations (:data:`MAX_EMBEDDED` examples at most per run), and the embedded JSON is kept
  within :data:`MAX_EMBEDDED_BYTES`: configurations are filled in rounds (the first example of each, then
  the second, ...) until the budget is spent, every configuration keeping at least one. Kumar et al.'s whole
  protocol (159-171 configurations of ~350-word essays) embeds about three essays per configuration; every
  example stays in examples.parquet and the page says how many it shows of how many.

Within a configuration the most telling come first (fooled first, then scores that rose most or answers that
changed, Kumar et al. Sec. 3.1 / Jia & Liang). One item per example id holds every target's outputs. The diff
(difflib on word tokens, whitespace kept) stores the texts once: ``=`` segments are shared, ``-`` only in the
original, ``+`` only in the adversarial.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from callbluff.tasks.frames import gold_list
from callbluff.render.text import num, short_params
from callbluff.seeding import derive_seed

COLUMNS = ("example_id", "source_id", "prompt_id", "attack", "params", "index", "field", "original_text",
           "adversarial_text", "gold", "gold_answers", "target", "orig_score", "adv_score", "orig_answer",
           "adv_answer", "orig_error", "adv_error", "queries", "verdict", "question", "meta")
MAX_DIFF_CHARS = 60_000
"""Texts longer than this (both together, in characters) are shown without a word diff (difflib is quadratic in
the worst case)."""
MAX_SHOWN_CHARS = 40_000
"""Each text is cut to this many characters in the page (200 copies of a 1 MB essay would make a 400 MB page);
the whole text stays in examples.parquet."""

MAX_EMBEDDED = 3000
"""At most this many examples are embedded in one run's report: with many attack configurations each gets
``max(MIN_PER_ATTACK, MAX_EMBEDDED // configurations)`` (keeps a 100,000-example run's report small)."""
MIN_PER_ATTACK = 20
MAX_EMBEDDED_BYTES = 1_000_000
"""The embedded examples' JSON stays within about this many bytes per run (each configuration keeps at least one
example, so a run of more configurations than the budget holds goes over by those)."""

_LEAD = re.compile(r"\s*")


def _lead(text: str) -> str:
    """The white space ``text`` starts with (``_LEAD`` matches any string, empty or not)."""
    m = _LEAD.match(text)
    return m.group() if m else ""


_WORD = re.compile(r"(\S+)(\s*)")


def word_diff(original: str | None, adversarial: str | None) -> list[list[str]]:
    """``[[op, text], ...]`` with op ``=`` (both), ``-`` (original only) or ``+`` (adversarial only); the
    original is the concatenation of ``=`` and ``-`` segments, the adversarial of ``=`` and ``+``.

    The words are matched (difflib on the words alone: whitespace tokens would repeat everywhere and make the
    matcher quadratic); whitespace that differs between two matched words is shown as changed."""
    a, b = original or "", adversarial or ""
    if len(a) + len(b) > MAX_DIFF_CHARS:
        return [s for s in (["-", _clip(a)], ["+", _clip(b)]) if s[1]]
    lead_a, lead_b = _lead(a), _lead(b)
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    out: list[list[str]] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if out and out[-1][0] == op:
            out[-1][1] += text
        else:
            out.append([op, text])

    def space(x: str, y: str) -> None:
        if x == y:
            add("=", x)
        else:
            add("-", x)
            add("+", y)

    space(lead_a, lead_b)
    sm = difflib.SequenceMatcher(None, [w for w, _ in wa], [w for w, _ in wb], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for (word, sp_a), (_, sp_b) in zip(wa[i1:i2], wb[j1:j2]):
                add("=", word)
                space(sp_a, sp_b)
        else:
            add("-", "".join(w + sp for w, sp in wa[i1:i2]))
            add("+", "".join(w + sp for w, sp in wb[j1:j2]))
    return out


def _clip(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    return text[:MAX_SHOWN_CHARS] + f" … [{len(text) - MAX_SHOWN_CHARS:,} more characters in examples.parquet]"


def script_json(obj: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: ``<``, ``>``, ``&`` and the JavaScript line
    separators are written as ``\\uXXXX`` escapes, so ``</script>`` or ``<!--`` in the data cannot end or
    change the element (HTML parses the element's text before JSON.parse sees it)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _plain(v: Any) -> Any:
    if v is None or (isinstance(v, float) and v != v):
        return None
    if hasattr(v, "item"):
        v = v.item()
    return v


def _from_meta(meta: Any) -> dict[str, str]:
    """What a reader needs from an example's meta to judge it: the perturbed question (AddSent) and the added
    distractor (Jia & Liang's adversaries), when the attack recorded them."""
    try:
        m = json.loads(meta) if isinstance(meta, str) else {}
    except ValueError:
        return {}
    return {k: str(m[k]) for k in ("perturbed_question", "distractor") if isinstance(m.get(k), str)}


def _verdict(v: Any) -> bool | None:
    """An example's verdict as read back (None: not judged, or a run written before verdicts)."""
    return None if v is None or (isinstance(v, float) and v != v) else bool(v)


def _telling(group: pd.DataFrame) -> pd.Series:
    """Sort key per row, larger = more telling: a score that rose most / fell least, or an answer that is not
    the original one."""
    if group["adv_score"].notna().any():
        if group["orig_score"].isna().all():  # generated answers: the highest score is the most telling
            return group["adv_score"].fillna(-1e9)
        return (group["adv_score"] - group["orig_score"]).fillna(-1e9)
    changed = group["adv_answer"].astype(str) != group["orig_answer"].astype(str)
    return changed.astype(float)


def _read(path: Path, columns: Sequence[str], ids: list[str] | None = None) -> pd.DataFrame:
    """``columns`` of examples.parquet (a column the file lacks is empty), all rows or those of ``ids``. The rows of
    ``ids`` are taken one row group (one chunk) at a time, so memory holds one chunk's columns and the matches,
    not every example's texts at once (a 200,000-record run: docs/scale-out.md)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:
        cols = [c for c in columns if c in set(f.schema_arrow.names)]
        if ids is None:
            df = f.read(columns=cols).to_pandas()
        else:
            wanted = pa.array(sorted(set(ids)), type=pa.string())
            parts = []
            for i in range(f.num_row_groups):
                if not len(wanted):
                    break
                key = f.read_row_group(i, columns=["example_id"]).column(0).cast(pa.string())
                mask = pc.is_in(key, value_set=wanted)
                if pc.any(mask).as_py():
                    parts.append(f.read_row_group(i, columns=cols).filter(mask))
            schema = f.schema_arrow
            df = (pa.concat_tables(parts) if parts else
                  pa.schema([schema.field(c) for c in cols]).empty_table()).to_pandas()
    for c in columns:
        if c not in df.columns:
            df[c] = None
    return df


def _stratified(g: pd.DataFrame, seed: int) -> list[str]:
    """The example ids of one configuration in sampling order (see the module docstring): strata fooled /
    robust / not judged, each in seeded order taken in turn from each prompt, merged in proportion."""
    strata: dict[int, list[str]] = {}
    for stratum, rows in g.groupby("_stratum", sort=True):
        by_prompt: dict[str, list[str]] = {}
        for eid, pid in sorted(zip(rows["example_id"].astype(str), rows["prompt_id"].astype(str)),
                               key=lambda x: derive_seed(seed, "report", x[0])):
            by_prompt.setdefault(pid, []).append(eid)
        queues = [by_prompt[p] for p in sorted(by_prompt, key=natural_prompt)]
        order: list[str] = []
        for i in range(max(len(q) for q in queues)):
            order.extend(q[i] for q in queues if i < len(q))
        strata[int(stratum)] = order
    total = sum(len(v) for v in strata.values())
    taken = dict.fromkeys(strata, 0)
    out: list[str] = []
    while len(out) < total:
        k = max((s for s in strata if taken[s] < len(strata[s])),
                key=lambda s: (len(strata[s]) * (len(out) + 1) / total - taken[s], -s))
        out.append(strata[k][taken[k]])
        taken[k] += 1
    return out


def natural_prompt(p: str) -> tuple[int, float, str]:
    try:
        return (0, float(p), "")
    except ValueError:
        return (1, 0.0, p)


def sample_examples(run_dir: str | Path, per_attack: int,
                    seed: int) -> tuple[list[dict[str, Any]], dict[str, int], int]:
    """Up to ``per_attack`` examples per (attack, params) as browser items (fewer when the run has so many
    configurations that :data:`MAX_EMBEDDED` or :data:`MAX_EMBEDDED_BYTES` would be exceeded; see the module
    docstring), the total example count per attack label (what the page says it sampled from), and the largest
    number shown for one configuration. The texts are read for the candidate examples only (a first pass reads
    the ids, attacks, prompts and verdicts)."""
    path = Path(run_dir) / "examples.parquet"
    if per_attack <= 0 or not path.exists():
        return [], {}, 0
    index = _read(path, ("example_id", "attack", "params", "source_id", "prompt_id", "verdict"))
    if not len(index):
        return [], {}, 0
    verdicts = index["verdict"].map(_verdict)
    fooled_ids = set(index["example_id"][verdicts == False])  # noqa: E712
    judged_ids = set(index["example_id"][verdicts.notna()])
    index = index.drop_duplicates("example_id").copy()
    index["_stratum"] = [0 if e in fooled_ids else 1 if e in judged_ids else 2 for e in index["example_id"]]
    groups = index.groupby(["attack", "params"], sort=True)
    per_attack = min(per_attack, max(MIN_PER_ATTACK, MAX_EMBEDDED // max(1, groups.ngroups)))
    totals: dict[str, int] = {}
    chosen_ids: dict[tuple[str, str], list[str]] = {}
    for (attack, params), g in groups:
        totals[f"{attack} {short_params(params, attack)}"] = len(g)
        chosen_ids[(attack, params)] = _stratified(g, seed)[:per_attack]
    generated = {k: bool(g["source_id"].astype(str).str.startswith("prompt:").all()) for k, g in groups}
    df = _read(path, COLUMNS, [i for ids in chosen_ids.values() for i in ids])
    by_config = dict(iter(df.groupby(["attack", "params"], sort=True)))
    configs = sorted(chosen_ids, key=lambda k: (generated[k], k))  # generators after the rest
    rows_of = {key: {eid: rows for eid, rows in by_config[key].groupby("example_id", sort=False)}
               for key in configs if key in by_config}
    ranked = {key: [eid for eid in chosen_ids[key] if eid in rows_of.get(key, {})] for key in configs}

    def make(key: tuple[str, str], eid: str) -> dict[str, Any]:
        return _item(str(key[0]), str(key[1]), eid, rows_of[key][eid])

    kept = _within_budget(ranked, configs, make)
    items: list[dict[str, Any]] = []
    for key in configs:
        items.extend(sorted(kept[key], key=lambda it: (not it["fooled"], -it.pop("_telling"), it["example_id"])))
    return items, totals, max((len(v) for v in kept.values()), default=0)


def _within_budget(ranked: dict[tuple[str, str], list[str]], configs: Sequence[tuple[str, str]],
                   make: Callable[[tuple[str, str], str], dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The items of each configuration's ranked example ids, cut so that their JSON stays within
    :data:`MAX_EMBEDDED_BYTES`: taken in rounds (rank 0 of every configuration, then rank 1, ...); the first of
    each is always kept and a configuration whose next item does not fit takes no more (each keeps a prefix of
    its stratified order). Items are made (``make``: texts, word diff) only as they are taken."""
    kept: dict[tuple[str, str], list[dict[str, Any]]] = {k: [] for k in configs}
    open_ = set(configs)
    used = 0
    for rank in range(max((len(v) for v in ranked.values()), default=0)):
        for key in configs:
            if key not in open_ or rank >= len(ranked[key]):
                continue
            item = make(key, ranked[key][rank])
            size = len(script_json({k: v for k, v in item.items() if k != "_telling"}).encode("utf-8"))
            if rank == 0 or used + size <= MAX_EMBEDDED_BYTES:
                kept[key].append(item)
                used += size
            else:
                open_.discard(key)
    return kept


def _item(attack: str, params: str, eid: Any, rows: pd.DataFrame) -> dict[str, Any]:
    """One browser item: the example's texts as a word diff and every target's outputs."""
    first = rows.iloc[0]
    label = f"{attack} {short_params(params, attack)}"  # non-default parameters; provenance has them all
    return {
        "attack": attack, "label": label, "params": short_params(params, attack),  # all of them: run.json
        "example_id": str(eid), "source_id": _plain(first["source_id"]),
        "prompt": _plain(first["prompt_id"]), "index": _plain(first["index"]),
        "field": _plain(first["field"]) or "text", "gold": _plain(first["gold"]),
        "gold_answers": " | ".join(gold_list(first["gold_answers"])) or None,
        "question": _plain(first["question"]), **_from_meta(first["meta"]),
        "diff": word_diff(first["original_text"], first["adversarial_text"]),
        "generated": first["original_text"] is None,
        "fooled": bool((rows["verdict"] == False).any()),  # noqa: E712
        "_telling": float(_telling(rows).max()),
        "out": [{"target": str(r["target"]), "orig_score": num(r["orig_score"]),
                 "adv_score": num(r["adv_score"]), "orig_answer": _plain(r["orig_answer"]),
                 "adv_answer": _plain(r["adv_answer"]),
                 "error": _plain(r["adv_error"]) or _plain(r["orig_error"]),
                 "queries": _plain(r["queries"]), "verdict": _verdict(r["verdict"])}
                for _, r in rows.iterrows()],
    }
