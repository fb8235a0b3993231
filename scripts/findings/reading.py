"""Findings: the reading-comprehension suite of Jia & Liang 2017 (AddSent, AddOneSent, AddAny, AddCommon) on
SQuAD v1.1 dev, against the shared MiniLM reader (TransformerQA) and the sliding-window baseline.

Run from the repository root:

    .venv/bin/python scripts/findings/reading.py            # the full job (resumes; writes docs/findings/reading.md)
    .venv/bin/python scripts/findings/reading.py --quick    # smoke test: 10 / 5 / 2 / 1 questions
    .venv/bin/python scripts/findings/reading.py --stage write   # only rebuild the document from finished runs

Stages (each skips what is already in ``.findings-cache/reading[-quick]/``; the engine resumes its runs):

1. ``prepare``: a seeded random sample (seed 0) of ``SIZES[0]`` SQuAD v1.1 dev questions, written as a SQuAD
   JSON subset; the first ``SIZES[2]`` of the sample are the AddAny / AddCommon questions, the first ``SIZES[3]``
   those attacked on the sliding-window baseline (its spaCy parse of every adversarial paragraph makes a
   1,000-query search cost minutes per question). Each reader is saved as a ``model.json``.
2. ``run``: the six runs of ``runs()`` through the engine (``callbluff run``'s code path): AddOneSent + AddSent
   on the ``SIZES[0]`` questions against both readers; AddAny + AddCommon (the authors' objective) and AddAny with
   our margin search (``MARGIN_PARAMS``, readers listing ``MARGIN_TOP_K`` spans) on ``SIZES[2]`` questions against
   MiniLM and on ``SIZES[3]`` against the sliding window.
3. ``write``: ``docs/findings/reading.md`` and ``docs/findings/reading/*.svg``.

Heavy (tens of CPU minutes): run under the shared lock,
``flock /tmp/callbluff-heavy.lock nice -n 5 .venv/bin/python scripts/findings/reading.py > /tmp/reading.log 2>&1 &``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from callbluff.tasks.frames import gold_list  # noqa: E402
from callbluff.api import run_suite  # noqa: E402
from callbluff.engine.suite import parse_suite  # noqa: E402
from callbluff.progress import Progress  # noqa: E402
from callbluff.terminal import engine_stages, findings_progress  # noqa: E402

SHARED = Path(os.environ.get("CALLBLUFF_SHARED", REPO.parent / "shared"))
DEV = SHARED / "data" / "squad-v1.1" / "dev-v1.1.json.gz"
MODEL = SHARED / "models" / "minilm-l6-squad"
DOC = REPO / "docs" / "findings" / "reading.md"
FIGURES = REPO / "docs" / "findings" / "reading"
SAMPLE_SEED, RUN_SEED = 0, 0
SIZES = (1000, 1000, 100, 20)
"""Questions per run: AddOneSent/AddSent vs MiniLM, the same vs the sliding window, AddAny/AddCommon vs
MiniLM, the same vs the sliding window (cost: see ``ANY_BUDGET``)."""
QUICK = (10, 5, 2, 1)
TOP_K = 10
"""Ranked spans the MiniLM reader returns: AddAny's expected-F1 objective weighs the top 10, as the authors'
implementation does."""
MARGIN_TOP_K = 50
"""Ranked spans both readers list in the AddAny-margin runs (the same models, saved as ``minilm-top50`` and
``sliding-top50`` but named ``minilm`` and ``sliding`` in the runs): the margin needs a wrong span in the list,
and a confident reader's top 10 are often all variants of the gold span. Chosen on the tuning questions."""
N_SENT = SIZES[0]
PAPER_BIDAF_ENSEMBLE = {"Original": 80.0, "AddOneSent": 46.9, "AddSent": 34.2, "AddAny": 2.7, "AddCommon": 52.6}
"""Jia & Liang 2017, Tables 2-3 (talk slides 19, 41, 49): F1 of the BiDAF ensemble on SQuAD dev."""
PAPER_MATCH_LSTM_SINGLE = {"Original": 71.4, "AddOneSent": 39.0, "AddSent": 27.3, "AddAny": 7.6, "AddCommon": 38.9}
ALL_RUNS = ("sent", "any-margin", "any", "sent-sw", "any-sw", "any-margin-sw")
MARGIN = "AddAny, margin (ours)"
COLUMNS = (("AddOneSent", "AddOneSent", ("sent", "sent-sw")), ("AddSent", "AddSent", ("sent", "sent-sw")),
           ("AddAny", "AddAny", ("any", "any-sw")), ("AddCommon", "AddCommon", ("any", "any-sw")),
           (MARGIN, "AddAny", ("any-margin", "any-margin-sw")))
"""The headline's columns: (label, attack, runs it comes from). AddAny and AddCommon use the authors' objective
(expected F1 over the top spans); the last column is AddAny's search with our margin objective."""
TARGETS = {"AddSent": 34.1, "AddOneSent": 41.2, "AddAny": 10.0, MARGIN: 10.0}
"""The issues' targets for the shared reader (F1, every sampled question counted), and mean target queries per
AddAny question <= 300. AddSent / AddOneSent (issue 26): at most the authors' released AddSent / AddOneSent sets
on the same MiniLM reader, 34.1 / 41.2 F1 on their 1,000 questions (measured by the issue's reviewer)."""
JUDGED = REPO / "scripts" / "findings" / "reading_addsent_judged.csv"
"""The AddSent verification sheet of the ``sent`` run, filled by hand (``callbluff annotate export --kind addsent``,
seed ``JUDGED_SEED``, ``JUDGED_N`` sentences); imported by the write stage when it matches the run."""
JUDGED_SEED, JUDGED_N = 91, 60
"""A fresh sample for issue 37's second-round rules after their third pass (seed 91, never used before; the
earlier sheets, seed 0 with 40 sentences (28 grammatical), seed 37 with 60 (51) and seed 73 with 60 (48), are in
git history)."""
ISSUE37_SHAPING = (
    "Issue 37's rules (wording, fake answers of the question's type, the wider grammar check): the issue named "
    "the kinds of error from sentences of this sample (word order after `last`/`first`, prepositions before "
    "dates, `because of` + a verb or a bare noun), but every rule was written and checked on other questions: "
    "the candidates of SQuAD v1.1 *train* questions, read by the engineer who wrote the rules "
    "(`scripts/findings/reading_addsent_shaping.py`, seed 11, questions 0-849 of its draw, in slices of 150 so "
    "each new rule was read on questions that had not shaped it), and, for coverage and F1 (no sentence, no "
    "attack), the AddSent F1 of the first 126 dev tuning questions (the seed-1 draw minus this sample; "
    "`scripts/findings/reading_tuning.py --attack AddSent`): the previous rules F1 27.3 over every question on "
    "its first 70 (67 attacked); the first version of the new rules 35.9 (56 attacked), above the goal, which led "
    "to the coverage repairs (do-support found from a verb the parser mis-tagged, a quoted title's question mark, "
    "a fronted preposition said once, agreement judged by the verb's word): 109 of the 126 then get a sentence "
    "(candidate pools only; F1 not re-measured there). Larger pools (6 kept of 16, 3 variants, 3 fake answers) "
    "gave 34.8 on the same 70 and were not taken. Nothing was chosen on this sample: the run above is the first "
    "with these rules, and the judged sheet was drawn after it. Issue 37's second round (the conversion checked "
    "against its question's parse, the phrase-level checks, slot-fitting alterations, dates keeping their affixes) "
    "was shaped on the *kinds* of error the seed-37 hand check listed (its nine rejected sentences are quoted "
    "below; no rule matches them) and written and read on fresh slices of the same SQuAD train draw (questions "
    "850-1349, in slices of 200, 150 and 150); its coverage there, candidate pools only, went from 532 to 508 of "
    "the 650 questions 850-1499, each lost question read (all made a sentence a careful writer would not). The "
    "AddOneSent golden test (the first 60 questions of this sample) was regenerated after the rules were frozen "
    "and was not used to shape them. A third pass (commit 626c5f1) followed the seed-73 hand check of these rules "
    "(48 of 60, below): it was shaped on the *kinds* of error that check listed and read on the same train "
    "slices (coverage there 508 -> 505 of 650), the run above is the first with it, and its sheet (seed 91) was "
    "drawn after it.")
