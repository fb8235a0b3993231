"""``callbluff filter fit|apply``: adversarial-answer filters (Ding et al. 2020, Sec. 5.4) on the user's data.

``fit`` learns one filter per prompt of a scored dataset and saves it to a directory (``filter.json`` names
the prompts and thresholds); ``apply`` flags the answers of a dataset (JSON lines: id, prompt, flagged,
value) and refuses prompts the filter was not fitted on. A saved filter also goes in front of any scorer with
``filter = "DIR"`` in a ``[[target]]`` table.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the filters, the data and the tasks are imported
inside the commands.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated

import typer

from callbluff.console import console, fail, out, say
from callbluff.terminal import StageProgress

filter_app = typer.Typer(help="Adversarial-answer filters (Ding et al. 2020 Sec. 5.4): fit on your answers, "
                              "apply to new ones.", no_args_is_help=True)


def _dataset(spec: str, prompts: str | None):
    from callbluff.datasets import load

    if prompts:
        spec += ("&" if "?" in spec else "?") + f"prompts={prompts}"
    try:
        return load(spec)
    except (ValueError, FileNotFoundError, KeyError) as e:
        fail(f"--data {spec}: {e}")
        raise


@filter_app.command("fit")
def fit(
    data: Annotated[str, typer.Option(help="scored training answers, e.g. asap-sas:train.tsv.gz")],
    out_dir: Annotated[Path, typer.Option("--out", help="directory to save the filter to")],
    kind: Annotated[str, typer.Option(help="nonword | unigram-perplexity | plausibility (ours) | injection (ours, "
                                          "for LLM graders: normalisation, rules, then a learned detector of "
                                          "injections trained on a grammar against real texts)")] = "plausibility",
    action: Annotated[str, typer.Option(help="injection filter: what a flagged answer gets: minimum (the scale's "
                                             "minimum) | human (no automatic score: an error row routed to a human)"
                                        )] = "minimum",
    prompts: Annotated[str | None, typer.Option(help="only these prompt ids, e.g. 1,2")] = None,
    seed: Annotated[int, typer.Option(help="seed of the development split and generated answers")] = 0,
    dev_count: Annotated[int, typer.Option(help="generated development answers per generator configuration")] = 40,
    corpus: Annotated[str | None, typer.Option(help="generic corpus of the generic generators (default: SQuAD "
                                                    "Wikipedia paragraphs)")] = None,
    negatives: Annotated[list[str] | None, typer.Option(
        help="injection filter: more real texts for its learned stage (a dataset spec, repeatable), e.g. "
             "asap-aes:training_set_rel3.tsv.gz or squad:dev-v1.1.json.gz; --data's answers and the built-in "
             "demo answers are always used")] = None,
    injections: Annotated[int, typer.Option(help="injection filter: grammar-generated injections its learned stage "
                                                 "trains on")] = 8000,
    rules_only: Annotated[bool, typer.Option("--rules-only", help="injection filter: the rules stage alone (no "
                                                                  "language stage, no learned detector)")] = False,
    no_languages: Annotated[bool, typer.Option("--no-languages", help="injection filter: without the language "
                                               "stage (which flags a sentence in a language none of --data's "
                                               "answers use; for answers that quote other languages)")] = False,
) -> None:
    """Fit a filter per prompt on the answers of --data and save it to --out."""
    from callbluff.defenses.filters import FILTERS
    from callbluff.tasks import get_task

    if kind not in FILTERS:
        fail(f"--kind {kind!r}: use one of {', '.join(sorted(FILTERS))}")
    ds = _dataset(data, prompts)
    if not get_task(ds.task).scoring:
        fail(f"--data {data}: a filter learns from scored answers (task content/essay), not task {ds.task!r}")
    records = ds.records()
    extra: dict[str, object] = {"action": action} if action != "minimum" else {}
    if extra and not hasattr(FILTERS[kind], "transform"):
        fail(f"--action {action!r}: only the injection filter routes answers to a human; --kind {kind} rejects them")
    if (negatives or rules_only or no_languages) and kind != "injection":
        fail("--negatives / --rules-only / --no-languages: options of --kind injection")
    if kind == "injection":
        extra.update({"negatives": list(negatives or []), "learned": not rules_only, "languages": not (rules_only or no_languages),
                      "n_injections": injections})
    try:
        f = FILTERS[kind](seed=seed, dev_count=dev_count, corpus=corpus, **extra)
    except ValueError as e:
        fail(f"--action {action!r}: {e}")
        raise
    n_prompts = len(ds.prompts)
    console.print(f"[{time.strftime('%H:%M:%S')}] filter fit: {'an' if kind[:1] in 'aeiou' else 'a'} {kind} filter on {len(records):,} answers of "
                  f"{n_prompts} prompt{'s' if n_prompts != 1 else ''} ({data}); per prompt: "
                  + ("its development bluffs generated by the attack battery, then the fit" if f.uses_dev
                     else "the fit") + "; loading the attack families first (spaCy: about 20 s)",
                  highlight=False, markup=False, soft_wrap=True)
    try:
        from callbluff.countermeasures.battery import battery, noisy_real  # the attack families (spaCy, torch): not at start-up

        # ours also learns noised real answers as real (and the other prompts' answers as off-topic)
        noise = {"noise": noisy_real} if kind == "plausibility" else {}
        with StageProgress(console) as progress:  # non-terminal output: timestamped lines
            f.fit(records, ds.prompts, battery=battery, progress=progress, **noise)
    except Exception as e:  # noqa: BLE001 - a clear message, not a traceback
        fail(f"filter fit on {data}: {type(e).__name__}: {e}")
    path = f.save(out_dir)
    for pid, s in f.summary().items():
        thr = s.get("threshold")
        out.print(f"prompt {pid}: {s.get('n_fit')} fit / {s.get('n_dev')} development answers, threshold "
                  f"{thr if thr is None or math.isinf(thr) else round(thr, 4)} ({s.get('threshold_from')})"
                  + (f", development ARR {s['dev_arr']} %, recall {s['dev_recall']} %" if "dev_arr" in s else ""),
                  highlight=False)
    prof = next((st.get("languages") for st in getattr(f, "states", {}).values() if st.get("languages")), None)
    if prof is not None:
        from callbluff.defenses.injection_language import describe
        other = ", ".join(describe(g) for g in sorted(prof.guarded)) or "none"
        out.print(f"language stage: {prof.n_fit} answers read; languages besides English guarded (held by at least "
                  f"{100 * prof.min_share:g} % of them): {other}; a sentence in any other language is flagged",
                  highlight=False)
    det = getattr(f, "detector", lambda: None)()
    if det is not None:
        r = det.report
        out.print(f"learned stage: {r['n_real']} real texts, {r['n_injections']} grammar injections "
                  f"({r['n_units']} units); threshold {r['threshold']} chosen out of fold on {r['n_calibration']} "
                  f"answers: {r['real_flagged_oof']} flagged ({r['real_flagged_oof_pct']} %), "
                  f"{r['injections_caught_oof_pct']} % of the grammar's injections caught (templates held out)",
                  highlight=False)
    for e in f.errors:
        say(("skipped:", "yellow"), f" {e}", to=out)
    out.print(f"filter saved: {path}", highlight=False)


@filter_app.command("apply")
def apply(
    filter_dir: Annotated[Path, typer.Option("--filter", help="directory written by `callbluff filter fit`")],
    data: Annotated[str, typer.Option(help="answers to check, e.g. asap-sas:public_leaderboard_rel_2.tsv.gz")],
    out_file: Annotated[Path | None, typer.Option("--out", help="JSON lines file (default: standard output)")] = None,
    prompts: Annotated[str | None, typer.Option(help="only these prompt ids")] = None,
) -> None:
    """Flag the answers of --data with a saved filter (one JSON line per answer)."""
    from callbluff.defenses.filters import load_filter

    try:
        f = load_filter(filter_dir)
    except ValueError as e:
        fail(str(e))
        raise
    ds = _dataset(data, prompts)
    by_prompt: dict[str, list] = {}
    for r in ds:
        by_prompt.setdefault(str(r.prompt_id), []).append(r)
    unknown = sorted(set(by_prompt) - set(f.prompt_ids))
    if unknown:
        fail(f"{filter_dir} was fitted on prompts {f.prompt_ids}, but --data {data} has answers to prompts "
              f"{unknown}: fit a filter on those prompts' answers (or pass --prompts to leave them out)")
    lines = []
    for pid, recs in sorted(by_prompt.items()):
        texts = [r.text for r in recs]
        values, flags = f.values(pid, texts), f.flag(pid, texts)
        lines += [json.dumps({"id": r.id, "prompt_id": pid, "flagged": bool(fl),
                              "value": None if not math.isfinite(v) else round(float(v), 6)})
                  for r, v, fl in zip(recs, values.tolist(), flags.tolist(), strict=True)]
        console.print(f"prompt {pid}: {int(flags.sum())} of {len(recs)} answers flagged", highlight=False)
    text = "\n".join(lines) + ("\n" if lines else "")
    if out_file is None:
        typer.echo(text, nl=False)
    else:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text(text, encoding="utf-8")
        console.print(f"written: {out_file}", highlight=False)
