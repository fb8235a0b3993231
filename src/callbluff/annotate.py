"""Human evaluation round trip: annotation sheets from a run, and the papers' human figures from filled sheets.

Two kinds of sheet (``callbluff annotate export RUN --kind scoring|comprehension``):

- **scoring** (Kumar et al. 2020, Sec. 4.1 / Table 6): annotators score an original response and its adversarial
  version. This is the paper's second group ("we ask them to score both the original and adversarial
  responses"); the two responses of a pair appear as A and B in a random order, the items in a random order,
  and the key (which one is adversarial, which example) stays in the run directory, never on the sheet. Import
  gives, per attack and overall, the % of judgements that scored the adversarial response lower (Table 6's
  "% People" lower) and higher, and the mean score change (adversarial - original) as % of the prompt's score
  range (Table 6's "Score %" reports the size of the lowering; ours is signed: negative = lowered). A judgement
  is one (annotator, item); with every annotator scoring every item, the % of judgements is the mean over items
  of the % of annotators.
- **comprehension** (DPAEG Sec. 4.2.2 / Table 6): annotators say whether they understand each adversarial
  question (yes/no) and write what it asks. A participant's comprehension rate is ``N_understood / N`` (in %);
  import gives its minimum, maximum and mean over annotators, overall and per attack. The free-text answers are
  kept in the results for a reviewer (the paper counts questions "understood correctly"; checking the meaning is
  left to that reviewer).

- **addsent** (Jia & Liang 2017, Sec. 3.1 step 4, the crowd's verification round): for AddSent / AddOneSent
  examples of a reading run, annotators read the question and the added sentence and answer two yes/no
  questions: is the sentence grammatical, and does it answer the question (would a reader of the sentence alone
  take its fake answer as the answer to this question)? A sentence is **accepted** when it is grammatical and
  does not answer the question, by the majority of its annotators (a tie rejects; the authors kept sentences that
  their workers' majority approved). Import gives, per attack and overall, the share judged grammatical, the share
  judged to answer the question and the acceptance rate, lists the rejected examples, and writes the accepted
  ones (every target's rows) to ``RUN/annotations/addsent_verified.parquet``: the verified set, rejected sentences
  dropped.

Sampling is deterministic: the ``n`` examples with the smallest ``derive_seed(seed, "annotate", kind, id)``
(distinct example ids; one text per example whatever the number of targets). Files: ``--out FILE.csv`` and
``FILE.html`` (a printable form), the key in ``RUN/annotations/SHEET.key.json``; import writes
``RUN/annotations/results.json``, which the report shows.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from callbluff.attacks.base import get_attack
from callbluff.datasets import load
from callbluff.report.load import ANNOTATIONS_FILE
from callbluff.seeding import derive_seed
from callbluff.tasks import get_task

KINDS = ("scoring", "comprehension", "addsent")
ADDSENT_ATTACKS = ("AddSent", "AddOneSent")
VERIFIED_FILE = "addsent_verified.parquet"
"""The accepted AddSent / AddOneSent examples after an import, in ``RUN/annotations/``."""
SCORING_COLUMNS = ("sheet", "item", "prompt", "score_min", "score_max", "response_a", "response_b", "score_a",
                   "score_b", "annotator")
COMPREHENSION_COLUMNS = ("sheet", "item", "question", "understood", "what_it_asks", "annotator")
ADDSENT_COLUMNS = ("sheet", "item", "question", "sentence", "grammatical", "answers_question", "annotator")
YES = {"yes", "y", "1", "true"}
NO = {"no", "n", "0", "false"}


class AnnotationError(ValueError):
    """A sheet that does not match the run, or a filled sheet with a bad cell: the message names file, row and
    column, and the fix."""


@dataclass(frozen=True)
class Exported:
    sheet: str
    csv: Path
    html: Path
    key: Path
    n: int
    covers: str = ""
    """What the sample covers (:func:`coverage`): attacks and configurations."""


def _annotations_dir(run_dir: Path) -> Path:
    return run_dir / "annotations"


def _prompts(meta: dict[str, Any]) -> dict[str, Any]:
    """The run's prompts (text, rubric, scale) where its dataset loads here; {} otherwise."""
    cfg = (meta.get("suite") or {}).get("dataset") or {}
    spec = cfg.get("spec") or (meta.get("dataset") or {}).get("spec")
    try:
        return dict(load(spec, **(cfg.get("options") or {})).prompts)
    except Exception:  # noqa: BLE001 - a dataset that moved: the sheet goes without prompt texts
        return {}