"""What shaped issue 37's AddSent rules (disclosed in the document)."""
LM_NOTE = (
    "What was measured of issue 37's four parts: the conversion fixes, the fake answers and the grammar check "
    "through the hand-judged sheet below (the sentences a reader gets, whichever scorer kept them) and the F1 "
    "figures above; the language-model ranking was not measured apart: on 100 SQuAD train questions (shaping "
    "draw, questions 750-849, an earlier version of the rules) it changed the kept set of 19 questions, mostly "
    "between wordings a reader accepts alike ('a hamster' / 'hamsters', one perturbed name for another), "
    "sometimes for the better ('meet the requirements of a hamster' over 'meet a hamster'), read but not "
    "counted; no hand judgment compares the two rankings.")
"""What was measured of the language-model ranking (written into the document)."""
JUDGED_WHO = (
    "the engineer who wrote issue 37's second-round rules (an AI agent session of the project, not the session "
    "that judged the seed-37 sheet; one annotator) read each of the "
    f"{JUDGED_N} sentences beside its question, after the run and after the rules were frozen, and wrote the "
    "judgments into the exported sheet by hand: grammatical = a well-formed English sentence (word order, "
    "agreement, articles, prepositions, punctuation, word forms), whatever its meaning (invented names and odd "
    "facts are the attack's point), an error carried over from the question counting against it; answers the question = a reader of the sentence alone would take its fake answer as the "
    "answer to the *original* question")
"""Who judged the sheet and how (written into the document)."""
JUDGED_NOTES = (
    "47 of the 60 sentences are grammatical (78%; AddSent 21 of 30, AddOneSent 26 of 30): **the goal of 90% is not "
    "met**; three fresh samples of issue 37's rules have now read 85% (seed 37), 80% (seed 73) and 78% (seed 91), "
    "the last two by a stricter judge than the first. None answers its question. The 13 rejected: a slot or word "
    "order the conversion got wrong (7: 'The Classical branch off to formed a hamster in Vienna.', 'The name of "
    "the husband was Stark Industries arranged for Dalek by his mother.', 'Learning can rubisco do by "
    "confusion.', 'Rather than Ancient numerals, the FIFA decided a hamster to use.', 'Poland was Jeff Dean under "
    "the administration of when it came under the rule of the General Presidente.', 'Students enrol the payout of "
    "Stark Industries in priority courses receive.', and 'Jeff Dean sororities belong to ...' (how many + a name)); "
    "an alteration that breaks a word form or a phrase (3: 'non nonviolent', 'in the Catholicism', 'an alter in "
    "an organization'); errors carried over from the question (3: 'The Finite Lords asks' from 'does the Ten "
    "Commandments ask', 'allies of English' from 'allies of French', 'The two treaties of Treaty of Rome 1882 "
    "...'). Accepted though odd: misspellings the question carries ('reformilated ... equtions'), meanings "
    "('Chloroplasts are a hamster.', 'in China in Glasgow'). What is left, by kind: the conversion still follows "
    "a misparsed question in about one sentence in nine (a check that the sentence's own parse puts the answer "
    "where the question's wh-phrase was would reject most of these); alterations need a check of the new word's "
    "part of speech and article use in its slot; the question's own errors pass through (the paper's crowd fixed "
    "them by hand).")
"""What the judge found in the sheet (filled after judging; written into the document)."""
SEED73_JUDGED = (
    "The hand check before this one (issue 37's second-round rules as first frozen, commit eee7d62; run `sent` of "
    "2026-11-28 02:17 UTC, 774 of 1000 attacked, F1 every question 30.9; seed 73, sheet adds-3662b0a506, the same "
    "annotator and procedure): " +
    "48 of the 60 sentences are grammatical (80%; AddSent 25 of 30, AddOneSent 23 of 30): **the goal of 90% is not "
    "met**, and the figure is below the previous check's 85% (seed 37; different sentences, and this judge was "
    "stricter with errors the question itself carries than that check's judge, another session). None answers its question. The 12 rejected: errors "
    "carried over from the question (4: a comma splice 'Small predators ... include the jaguar, cougar, and "
    "anapanasati, one other example is a hamster.', 'added to party', 'a low supply of nonworker', 'The FDNY ferry "
    "serviced to Finland case operation in end of October 1956.' from a question with 'case' for 'cease'); word "
    "order or slot the conversion got wrong (5: 'The Crusaders stayed the hotel of Chicago in during Best Bowl "
    "51.', 'Refusing to preach the Finite Lords not does learning.', 'He claimed the nonmechanical energy could be "
    "transmitted a hamster.' (how far + a noun), 'Hamsters until the Premier Accountancy is upgraded, if "
    "requirements are met.' (how long + a noun: no verb), 'The Teams stayed in the city's Corona of China.' (a "
    "possessive wh-phrase)); a subject ending in a comma from a malformed question ('David Patrick rapper name, "
    "was Central Park as known by the public.'); an alteration that breaks a form ('single Klavern' cycles': a "
    "possessive apostrophe kept after a new word not ending in s; 'CEO blocked oil deliveries ...': a name "
    "replaced by a bare common noun). The judge counted odd meanings as grammatical ('Berlin's three empty "
    "brothers were Jeff Dean.', 'Aliens happened to his crabs in the accident.', 'the EDC ranks as the smallest "
    "hamsters').")
"""The seed-73 check (its sheet is in git history, commit 5869786)."""
PREVIOUS_JUDGED = SEED73_JUDGED + " " + (
    "The check before that (issue 37's first-round rules, run `sent` of 2026-11-27, seed 37, sheet "
    "adds-8ddfbafbd5, the same procedure, judged by the agent session that wrote those rules): 51 of 60 grammatical (85%; AddSent 26 of 30, AddOneSent "
    "25 of 30), none answering; its 9 rejected sentences: question word order the parser misread and the "
    "conversion kept (5: 'Impact is melt aliens that some samples of beach rocks show.', 'Pharmacy engineers "
    "formerly limited to were the responsibilities of hamsters.', 'Christopher Clark torn his OBJECTION in his "
    "career had 10 times.' and two more), phrase-level errors (3: 'many of hamsters', 'in least types of', '10% of "
    "percentage of Australia's land') and an adjective that takes no infinitive ('A hamster was destabilizing to "
    "reconcile ...'). Before issue 37's rules, one engineer read 40 sentences of this sample's previous runs (seed 0, sheet "
    "adds-4dd483c62a): 28 grammatical (70%), none answering; the issue's own reviewer read 30 AddSent sentences: 21 "
    "grammatical.")
"""The hand checks of the previous rules (their sheet is in git history)."""