def _prompt_ranges(prompts: dict[str, Any], examples: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Score range per prompt: the dataset's prompt scale, else the range of the gold and predicted scores seen
    in the run."""
    out = {}
    for pid, g in examples.groupby("prompt_id"):
        p = prompts.get(str(pid))
        if p is not None and p.score_min is not None and p.score_max is not None:
            out[str(pid)] = (float(p.score_min), float(p.score_max))
            continue
        vals = pd.concat([g["gold"], g["orig_score"], g["adv_score"]]).dropna()
        if len(vals):
            out[str(pid)] = (float(vals.min()), float(vals.max()))
    return out


def _sample(examples: pd.DataFrame, n: int, seed: int, kind: str) -> pd.DataFrame:
    """``n`` examples stratified by attack, then by configuration (attack, params), as Kumar et al. asked
    annotators about every attack (Sec. 4.1, Table 6). The attacks take turns in a seeded order (not name order:
    an ``n`` below the number of attacks covers ``n`` attacks drawn by the seed, not the first ones
    alphabetically); within an attack its configurations take turns, also in a seeded order, and within a
    configuration its examples come in a seeded order. So ``n`` items cover ``min(n, attacks)`` attacks, every
    attack gets ``n // attacks`` items or one more (fewer where it has fewer examples), and an attack's items are
    spread over its configurations. A single seeded draw over all examples, or a round-robin over the
    configurations in name order, would leave attacks out."""
    first = examples.drop_duplicates("example_id")

    def order(*parts: str) -> int:
        return derive_seed(seed, "annotate", kind, *parts)

    attacks: list[list[list[str]]] = []
    for attack, g in sorted(first.groupby("attack", sort=True), key=lambda ag: order("attack", str(ag[0]))):
        configs = sorted(g.groupby("params", sort=True), key=lambda pg: order("config", str(attack), str(pg[0])))
        attacks.append([sorted(map(str, c["example_id"]), key=lambda i: order(i)) for _, c in configs])
    queues = [_round_robin(configs) for configs in attacks]
    keys = _round_robin(queues, n)
    return first.assign(example_id=first["example_id"].astype(str)).set_index("example_id").loc[keys].reset_index()


def _round_robin(queues: Sequence[Sequence[str]], n: int | None = None) -> list[str]:
    """The queues' items taken in turns (the first item of each, then the second of each, ...), up to ``n``."""
    out: list[str] = []
    depth = 0
    while (n is None or len(out) < n) and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and (n is None or len(out) < n):
                out.append(q[depth])
        depth += 1
    return out


def coverage(chosen: pd.DataFrame, examples: pd.DataFrame) -> str:
    """What a sample covers, in one sentence: "20 items: 16 of 16 attacks, 20 of 159 configurations (1 or 2 per
    attack)", naming the attacks left out when there are a few."""
    first = examples.drop_duplicates("example_id")
    all_attacks = sorted(set(map(str, first["attack"])))
    got = sorted(set(map(str, chosen["attack"])))
    configs = len(first.groupby(["attack", "params"]))
    got_configs = len(chosen.groupby(["attack", "params"])) if len(chosen) else 0
    per = chosen.groupby("attack").size() if len(chosen) else pd.Series(dtype=int)
    spread = (f"{per.min()}" if per.min() == per.max() else f"{per.min()}-{per.max()}") if len(per) else "0"
    text = (f"{len(chosen)} items: {len(got)} of {len(all_attacks)} attacks ({spread} item"
            f"{'' if spread == '1' else 's'} each), {got_configs} of {configs} configurations")
    missing = [a for a in all_attacks if a not in got]
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        text += f"; not in the sample: {shown} (a larger --n covers them)"
    return text


def export_sheet(run_dir: str | Path, kind: str, n: int, out: str | Path, seed: int = 0) -> Exported:
    """Write a sheet of ``n`` sampled examples as CSV (``out``) and a printable HTML form beside it; keep the
    key in the run directory. Raises :class:`AnnotationError` for an unknown kind or a run without examples."""
    run_dir, out = Path(run_dir), Path(out)
    if kind not in KINDS:
        raise AnnotationError(f"--kind {kind!r}: allowed: {', '.join(KINDS)}")
    if n < 1:
        raise AnnotationError(f"--n {n}: give at least 1 example")
    meta_path = run_dir / "run.json"
    if not meta_path.exists() or not (run_dir / "examples.parquet").exists():
        raise AnnotationError(f"{run_dir}: not a finished run directory (needs run.json and examples.parquet); "
                              f"run `callbluff run SUITE.toml --out {run_dir}` first")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    examples = pd.read_parquet(run_dir / "examples.parquet")
    task = (meta.get("dataset") or {}).get("task")
    if kind == "scoring":
        if task is None or not get_task(task).scoring:
            raise AnnotationError(f"{run_dir}: scoring sheets need a scoring run (essay or content), this one is "
                                  f"{task!r}; use --kind comprehension")
        examples = examples[examples["original_text"].notna()]
        if not len(examples):
            raise AnnotationError(f"{run_dir}: no adversarial example with an original response to compare "
                                  "(prompt-level generators have none)")
    elif kind == "addsent":
        served = {get_attack(name).task for name in ADDSENT_ATTACKS}  # the task AddSent's attacks serve
        if task not in served:
            raise AnnotationError(f"{run_dir}: addsent sheets need a {' or '.join(sorted(served))} run with AddSent "
                                  f"or AddOneSent, this one is {task!r}")
        examples = examples[examples["attack"].isin(ADDSENT_ATTACKS)]
        if not len(examples):
            raise AnnotationError(f"{run_dir}: the run has no AddSent or AddOneSent example; add one of them to the "
                                  "suite's attacks")
    elif not len(examples):
        raise AnnotationError(f"{run_dir}: the run has no adversarial examples")
    chosen = _sample(examples, n, seed, kind)
    fingerprint = str(meta.get("fingerprint", ""))
    sheet = hashlib.sha256(f"{fingerprint}|{kind}|{seed}|{','.join(chosen['example_id'])}".encode()).hexdigest()[:10]
    sheet = f"{kind[:4]}-{sheet}"
    items: list[dict[str, Any]] = []
    key_items: dict[str, dict[str, Any]] = {}
    prompts = _prompts(meta)
    ranges = _prompt_ranges(prompts, examples) if kind == "scoring" else {}
    for k, row in enumerate(chosen.itertuples(index=False), start=1):
        item = f"{k:03d}"
        base = {"example_id": row.example_id, "attack": row.attack, "params": row.params,
                "source_id": row.source_id, "prompt": row.prompt_id}
        if kind == "scoring":
            lo, hi = ranges.get(str(row.prompt_id), (None, None))
            if lo is None or hi is None or hi <= lo:
                raise AnnotationError(f"{run_dir}: no score range known for prompt {row.prompt_id!r}; the dataset "
                                      f"{(meta.get('dataset') or {}).get('spec')} does not load here and the run "
                                      "has no scores to infer it from")
            adversarial_first = derive_seed(seed, "annotate-order", row.example_id) % 2 == 1
            a, b = (row.adversarial_text, row.original_text) if adversarial_first else (row.original_text,
                                                                                     row.adversarial_text)
            items.append({"sheet": sheet, "item": item, "prompt": row.prompt_id, "score_min": _num(lo),
                          "score_max": _num(hi), "response_a": a, "response_b": b, "score_a": "", "score_b": "",
                          "annotator": ""})
            key_items[item] = {**base, "adversarial": "a" if adversarial_first else "b", "score_min": lo,
                               "score_max": hi}
        elif kind == "addsent":
            sentence = json.loads(row.meta).get("distractor") if isinstance(row.meta, str) else None
            if not sentence:
                raise AnnotationError(f"{run_dir}: example {row.example_id} ({row.attack}) has no distractor in its "
                                      "meta; was the run made by an older callbluff? Re-run the suite")
            items.append({"sheet": sheet, "item": item, "question": row.question, "sentence": sentence,
                          "grammatical": "", "answers_question": "", "annotator": ""})
            key_items[item] = {**base, "sentence": sentence}
        else:
            items.append({"sheet": sheet, "item": item, "question": row.adversarial_text, "understood": "",
                          "what_it_asks": "", "annotator": ""})
            key_items[item] = base
    out.parent.mkdir(parents=True, exist_ok=True)
    columns = {"scoring": SCORING_COLUMNS, "addsent": ADDSENT_COLUMNS}.get(kind, COMPREHENSION_COLUMNS)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(items)
    key_dir = _annotations_dir(run_dir)
    key_dir.mkdir(exist_ok=True)
    key = key_dir / f"{sheet}.key.json"
    key.write_text(json.dumps({"sheet": sheet, "kind": kind, "seed": seed, "run_fingerprint": fingerprint,
                               "items": key_items}, indent=2, default=str), encoding="utf-8")
    html = out.with_suffix(".html")
    shown = {str(pid): prompts[str(pid)] for pid in chosen["prompt_id"].dropna().unique() if str(pid) in prompts}
    html.write_text(_form_html(kind, sheet, items, meta, shown), encoding="utf-8")
    return Exported(sheet, out, html, key, len(items), coverage(chosen, examples))


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _form_html(kind: str, sheet: str, items: list[dict[str, Any]], meta: dict[str, Any],
               prompts: dict[str, Any]) -> str:
    from jinja2 import Environment, PackageLoader

    env = Environment(loader=PackageLoader("callbluff.report", "templates"), autoescape=True)
    return env.get_template("annotation_form.html.j2").render(
        kind=kind, sheet=sheet, items=items, name=meta.get("name", ""),
        prompts=[{"id": pid, "text": p.text, "rubric": (p.meta or {}).get("rubric"), "min": p.score_min,
                  "max": p.score_max} for pid, p in sorted(prompts.items())])


# -- import --------------------------------------------------------------------------------------------------
def _read_sheet(path: Path, run_dir: Path, keys: dict[str, dict[str, Any]]) -> list[dict[str, str]]:
    if not path.exists():
        raise AnnotationError(f"{path}: file not found")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        header = reader.fieldnames or []
    if "sheet" not in header or "item" not in header or "annotator" not in header:
        raise AnnotationError(f"{path}: not a callbluff annotation sheet (columns sheet, item, annotator missing; "
                              f"found {', '.join(header) or 'none'}); fill the CSV written by `callbluff annotate "
                              "export`")
    for i, r in enumerate(rows, start=2):
        sheet = (r.get("sheet") or "").strip()
        if sheet not in keys:
            raise AnnotationError(f"{path}: row {i}: sheet {sheet!r} was not exported from {run_dir} (known: "
                                  f"{', '.join(sorted(keys)) or 'none'}); import it into the run it came from")
    return rows


def _score(path: Path, line: int, col: str, value: str | None, lo: float, hi: float) -> float:
    try:
        x = float((value or "").strip())
    except ValueError:
        raise AnnotationError(f"{path}: row {line}, column {col}: {value!r} is not a score; write a number from "
                              f"{_num(lo)} to {_num(hi)}") from None
    if not lo <= x <= hi:
        raise AnnotationError(f"{path}: row {line}, column {col}: {_num(x)} is outside the scale "
                              f"{_num(lo)}-{_num(hi)}")
    return x


def import_sheets(run_dir: str | Path, files: Sequence[str | Path]) -> dict[str, Any]:
    """Read filled sheets (one or more annotators per file), check them against their keys, compute Kumar
    Table 6 (scoring), the DPAEG comprehension rates and the AddSent verification (addsent: also
    ``RUN/annotations/addsent_verified.parquet``), write ``RUN/annotations/results.json`` and return it.
    Every annotator must have judged every item of the sheet, once. An import replaces the previous results:
    give all the filled sheets at once."""
    run_dir = Path(run_dir)
    keys = {p.name[: -len(".key.json")]: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(_annotations_dir(run_dir).glob("*.key.json"))}
    if not keys:
        raise AnnotationError(f"{run_dir}: no exported sheet (annotations/*.key.json); run `callbluff annotate "
                              f"export {run_dir} --kind scoring --n 50 --out sheet.csv` first")
    if not files:
        raise AnnotationError("give the filled sheet files (CSV)")
    judgements: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for f in files:
        path = Path(f)
        for line, r in enumerate(_read_sheet(path, run_dir, keys), start=2):
            sheet = r["sheet"].strip()
            key = keys[sheet]
            item = (r.get("item") or "").strip()
            if item not in key["items"]:
                raise AnnotationError(f"{path}: row {line}: item {item!r} is not on sheet {sheet}")
            annotator = (r.get("annotator") or "").strip()
            if not annotator:
                raise AnnotationError(f"{path}: row {line}: column annotator is empty; write the annotator's name "
                                      "or code on every row")
            k = key["items"][item]
            if key["kind"] == "scoring":
                lo, hi = float(k["score_min"]), float(k["score_max"])
                a = _score(path, line, "score_a", r.get("score_a"), lo, hi)
                b = _score(path, line, "score_b", r.get("score_b"), lo, hi)
                adv, orig = (a, b) if k["adversarial"] == "a" else (b, a)
                value: dict[str, Any] = {"orig": orig, "adv": adv, "range": hi - lo}
            elif key["kind"] == "addsent":
                value = {"grammatical": _yes_no(path, line, "grammatical", r.get("grammatical")),
                         "answers_question": _yes_no(path, line, "answers_question", r.get("answers_question")),
                         "example_id": k["example_id"]}
            else:
                u = (r.get("understood") or "").strip().lower()
                if u not in YES | NO:
                    raise AnnotationError(f"{path}: row {line}, column understood: {r.get('understood')!r}; write "
                                          "yes or no")
                value = {"understood": u in YES, "what_it_asks": (r.get("what_it_asks") or "").strip()}
            got = judgements.setdefault(sheet, {})
            if (annotator, item) in got:
                raise AnnotationError(f"{path}: row {line}: annotator {annotator!r} judged item {item} twice")
            got[(annotator, item)] = {**value, "attack": k["attack"]}
    results: dict[str, Any] = {"sheets": {}}
    for sheet, got in judgements.items():
        items = set(keys[sheet]["items"])
        annotators = sorted({a for a, _ in got})
        for a in annotators:
            missing = sorted(items - {i for b, i in got if b == a})
            if missing:
                raise AnnotationError(f"annotator {a!r} did not judge items {', '.join(missing)} of sheet {sheet}; "
                                      "every annotator judges every item")
        kind = keys[sheet]["kind"]
        results["sheets"][sheet] = {"kind": kind, "annotators": annotators, "items": len(items)}
        if kind == "scoring":
            results.setdefault("scoring", []).extend(
                {"annotator": a, "item": i, **v} for (a, i), v in sorted(got.items()))
        elif kind == "addsent":
            results.setdefault("addsent", []).extend(
                {"annotator": a, "item": f"{sheet}/{i}", **v} for (a, i), v in sorted(got.items()))
        else:
            results.setdefault("comprehension", []).extend(
                {"annotator": a, "item": i, **v} for (a, i), v in sorted(got.items()))
    summary = summarise(results)
    verified = _annotations_dir(run_dir) / VERIFIED_FILE
    if results.get("addsent"):
        accepted = set(summary["addsent_accepted"])
        examples = pd.read_parquet(run_dir / "examples.parquet")
        examples[examples["example_id"].isin(accepted)].reset_index(drop=True).to_parquet(verified)
    elif verified.exists():
        verified.unlink()  # an import replaces the previous results
    out = run_dir / ANNOTATIONS_FILE
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def _yes_no(path: Path, line: int, col: str, value: str | None) -> bool:
    v = (value or "").strip().lower()
    if v not in YES | NO:
        raise AnnotationError(f"{path}: row {line}, column {col}: {value!r}; write yes or no")
    return v in YES


def by_attack(judgements: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The judgements per attack (sorted by name), then all of them as ``"all"``: the rows of every table the
    imported sheets give."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for j in judgements:
        groups.setdefault(j["attack"], []).append(j)
    return [*sorted(groups.items()), ("all", list(judgements))]


def addsent_verification(judgements: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The crowd step's figures (module docstring): per attack (then ``all``) items, annotators, % of
    judgements grammatical, % answering the question, % of items accepted by majority; and the accepted and
    rejected example ids."""
    per_item: dict[str, list[dict[str, Any]]] = {}
    for j in judgements:
        per_item.setdefault(j["item"], []).append(j)
    verdict = {}
    for item, js in per_item.items():
        ok = sum(j["grammatical"] and not j["answers_question"] for j in js)
        verdict[item] = 2 * ok > len(js)
    rows = []
    for attack, js in by_attack(judgements):
        if not js:
            continue
        items = sorted({j["item"] for j in js})
        rows.append({"attack": attack, "n_items": len(items), "n_annotators": len({j["annotator"] for j in js}),
                     "grammatical_pct": 100.0 * sum(j["grammatical"] for j in js) / len(js),
                     "answers_question_pct": 100.0 * sum(j["answers_question"] for j in js) / len(js),
                     "accepted_pct": 100.0 * sum(verdict[i] for i in items) / len(items)})
    ids = {j["item"]: j["example_id"] for j in judgements}
    return {"table": rows, "accepted": sorted(ids[i] for i, v in verdict.items() if v),
            "rejected": sorted(ids[i] for i, v in verdict.items() if not v)}


def kumar_table6(judgements: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per attack (then ``all``): ``n_items``, ``n_annotators``, ``lower_pct`` / ``higher_pct`` (% of
    judgements scoring the adversarial response lower / higher than its original) and ``mean_change_pct``
    (mean of (adversarial - original) / score range x 100)."""
    rows = []
    for attack, js in by_attack(judgements):
        if not js:
            continue
        rows.append({
            "attack": attack, "n_items": len({j["item"] for j in js}),
            "n_annotators": len({j["annotator"] for j in js}), "judgements": len(js),
            "lower_pct": 100.0 * sum(j["adv"] < j["orig"] for j in js) / len(js),
            "higher_pct": 100.0 * sum(j["adv"] > j["orig"] for j in js) / len(js),
            "mean_change_pct": 100.0 * sum((j["adv"] - j["orig"]) / j["range"] for j in js) / len(js),
        })
    return rows


def comprehension_rates(judgements: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per attack (then ``all``): each annotator's comprehension rate (% understood), and their min / max /
    mean (DPAEG Table 6)."""
    rows = []
    for attack, js in by_attack(judgements):
        per: dict[str, list[bool]] = {}
        for j in js:
            per.setdefault(j["annotator"], []).append(bool(j["understood"]))
        rates = {a: 100.0 * sum(v) / len(v) for a, v in per.items()}
        if not rates:
            continue
        rows.append({"attack": attack, "n_items": len({j["item"] for j in js}), "n_annotators": len(rates),
                     "min_pct": min(rates.values()), "max_pct": max(rates.values()),
                     "mean_pct": sum(rates.values()) / len(rates), "per_annotator": rates})
    return rows


def summarise(results: dict[str, Any]) -> dict[str, Any]:
    """The figures and the report's views from the judgements."""
    out: dict[str, Any] = {"sheets": results["sheets"], "views": []}
    if results.get("scoring"):
        table = kumar_table6(results["scoring"])
        out["kumar_table6"] = table
        out["views"].append({
            "title": "Human scoring (Kumar et al. 2020 Table 6 shape)",
            "caption": "Annotators scored each original and adversarial response (shown in random order, keys "
                       "hidden). % lower / higher: judgements that scored the adversarial response lower / higher "
                       "than its original; mean change: (adversarial - original) as % of the score range.",
            "header": ["attack", "items", "annotators", "% lower", "% higher", "mean change %"],
            "rows": [[r["attack"], r["n_items"], r["n_annotators"], r["lower_pct"], r["higher_pct"],
                      r["mean_change_pct"]] for r in table]})
    if results.get("addsent"):
        ver = addsent_verification(results["addsent"])
        out["addsent_verification"] = ver["table"]
        out["addsent_accepted"], out["addsent_rejected"] = ver["accepted"], ver["rejected"]
        out["views"].append({
            "title": "AddSent verification (Jia & Liang 2017 Sec. 3.1 step 4 shape)",
            "caption": "Annotators judged each added sentence: grammatical? does it answer the question? Accepted: "
                       "grammatical and not answering, by majority (a tie rejects). Rejected sentences are dropped "
                       f"from annotations/{VERIFIED_FILE}.",
            "header": ["attack", "sentences", "annotators", "% grammatical", "% answers the question",
                       "% accepted"],
            "rows": [[r["attack"], r["n_items"], r["n_annotators"], r["grammatical_pct"],
                      r["answers_question_pct"], r["accepted_pct"]] for r in ver["table"]]})
    if results.get("comprehension"):
        table = comprehension_rates(results["comprehension"])
        out["comprehension"] = table
        out["comprehension_answers"] = [{k: j[k] for k in ("annotator", "item", "attack", "what_it_asks")}
                                        for j in results["comprehension"]]
        out["views"].append({
            "title": "Comprehension rate (DPAEG Table 6 shape)",
            "caption": "Each annotator's comprehension rate is the % of adversarial questions they understood; "
                       "min / max / mean over annotators.",
            "header": ["attack", "questions", "annotators", "min %", "max %", "mean %"],
            "rows": [[r["attack"], r["n_items"], r["n_annotators"], r["min_pct"], r["max_pct"], r["mean_pct"]]
                     for r in table]})
    return out