def load_avg() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def prepare(cache: Path, n_sent: int) -> dict[str, Any]:
    cache.mkdir(parents=True, exist_ok=True)
    subset = cache / f"dev-sample-{n_sent}.json"
    if not subset.exists():
        with gzip.open(DEV, "rt", encoding="utf-8") as f:
            data = json.load(f)
        flat = [(a, p, q) for a, art in enumerate(data["data"]) for p, para in enumerate(art["paragraphs"])
                for q in range(len(para["qas"]))]
        pick = np.random.default_rng(SAMPLE_SEED).choice(len(flat), size=n_sent, replace=False)
        order = [flat[int(i)] for i in pick]
        # one article per question keeps the sample's order in the file (the loader streams in file order)
        out = {"version": "1.1", "data": []}
        for a, p, q in order:
            art, para = data["data"][a], data["data"][a]["paragraphs"][p]
            out["data"].append({"title": art["title"], "paragraphs": [{"context": para["context"],
                                                                        "qas": [para["qas"][q]]}]})
        subset.write_text(json.dumps(out), encoding="utf-8")
    from callbluff.models.qa import SlidingWindowQA, TransformerQA

    readers = {"minilm": TransformerQA(MODEL, num_threads=2, top_k=TOP_K), "sliding": SlidingWindowQA(),
               "minilm-top50": TransformerQA(MODEL, num_threads=2, top_k=MARGIN_TOP_K),
               "sliding-top50": SlidingWindowQA(top_k=MARGIN_TOP_K)}
    for folder, reader in readers.items():  # saved once; again when the reader's settings change
        meta = cache / folder / "model.json"
        if not meta.exists() or json.loads(meta.read_text()).get("fingerprint") != reader.fingerprint:
            reader.save(cache / folder)
    return {"subset": subset}


def suite(name: str, subset: Path, limit: int, targets: list[tuple[str, str]], attacks: list[dict[str, Any]],
          cache: Path) -> Any:
    """One run's suite; ``targets`` are (name in the results, folder of the saved reader in ``cache``)."""
    data = {
        "name": name, "seed": RUN_SEED, "limit": limit,
        "dataset": {"spec": f"squad:{subset}"},
        "target": [{"name": t, "type": "model", "path": str(cache / d)} for t, d in targets],
        "attack": attacks,
        "output": {"chunk_size": 100, "batch_size": 64, "search_concurrency": 4, "report": False,
                   "cache": str(cache / "predictions.sqlite")},
    }
    return parse_suite(data, source=name, base_dir=cache)


ANY_BUDGET = 600
"""Query budget per AddAny / AddCommon question in this run (the attack's default is 1,000 with 2 restarts).
Chosen on the tuning questions (``TUNING``), not on the findings sample: there, budgets of 600 and 1,000 gave
the same F1, and the reader answers ~10-20 queries/s on this machine, so 1,000-query searches on the unbroken
questions would cost most of the run's time for nothing."""
MARGIN_BUDGET = 1200
"""Query budget per question of the AddAny-margin run, chosen on the tuning questions (``MARGIN_BUDGETS``)."""
MARGIN_PARAMS = {"objective": "margin", "candidates": 10}
"""The AddAny-margin run's search, chosen on the tuning questions (see the disclosure section): our margin
objective, and 10 random common words per index, the authors' implementation's default (``--sample-num 10``;
the report's pseudo-code and the issue say 20), with the readers listing ``MARGIN_TOP_K`` spans."""
TUNING_N, TUNING_MARGIN_F1, TUNING_MARGIN_QUERIES, TUNING_AUTHORS_F1 = 100, 4.5, 196.3, 13.2
"""Tuning-question figures (``scripts/findings/reading_tuning.py``; see the disclosure section)."""
MARGIN_BUDGETS = ((1000, 5.9, 184.7, 7), (1200, 4.5, 196.3, 5), (1500, 4.5, 209.8, 5), (2000, 3.5, 218.3, 4))
"""The margin search (``MARGIN_PARAMS``) on the 100 tuning questions by budget: (budget, F1, mean queries, not
fooled). Measured at 1,000 on all of them, then its 7 unfooled questions re-run at 2,500 (a search is
deterministic per seed, so a smaller budget is a prefix of it; the searches of 3 ended before 2,500, their
mega-epochs spent); a question not fooled within a budget keeps its F1 at 1,000."""
TUNING_DROPPED = (
    "a fresh mega-epoch after every epoch (epochs 1, restarts 20; margin objective, 20 random words, top-10 spans, "
    "budget 1,000): on the first 45 tuning questions 11 not fooled, where 3 epochs per mega-epoch left 7 with "
    "only 600 queries (stopped there: progress builds up over epochs, and a restart throws it away); with the "
    "authors' objective on 15 hard tuning questions, top-20 spans in the objective (2 of 15 fooled) and 10 "
    "random words per index (3 of 15).")
"""Settings tried on the tuning questions and not kept (disclosed in the document)."""
TUNING = ("SQuAD dev questions disjoint from the findings sample (a seed-1 sample with the seed-0 sample "
          "removed), against the same reader (top-10 spans; top-50 for the margin search)")
"""Where the AddAny search settings were chosen (disclosed in the document)."""


SENT_PARAMS: dict[str, Any] = {"fluency": "structural"}
"""AddSent / AddOneSent parameters of the ``sent`` runs: the structural ranking (the candidates that pass the check,
in generation order). Issue 37's run: the language model's ranking (``fluency="auto"``, llama.cpp in a child
process) scored every question's passing candidates on this loaded shared machine at about one question per
second, which would have pushed the run past the session's deadline; it is left out here and its effect not
measured on this sample (``LM_NOTE``). Remove the key to rank with the model where installed."""

Run = tuple[tuple[tuple[str, str], ...], list[dict[str, Any]], int]
"""A run: (targets as (name, saved-reader folder), attack tables, questions)."""


def runs(sizes: tuple[int, int, int, int]) -> dict[str, Run]:
    """The runs, in order of importance (a run cut short by the deadline loses the least)."""
    any_attacks = [{"name": "AddAny", "query_budget": ANY_BUDGET}, {"name": "AddCommon", "query_budget": ANY_BUDGET}]
    margin = [{"name": "AddAny", "query_budget": MARGIN_BUDGET, "params": dict(MARGIN_PARAMS)}]
    minilm, sliding = ("minilm", "minilm"), ("sliding", "sliding")
    return {
        "sent": ((minilm,), [{"name": "AddOneSent", "params": dict(SENT_PARAMS)},
                             {"name": "AddSent", "params": dict(SENT_PARAMS)}], sizes[0]),
        "any-margin": ((("minilm", "minilm-top50"),), margin, sizes[2]),
        "any": ((minilm,), any_attacks, sizes[2]),
        "sent-sw": ((sliding,), [{"name": "AddOneSent", "params": dict(SENT_PARAMS)},
                                 {"name": "AddSent", "params": dict(SENT_PARAMS)}], sizes[1]),
        "any-sw": ((sliding,), any_attacks, sizes[3]),
        "any-margin-sw": ((("sliding", "sliding-top50"),), margin, sizes[3]),
    }


def run(cache: Path, subset: Path, sizes: tuple[int, int, int, int], deadline: str | None = None,
        after_each: Any = None, progress: Progress | None = None, only: set[str] | None = None) -> list[str]:
    """Run what is not finished, most important first; a run is not started after ``deadline`` (HH:MM, machine
    time), so a shared machine's deadline cuts the least important runs. ``after_each()`` is called after each
    run (the document is rewritten, so a cut job still leaves a consistent document). ``progress`` hears the
    runs done (stage ``runs``) and each run's questions. ``only``: the run keys to compute in this invocation
    (None: all). Returns skipped runs."""
    timing_path = cache / "timings.json"
    timings = json.loads(timing_path.read_text()) if timing_path.exists() else {}
    skipped = []
    plan = runs(sizes)
    for k, (key, (targets, attacks, n)) in enumerate(plan.items()):
        if progress is not None:
            progress("runs", k, len(plan))
        out = cache / f"run-{key}"
        if (out / "metrics.json").exists() and key in timings:
            continue
        if only is not None and key not in only:
            continue
        if deadline and time.strftime("%H:%M") >= deadline:
            print(f"[reading] past the deadline {deadline}: run {key} not started", flush=True)
            skipped.append(key)
            continue
        s = suite(f"reading-{key}", subset, n, list(targets), attacks, cache)
        t0, load0 = time.time(), load_avg()
        print(f"[reading] run {key}: {n} questions, targets {[f'{t} ({d})' for t, d in targets]}", flush=True)
        run_suite(s, out, workers=1, progress=None if progress is None else
                  engine_stages(progress, f"run {key} ({'/'.join(a['name'] for a in attacks)})", s.output.chunk_size, n))
        timings[key] = {"seconds": round(time.time() - t0, 1), "load_before": load0, "load_after": load_avg(),
                        "questions": n}
        timing_path.write_text(json.dumps(timings, indent=1))
        if after_each is not None:
            after_each()
    if progress is not None:
        progress("runs", len(plan), len(plan))
    return skipped


# -- write -------------------------------------------------------------------------------------------


def _rows(cache: Path) -> list[dict[str, Any]]:
    rows = []
    for key in ALL_RUNS:
        p = cache / f"run-{key}" / "metrics.json"
        if p.exists():
            m = json.loads(p.read_text())
            t = cache / f"run-{key}" / "timings.json"  # the searches' wall time (not in metrics.json)
            secs = {(x["target"], x["attack"], x["params"]): x["seconds_mean"]
                    for x in (json.loads(t.read_text()) if t.exists() else [])}
            for r in m["rows"] if isinstance(m, dict) else m:
                extra = {"seconds_mean": secs[k]} if (k := (r.get("target"), r.get("attack"), r.get("params"))) in secs \
                    else {}
                rows.append({**r, **extra, "run": key})
    return rows


def _examples(cache: Path) -> pd.DataFrame:
    parts = [pd.read_parquet(cache / f"run-{k}" / "examples.parquet").assign(run=k) for k in ALL_RUNS
             if (cache / f"run-{k}" / "examples.parquet").exists()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _originals(cache: Path) -> pd.DataFrame:
    parts = [pd.read_parquet(cache / f"run-{k}" / "originals.parquet").assign(run=k) for k in ALL_RUNS
             if (cache / f"run-{k}" / "originals.parquet").exists()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _fmt(v: Any, nd: int = 1) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "n/a"
    return f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def _all_question_f1(ex: pd.DataFrame, orig: pd.DataFrame, attack: str, target: str) -> tuple[float, int, int]:
    """F1 over ALL questions of the run: attacked questions score their worst adversarial F1, the others (no
    AddSent sentence: no wh-phrase, no alteration, or no candidate passing the check) keep their clean F1, as a
    question the adversary cannot touch."""
    from callbluff.metrics.reading import f1_score

    o = orig[(orig["target"] == target)].drop_duplicates("source_id")
    g = ex[(ex["attack"] == attack) & (ex["target"] == target)]
    worst: dict[str, float] = {}
    for sid, ans, gold in zip(g["source_id"], g["adv_answer"], g["gold_answers"]):
        if isinstance(ans, str):
            worst[sid] = min(worst.get(sid, 1.0), f1_score(ans, gold_list(gold)))
    scores = []
    for sid, ans, gold in zip(o["source_id"], o["answer"], o["gold_answers"]):
        if sid in worst:
            scores.append(worst[sid])
        elif isinstance(ans, str) and gold_list(gold):
            scores.append(f1_score(ans, gold_list(gold)))
    return 100.0 * float(np.mean(scores)) if scores else float("nan"), len(worst), len(o)


def _curve(ex: pd.DataFrame, attack: str, target: str, max_q: int) -> np.ndarray:
    """Mean best-so-far F1 (percent) over questions after q target queries, q = 0..max_q (from meta history)."""
    g = ex[(ex["attack"] == attack) & (ex["target"] == target)]
    curves = []
    for meta, orig_ans, gold in zip(g["meta"], g["orig_answer"], g["gold_answers"]):
        from callbluff.metrics.reading import f1_score

        hist = json.loads(meta).get("history", [])
        start = f1_score(orig_ans, gold_list(gold)) if isinstance(orig_ans, str) else 1.0
        c = np.full(max_q + 1, start)
        for q, f in hist:
            c[min(int(q), max_q):] = min(c[min(int(q), max_q)], f)
        curves.append(c)
    return 100.0 * np.mean(curves, axis=0) if curves else np.zeros(max_q + 1)


def _plot(ex: pd.DataFrame, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    matplotlib.rcParams["svg.hashsalt"] = "callbluff-reading"  # the same figure gives the same bytes
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    max_q = int(ex["queries"].max()) if len(ex) else 0
    drawn = False
    for label, attack, run_keys in COLUMNS[2:]:
        sub = ex[ex["run"].isin(run_keys)]
        for target in sorted(ex["target"].unique()):
            if not ((sub["attack"] == attack) & (sub["target"] == target)).any():
                continue
            c = _curve(sub, attack, target, max_q)
            ax.plot(np.arange(len(c)), c, label=f"{label} / {target}")
            drawn = True
    if not drawn:
        plt.close(fig)
        return False
    ax.set_xlabel("target queries per question")
    ax.set_ylabel("F1 (best so far, mean over questions)")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return True


def _grammar_and_coverage(cache: Path, subset: Path, n: int) -> dict[str, Any]:
    """:func:`_grammar_stats`, computed once per sample size and kept in the cache directory."""
    path = cache / f"grammar-v5-{n}.json"  # v5: issue 37 second round, third pass
    if path.exists():
        g = json.loads(path.read_text())
    else:
        g = _grammar_stats(subset, n)
        path.write_text(json.dumps(g))
    for k in ("by_wh", "covered", "alt_rules", "ans_rules", "problems", "reasons", "conversions", "scorers"):
        g[k] = Counter(g[k])
    return g


def _grammar_stats(subset: Path, n: int) -> dict[str, Any]:
    """Regenerate AddSent's candidate pools for the run's questions (deterministic; the same as the runs'):
    coverage by wh-word, why questions get no sentence, the share of raw candidates passing the offline
    grammar and word-order check, which scorer ranked the kept ones, the rules used, samples."""
    from callbluff.attacks.reading import AddSent
    from callbluff.attacks.reading.addsent import candidate_pool, prefetch_candidates
    from callbluff.datasets import load
    from callbluff.resources.context import default_resources

    res = default_resources()
    params = AddSent(**SENT_PARAMS).params
    recs = [r for _, r in zip(range(n), load(f"squad:{subset}"))]
    prefetch_candidates(recs, res, params)
    by_wh: Counter[str] = Counter()
    covered: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    total = passed = kept = 0
    alt_rules: Counter[str] = Counter()
    ans_rules: Counter[str] = Counter()
    conversions: Counter[str] = Counter()
    scorers: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    good, bad = [], []
    t0 = time.time()
    for r in recs:
        wh = next((w for w in ("what", "which", "who", "whom", "whose", "when", "where", "why", "how")
                   if f" {w} " in f" {r.question.lower()} "), "other")
        by_wh[wh] += 1
        pool = candidate_pool(r, res, params)
        if pool.kept:
            covered[wh] += 1
        else:
            reasons[pool.reason or "?"] += 1
        kept += len(pool.kept)
        for c in pool.raw:
            total += 1
            problems.update(p.split(" (")[0] for p in c.problems)
            passed += not c.problems
            if c.problems and len(bad) < 12 and (not bad or bad[-1][0] != r.question):
                bad.append((r.question, r.answers[0], c.sentence, "; ".join(c.problems)))
        for c in pool.kept[:1]:
            ans_rules[c.answer_rule] += 1
            alt_rules.update(a["rule"] for a in c.alterations)
            conversions[c.conversion] += 1
            scorers[c.scorer] += 1
            if len(good) < 12:
                good.append((r.question, r.answers[0], c.sentence, c.scorer))
    return {"by_wh": by_wh, "covered": covered, "reasons": reasons, "total": total, "passed": passed,
            "kept": kept, "alt_rules": alt_rules, "ans_rules": ans_rules, "conversions": conversions,
            "scorers": scorers, "problems": problems, "good": good, "bad": bad, "n": len(recs),
            "params": params.model_dump(mode="json"), "seconds": time.time() - t0}


def _validity(ex: pd.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (attack, target) of the AddSent / AddOneSent runs: examples, those from an unaltered question (no
    altered word in ``meta["alterations"]``: invalid, Jia & Liang's step 4 removes them), those failing the
    structural check, and which scorer chose them."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if not len(ex):
        return out
    sub = ex[ex["attack"].isin(("AddSent", "AddOneSent"))]
    for (attack, target), g in sub.groupby(["attack", "target"]):
        metas = [json.loads(m) for m in g["meta"]]
        out[(attack, target)] = {
            "n": len(metas), "unaltered": sum(not m.get("alterations") for m in metas),
            "failing_check": sum(bool(m.get("grammar_problems")) for m in metas),
            "scorers": Counter(m.get("fluency_scorer", "n/a") for m in metas)}
    return out


def _cancelling_flips(ex: pd.DataFrame) -> dict[str, int]:
    """Examples (and their questions) whose alterations flip a degree word and the adjective right after it
    ("most successful" -> "least unsuccessful"), which :func:`alterations._no_cancelling_flips` no longer
    makes."""
    from callbluff.attacks.reading.alterations import DEGREE

    hit: set[str] = set()
    n = 0
    for sid, meta in zip(ex.get("source_id", []), ex.get("meta", [])):
        alts = {a["i"]: a for a in json.loads(meta).get("alterations", [])}
        if any(a["rule"] == "antonym" and (b := alts.get(i - 1)) is not None and b["rule"] == "special"
               and b["from"].lower() in DEGREE for i, a in alts.items()):
            n += 1
            hit.add(sid)
    return {"questions": len(hit), "examples": n}


def _hand_judged(cache: Path) -> dict[str, Any] | None:
    """The hand-filled verification sheet (``JUDGED``) imported into the ``sent`` run, through the product's
    round trip (:func:`callbluff.annotate.export_sheet` then :func:`~callbluff.annotate.import_sheets`); None when
    there is no filled sheet, ``{"error": ...}`` when it was made for another run."""
    from callbluff.annotate import AnnotationError, export_sheet, import_sheets

    run_dir = cache / "run-sent"
    if not JUDGED.exists() or not (run_dir / "examples.parquet").exists():
        return None
    ex = export_sheet(run_dir, "addsent", JUDGED_N, cache / "addsent-sheet.csv", seed=JUDGED_SEED)
    try:
        summary = import_sheets(run_dir, [JUDGED])
    except AnnotationError as e:
        return {"error": str(e), "sheet": ex.sheet}
    return {"sheet": ex.sheet, **summary}


def write(cache: Path, subset: Path, sizes: tuple[int, int, int, int], quick: bool, wall: float,
          skipped: list[str]) -> None:
    rows = _rows(cache)
    ex = _examples(cache)
    orig = _originals(cache)
    timings = json.loads((cache / "timings.json").read_text()) if (cache / "timings.json").exists() else {}
    lines: list[str] = []
    w = lines.append
    w("# Findings: Jia & Liang 2017 reading-comprehension adversaries (AddSent, AddOneSent, AddAny, AddCommon)")
    w("")
    w("Generated by `scripts/findings/reading.py`" + (" --quick (SMOKE TEST, not the findings)" if quick else "")
      + "; do not edit by hand.")
    w("")
    w(f"- Command: `.venv/bin/python scripts/findings/reading.py{' --quick' if quick else ''}` (from a fresh clone; "
      "the AddSent lexicon is built on first use and cached)")
    log = cache / "commands.log"
    invocations = [ln.split("\t") for ln in log.read_text().splitlines() if ln.count("\t") >= 2] \
        if log.is_file() else []
    if invocations:
        w(f"- Invocations of the script on this cache ({len(invocations)}; the script resumes, each run is "
          "computed once by the first invocation that finishes it): "
          + "; ".join(f"`{cmd}` at {when} UTC (runs {runs_})" for when, cmd, runs_ in invocations))
    w(f"- Data: SQuAD v1.1 dev (`{DEV.relative_to(SHARED.parent) if DEV.is_relative_to(SHARED.parent) else DEV}`), "
      f"a seeded random sample (seed {SAMPLE_SEED}) of {N_SENT} questions. AddOneSent/AddSent: the first "
      f"{sizes[0]} against MiniLM, the first {sizes[1]} against the sliding window; AddAny/AddCommon: the first "
      f"{sizes[2]} against MiniLM, the first {sizes[3]} against the sliding window (budget {ANY_BUDGET} queries "
      f"per question; {MARGIN_BUDGET} for AddAny with the margin objective).")
    w(f"- Systems: TransformerQA over `{MODEL.name}` (shared reader, 6-layer MiniLM fine-tuned on SQuAD; "
      f"ranked top-{TOP_K} spans) and SlidingWindowQA (Rajpurkar et al. 2016 baseline); in the AddAny-margin runs "
      f"both list their top-{MARGIN_TOP_K} spans (same models, same answers; the margin needs a wrong span in the "
      "list).")
    w(f"- Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs; load average at write "
      f"time {load_avg()}; the invocation that wrote this document took {wall / 60:.1f} min (each run's own "
      "time is below).")
    missing = [k for k in ALL_RUNS if k not in timings]
    if missing:
        w(f"- **Not run** (not computed by any invocation yet, e.g. cut by `--deadline` or left out by `--runs`): "
          f"{', '.join(f'`{k}`' for k in missing)}; their cells below read 'not run'. Re-running the same "
          "command completes them (finished runs are kept).")
    for k, t in timings.items():
        w(f"- Run `{k}`: {t['questions']} questions, {t['seconds'] / 60:.1f} min wall, load average "
          f"{t['load_before']} before / {t['load_after']} after.")
    w("")
    w("## Headline: F1 (%) beside the paper")
    w("")
    w("Adversarial F1 is the worst case over a question's adversarial versions (the paper's rule); one version "
      "per question here (AddSent keeps its worst candidate itself). `F1 all` counts questions the adversary "
      "could not attack (no wh-phrase, no alteration, no candidate passing the check) at their clean F1, the fairest comparison with the paper's tables; "
      "`F1 attacked` is over attacked questions only (the metrics row's `f1_adv`).")
    w("")
    w("| system | questions | Original | " + " | ".join(c[0] for c in COLUMNS) + " |")
    w("| --- | --- | --- | " + " | ".join("---" for _ in COLUMNS) + " |")
    w("| BiDAF ensemble (paper, Tables 2-3) | full dev / 1,000 | 80.0 | 46.9 | 34.2 | 2.7 | 52.6 | n/a |")
    w("| Match-LSTM single (paper) | | 71.4 | 39.0 | 27.3 | 7.6 | 38.9 | n/a |")
    headline: dict[tuple[str, str], float] = {}
    for target in ("minilm", "sliding"):
        cells = []
        clean = next((r for r in rows if r["attack"] == "clean" and r["target"] == target
                      and r["run"] in ("sent", "sent-sw")), None)
        cells.append(_fmt(clean.get("f1") if clean else None))
        for label, attack, run_keys in COLUMNS:
            sub = ex[(ex["attack"] == attack) & (ex["target"] == target) & ex["run"].isin(run_keys)] \
                if len(ex) else ex
            if not len(sub):
                cells.append("not run")
                continue
            run_key = sub["run"].iloc[0]
            f_all, n_att, n_all = _all_question_f1(ex[ex["run"] == run_key], orig[orig["run"] == run_key],
                                                   attack, target)
            headline[(target, label)] = f_all
            row = next((r for r in rows if r["attack"] == attack and r["target"] == target and r["run"] == run_key),
                       {})
            cells.append(f"{_fmt(f_all)} (attacked {_fmt(row.get('f1_adv'))}, n={n_att}/{n_all})")
        name = "TransformerQA minilm-l6-squad (ours)" if target == "minilm" else "SlidingWindowQA (ours)"
        n_s, n_a = (sizes[0], sizes[2]) if target == "minilm" else (sizes[1], sizes[3])
        w(f"| {name} | {n_s} / {n_a} | " + " | ".join(cells) + " |")
    w("")
    w("Clean F1 of the AddAny subsets (the first questions of the sample) differs from the 1,000-question "
      "figure; each attack row's own clean F1 on its questions is in the metrics table below.")
    w("")
    w("### Targets of the issue (shared reader)")
    w("")
    for label, goal in TARGETS.items():
        got = headline.get(("minilm", label))
        ok = got is not None and np.isfinite(got) and got <= goal
        w(f"- {label} F1 <= {goal:g}: ours {_fmt(got)} -> **{'met' if ok else 'NOT met'}**")
    for label, run_key in (("AddAny", "any"), (MARGIN, "any-margin")):
        qm = next((r for r in rows if r["attack"] == "AddAny" and r["target"] == "minilm" and r["run"] == run_key),
                  {}).get("queries_mean")
        w(f"- {label} mean target queries per question <= 300: ours {_fmt(qm)} -> "
          f"**{'met' if qm is not None and qm <= 300 else 'NOT met'}**")
    got_m, got_a = headline.get(("minilm", MARGIN)), headline.get(("minilm", "AddAny"))
    if got_m is not None and np.isfinite(got_m):
        w("")
        w(f"The margin setting was chosen on {TUNING_N} tuning questions, where it gave F1 {TUNING_MARGIN_F1} "
          f"at a mean of {TUNING_MARGIN_QUERIES} queries (the authors' objective at {ANY_BUDGET} queries: "
          f"{TUNING_AUTHORS_F1}); on this sample it gives {_fmt(got_m)} with a budget of {MARGIN_BUDGET} queries "
          f"(the authors' objective: {_fmt(got_a)} at {ANY_BUDGET}; the two are not compared at equal budgets "
          "here). The tuning figures flattered before: the previous margin setting (20 random words, top-10 "
          "spans) gave 9.9 on the tuning questions and 13.6 on this sample, and an earlier session's setting "
          "5.7 on 20 tuning questions and 17.8 here. "
          + ("The AddAny goal is not met by either objective." if got_m > TARGETS[MARGIN] else
             "Read the margin column's pass with care: it is thin, the tuning figures flattered again, and this "
             "is the second margin setting run on this sample (on an earlier machine's cache, its runs "
             "`any-margin` and `any-margin-sw` were deleted by hand and recomputed with the new setting, giving "
             "9.5; this document's cache was computed from scratch by the invocations listed at the top). The first setting (above) missed the goal here, which is why a better search was "
             "looked for; the new setting and its budget were then fixed on the tuning questions alone, before "
             "this sample ran with them, and nothing was chosen between runs on it."))
    w("")
    w("## Metric rows (metrics.json of each run)")
    w("")
    fields = ("n", "em", "f1", "em_adv", "f1_adv", "broken_pct", "queries_mean", "queries_median", "queries_max",
              "seconds_mean", "n_errors_generate")
    w("| run | target | attack | " + " | ".join(fields) + " |")
    w("| --- | --- | --- | " + " | ".join("---" for _ in fields) + " |")
    for r in rows:
        w(f"| {r['run']} | {r['target']} | {r['attack']} | " + " | ".join(_fmt(r.get(f)) for f in fields) + " |")
    w("")
    w("`queries_*` are target queries per attacked question counted by the oracle (cache hits included); "
      "`seconds_mean` is the search's wall time per question on this shared machine (search attacks only; "
      "AddOneSent's generation time is in `benchmarks/addonesent.md`).")
    w("")
    if len(ex) and _plot(ex, FIGURES / "addany_f1_vs_queries.svg"):
        w("## AddAny / AddCommon: F1 against target queries")
        w("")
        w("![F1 vs queries](reading/addany_f1_vs_queries.svg)")
        w("")
        w("Mean over questions of the best F1 found after q queries (a question that stopped early keeps its "
          "last value). The seed procedure (3 epochs x 10 indices x ~30 candidates) costs 600-900 queries; the "
          "batched search with early stop at F1 = 0 ends most searches far sooner.")
        w("")
    g = _grammar_and_coverage(cache, subset, sizes[0])
    valid = _validity(ex[ex["run"].isin(("sent", "sent-sw"))] if len(ex) else ex)
    w("## AddSent / AddOneSent like for like (issue 26)")
    w("")
    w("Jia & Liang's distractor states a fact about an *altered* question (Sec. 3.1): a question no rule alters "
      "gets no sentence, as does one whose candidates all fail the offline check (their crowd removed ungrammatical "
      "sentences and ones that answer the question). Such questions are not attacked and count at their clean F1 "
      "in `F1 every question`, as the published sets count every question; `F1 attacked only` is over the "
      "questions that got a sentence.")
    w("")
    w("| attack | target | questions | attacked | not attacked | F1 every question | F1 attacked only | "
      "authors' set, same reader | distractors from an unaltered question | distractors failing the check |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for attack in ("AddSent", "AddOneSent"):
        for target, run_key in (("minilm", "sent"), ("sliding", "sent-sw")):
            if not len(ex) or not ((ex["run"] == run_key) & (ex["attack"] == attack)).any():
                w(f"| {attack} | {target} | not run | | | | | | | |")
                continue
            f_all, n_att, n_all = _all_question_f1(ex[ex["run"] == run_key], orig[orig["run"] == run_key],
                                                   attack, target)
            row = next((r for r in rows if r["attack"] == attack and r["target"] == target and r["run"] == run_key),
                       {})
            v = valid.get((attack, target), {})
            authors = f"{TARGETS[attack]:g}" if target == "minilm" else "n/a"
            w(f"| {attack} | {target} | {n_all} | {n_att} | {n_all - n_att} | {_fmt(f_all)} | "
              f"{_fmt(row.get('f1_adv'))} | {authors} | {v.get('unaltered', 'n/a')} of {v.get('n', 'n/a')} | "
              f"{v.get('failing_check', 'n/a')} |")
    w("")
    for attack in ("AddSent", "AddOneSent"):
        got = headline.get(("minilm", attack))
        if got is None or not np.isfinite(got):
            continue
        gap = got - TARGETS[attack]
        w(f"- {attack} vs the authors' released set on the shared reader: ours {_fmt(got)} F1 over every question, "
          f"theirs {TARGETS[attack]:g}: " + (f"**at most theirs** ({_fmt(-gap)} points below)." if gap <= 0 else
                                          f"**{_fmt(gap)} points above theirs: the goal is not met**."))
    reasons = ", ".join(f"{k} {v}" for k, v in g["reasons"].most_common())
    w(f"- Why questions get no sentence (candidates regenerated for the {g['n']} questions, the same as the "
      f"runs'): {reasons or 'none'}.")
    scorers = {k: v for (a, t), d in valid.items() if a == "AddSent" and t == "minilm" for k, v in d["scorers"].items()}
    w("- Which scorer chose the kept sentences (`meta.fluency_scorer` of the AddSent examples against MiniLM): "
      + (", ".join(f"{k} {v}" for k, v in sorted(scorers.items())) or "n/a")
      + ". The language model (SmolLM2-135M-Instruct, Q4_1 GGUF through llama.cpp; mean token log-probability) "
      f"ranks a question's candidates only when more pass the check than are kept ({g['params']['candidates']}); "
      "otherwise every passing candidate is kept and the check alone decided (`structural`). " + LM_NOTE)
    w("")
    share = 100.0 * g["passed"] / max(g["total"], 1)
    w("### Grammaticality")
    w("")
    w(f"**Automatic** (`callbluff.attacks.reading.grammar`: one sentence, a verbal root with a subject, no wh-word, "
      f"no dangling preposition, no repeated word; word order: no bare participle before the verb, the fake answer "
      f"neither inside the subject nor before a verb that completes it; since issue 37 also subject-verb "
      f"agreement, no auxiliary before its subject, no two finite verbs in a row, no `because of` + a verb or a "
      f"bare noun, no preposition without an object, no unbalanced quote; since its second round also no "
      f"quantifier + `of` + a bare noun, no superlative without a determiner, no counted noun said twice, no "
      f"participle without its auxiliary, no fake answer right before a noun phrase of the question; and the "
      f"conversion no longer makes a wording it cannot get right, such as a bare verb or a misplaced adjective "
      f"where a noun phrase stood, or one its question's parse does not support (a verb whose form does not fit "
      f"its auxiliary, a copula's subject that is not a noun phrase)): "
      f"{g['passed']} of {g['total']} raw "
      f"candidates pass ({share:.1f}%); only those are kept ({g['kept']} kept for {sum(g['covered'].values())} "
      "questions), so every distractor sent to a reader passes it. Most frequent problems of the dropped ones: "
      + ", ".join(f"{k} ({v})" for k, v in g["problems"].most_common(8)) + ". The check is structural: it "
      "cannot see wrong word choice, agreement or meaning, so its pass rate is an upper bound on grammaticality.")
    w("")
    hj = _hand_judged(cache)
    if hj is None:
        w("**By hand**: no filled verification sheet (`scripts/findings/reading_addsent_judged.csv`) for this run.")
    elif "error" in hj:
        w(f"**By hand**: the filled sheet does not match this run (sheet {hj['sheet']}): {hj['error']}. Export a new "
          "one and judge it again.")
    else:
        w(f"**By hand** (Jia & Liang's verification step, through `callbluff annotate export --kind addsent` / "
          f"`import` on run `sent`, sheet {hj['sheet']}, a fresh sample: seed {JUDGED_SEED}, {JUDGED_N} sentences "
          f"stratified over AddSent and AddOneSent, none of them the sentences the issue quotes): {JUDGED_WHO}. A "
          "sentence is accepted when grammatical and not answering.")
        w("")
        w("| attack | sentences read | annotators | % grammatical | % answer the question | % accepted |")
        w("| --- | --- | --- | --- | --- | --- |")
        for r in hj.get("addsent_verification", []):
            w(f"| {r['attack']} | {r['n_items']} | {r['n_annotators']} | {_fmt(r['grammatical_pct'])} | "
              f"{_fmt(r['answers_question_pct'])} | {_fmt(r['accepted_pct'])} |")
        w("")
        w(f"Rejected sentences are dropped by the import (`annotations/addsent_verified.parquet` holds the "
          f"{len(hj.get('addsent_accepted', []))} accepted); the F1 figures above are over the automatic set, "
          "not re-counted with them.")
        flips = _cancelling_flips(ex[ex["run"] == "sent"] if len(ex) else ex)
        w("")
        w("What the hand check found: " + (JUDGED_NOTES or "(not written yet)") + " " + PREVIOUS_JUDGED
          + " An earlier reading found one grammatical sentence that answers its question ('Jeff Dean developed the "
          "least unsuccessful steam engine indicator.': two antonym alterations cancel); the attack never flips "
          "an adjective right after a flipped degree word (`alterations._no_cancelling_flips`): "
          f"{flips['questions']} questions of run `sent` have such a double flip.")
    w("")
    w("Samples of kept sentences (the first kept candidate; the scorer that ranked it):")
    w("")
    w("| question | gold | distractor | scorer |")
    w("| --- | --- | --- | --- |")
    for q, a, sent, sc in g["good"]:
        w(f"| {q} | {a} | {sent} | {sc} |")
    w("")
    w("Samples of dropped candidates:")
    w("")
    w("| question | gold | candidate | problems |")
    w("| --- | --- | --- | --- |")
    for q, a, sent, pr in g["bad"]:
        w(f"| {q} | {a} | {sent} | {pr} |")
    w("")
    w("## AddSent: coverage and rules")
    w("")
    w(f"Candidate pools regenerated for the {g['n']} questions ({g['seconds']:.0f} s, deterministic; parameters "
      f"{json.dumps({k: g['params'][k] for k in ('candidates', 'question_variants', 'fake_answers', 'pool', 'fluency')})}).")
    w("")
    w("| wh-word | questions | with a distractor |")
    w("| --- | --- | --- |")
    for wh, c in g["by_wh"].most_common():
        w(f"| {wh} | {c} | {g['covered'][wh]} ({100.0 * g['covered'][wh] / c:.0f}%) |")
    cov = sum(g["covered"].values())
    w(f"| all | {g['n']} | {cov} ({100.0 * cov / max(g['n'], 1):.1f}%) |")
    w("")
    w("How this differs from the paper: Jia & Liang had crowdworkers fix every generated sentence and a second "
      "crowd round drop ungrammatical ones and ones that answer the question (Sec. 3.1 steps 3-4; their "
      "human accuracy on AddSent is 79.5 F1). Here nothing is fixed by a person: the raw rule output is checked "
      "(above), ranked by a small language model where more candidates pass than are kept, and a sample was "
      "judged by hand. Our sentence never contains a gold answer and never comes from an unaltered question "
      "(both asserted for every example).")
    w("")
    w("Conversion coverage: the authors' 32 conversion + 18 wh-phrase rules run on a CoreNLP constituency "
      "parse; ours are written over spaCy's dependency parse and PTB tags (`declarative.py`), with two wordings "
      "of `which/what N` answers (`the N of A`, `A`). Questions without any wh-word (imperatives such as "
      "'Name a ...', yes/no questions) get no distractor, as with the authors' rules.")
    w("")
    w("Question alterations (first kept candidate): " + ", ".join(f"{k} {v}" for k, v in g["alt_rules"].most_common())
      + ".")
    w("")
    w("Fake-answer rules (first kept candidate): " + ", ".join(f"{k} {v}" for k, v in g["ans_rules"].most_common())
      + ". Conversion rules (first kept candidate): " + ", ".join(f"{k} {v}" for k, v in g["conversions"].most_common())
      + ".")
    w("")
    w("## What is not blind, and other differences")
    w("")
    w("- Parameters are the paper's where it gives them (d = 10 words, 20 random common words + question "
      "words per index, 3 epochs, 1,000 common words, stop at F1 = 0). Our choices: AddSent keeps at most 4 "
      "candidates of up to 8 raw ones (2 perturbed questions x 2 fake answers x 2 wordings; the paper's crowd gave "
      "a few verified sentences per question); the defaults were set before this sample ran and not tuned on it; "
      f"AddAny's and AddCommon's objective is the expected F1 over the reader's top-{TOP_K} spans "
      "(as the authors' implementation), except in the `AddAny, margin (ours)` column, whose search also draws "
      "10 random common words per index (below).")
    w("- **AddSent's validity rules are not fully blind to this sample.** Earlier sessions wrote the word-order "
      "check to reject ungrammatical sentences a reviewer quoted from AddSent on 1,000 SQuAD dev questions against "
      "this reader (this sample, as far as we can tell), and the rule against a double flip (\"most successful\" "
      "-> \"least unsuccessful\") after the hand check of 40 of this sample's sentences. " + ISSUE37_SHAPING)
    w(f"- **Tuned, on other questions** ({TUNING}; harness `scripts/findings/reading_tuning.py`, questions "
      "numbered in its order). Earlier sessions chose, on its first 20 questions: (1) a search ends as soon as any "
      "queried candidate fools the reader (F1 = 0) and returns the lowest-F1 words it queried; (2) "
      "`restart_when_stuck`: a mega-epoch whose whole epoch did not lower the objective gives way to a fresh one; "
      f"(3) the budget of {ANY_BUDGET} queries for AddAny and AddCommon with the authors' objective. That version "
      "of this document reported AddAny F1 17.8 on these 100 findings questions (mean 244.7 queries; about 18 "
      "questions not fooled), against 5.7 on the 20 tuning questions.")
    w("- **This version, also chosen on tuning questions only** (100 of them, questions 0-99):")
    w("  - The added words end with a period (`period`), as the authors' implementation appends them. On "
      "tuning questions 0-29 (authors' objective, budget 600): F1 8.3 either way, mean queries 179 -> 172.")
    w("  - A second objective, `margin` (ours; the attack's docstring): the gold span's score lead over the best "
      "wrong span. Why: the authors' expected F1 over a confident transformer's top spans is flat. Its top-10 "
      "spans are all variants of the gold one (a reader lists spans from its 20 best start and end tokens), so "
      "the added words show up only once they nearly win. Traced on tuning question 96 (\"When did Newcastle's "
      "first indoor market open?\"), the objective moved 0.69 -> 0.68 in 834 queries while \"when did newcastle "
      "first indoor market open in september.\" fools the reader outright.")
    w("  - What the tuning questions said (all budget 600 unless stated): authors' objective F1 13.2, 15 of 100 "
      "not fooled, mean 208 queries (questions 30-99 of this figure ran under an earlier copy of the harness whose "
      "per-question seeds were offset by 30, so they are not reproduced byte for byte by the committed one); margin "
      "F1 13.9, 16 not fooled, mean 216. So at 600 queries the margin objective is no better overall: it fools "
      "different questions (7 of the 15 the authors' objective left), and most failures of either are searches "
      "that run out of queries.")
    w("  - Margin at budget 1,000 (its 16 unfooled questions re-run; a search is deterministic per seed, so its "
      "first 600 queries are the same): 4 more fooled, F1 9.9, mean 272 queries. That was the previous version's "
      "margin column; on this findings sample it gave F1 13.6 (mean 286.2 queries, 15 questions not fooled).")
    w("  - Then, in a later session, each on all 100 tuning questions with the margin objective at budget 1,000: "
      "the readers listing 50 spans instead of 10 (the margin then sees a wrong span; the authors' objective "
      "still weighs only the top 10): F1 10.1, mean 242.6 queries, 11 not fooled; and with 10 random common "
      "words per index instead of 20 as well (the authors' implementation's default, `--sample-num 10`; the "
      "report's pseudo-code and the issue say 20): F1 5.9, mean 184.7 queries, 7 not fooled. Each index then "
      "costs ~20 queries instead of ~30, so the same budget buys 1.5 times as many greedy steps.")
    w("  - That search by budget on the tuning questions (its 7 unfooled questions re-run at 2,500; a smaller "
      "budget is a prefix of the same search): " + "; ".join(
          f"{b:,}: F1 {f}, mean {q} queries, {u} not fooled" for b, f, q, u in MARGIN_BUDGETS)
      + f". We took **{MARGIN_BUDGET:,}**: 1,500 fooled no more, and a harder sample spends up to the budget on "
      "every question it does not fool, so a larger budget risks the 300-query goal. That is the `AddAny, "
      f"margin (ours)` column (`MARGIN_PARAMS`, budget {MARGIN_BUDGET:,}, top-{MARGIN_TOP_K} spans); this "
      "findings sample was never run with it before this run.")
    w(f"  - Tried and dropped: {TUNING_DROPPED}")
    w("  - AddCommon keeps the authors' objective and was not tuned.")
    w("- The shared reader was fine-tuned on SQuAD train only; the lexicon is built from SQuAD train "
      "paragraphs, so no dev question or answer informs the attacks. The AddSent fake answers and "
      "alterations are rules, not learnt.")
    w("- The paper's numbers are for 2017 BiDAF / Match-LSTM models on the full dev set (AddSent, "
      "AddOneSent) and on a 1,000-question sample (AddAny, AddCommon); ours are a 6-layer MiniLM reader "
      "and the sliding-window baseline on the samples above. The sliding-window baseline answers from "
      "lexical overlap with the question, so distractors built from the question's words attract it by "
      "construction.")
    w("- AddAny against the sliding window runs on fewer questions: every query parses a new paragraph with "
      "spaCy.")
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"[reading] wrote {DOC}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="smoke test: a few questions")
    ap.add_argument("--stage", choices=("all", "prepare", "run", "write"), default="all")
    ap.add_argument("--deadline", default=None, help="HH:MM machine time after which no new run starts")
    ap.add_argument("--runs", default=None, help=f"comma-separated runs to compute now (of {', '.join(ALL_RUNS)}; "
                    "default all): the others are left for a later invocation")
    args = ap.parse_args()
    only = set(args.runs.split(",")) if args.runs else None
    if only is not None and (bad := only - set(ALL_RUNS)):
        ap.error(f"--runs: unknown run(s) {', '.join(sorted(bad))}; choose among {', '.join(ALL_RUNS)}")
    t0 = time.time()
    sizes = QUICK if args.quick else SIZES
    cache = REPO / ".findings-cache" / ("reading-quick" if args.quick else "reading")
    info = prepare(cache, N_SENT)
    skipped: list[str] = []
    if args.stage in ("all", "run"):
        after = (lambda: write(cache, info["subset"], sizes, args.quick, time.time() - t0, [])) \
            if args.stage == "all" else None
        cache.mkdir(parents=True, exist_ok=True)
        with open(cache / "commands.log", "a", encoding="utf-8") as fh:  # before the runs: a failed start shows too
            fh.write(f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())}\t"
                     f"scripts/findings/reading.py {' '.join(sys.argv[1:])}".rstrip() +
                     f"\t{args.runs or 'all not finished'}\n")
        with findings_progress(overall=("runs",)) as progress:
            skipped = run(cache, info["subset"], sizes, args.deadline, after, progress, only)
    if args.stage in ("all", "write"):
        write(cache, info["subset"], sizes, args.quick, time.time() - t0, skipped)


if __name__ == "__main__":
    main()
