"""callbluff beside nlpaug, TextAttack and CheckList on the same real texts, in one run (issue 15).

Texts: the first ``--n`` (default 320) ASAP-SAS training answers (../shared/data/asap-sas/train.tsv.gz). Our
operations run in this interpreter through the product's one generation path
(:meth:`callbluff.engine.generate.Generation.generate_records` on all the texts at once, the engine's unit of
work for a chunk, on a one-process executor; the answers wrapped as the record type each attack takes); the
peers run in benchmarks/.peers-venv (``bash benchmarks/peers/setup.sh``) through benchmarks/peers/peer_ops.py
on the very same texts. Every row is
the median of ``--repeats`` passes over the texts (TextAttack: one pass), each after a warm-up on 5 of them
(one-time model / WordNet loading is not counted). Before each of our passes every cache filled from the texts
is emptied (:func:`fresh_resources`: parses, spans, per-word memos), so no pass reuses the work of another pass
or row.

Fairness (like with like):

- One output per input on both sides for the rates compared. The peers make one augmentation per input
  (nlpaug ``augment(text)``, TextAttack ``transformations_per_example=1``, CheckList one ``add_typos``). Our
  DPAEG-family attacks make up to ``max_questions`` (20) variants per input by design, so the compared row runs
  them with ``max_questions=1``; Ding et al.'s Shuffle takes only fully correct answers by design, so the
  compared row sets ``min_score=0`` (every answer is shuffled once). The as-designed configuration is listed
  too, with its outputs/s, but not compared.
- The rate compared is inputs (texts) per second; outputs per input is shown beside it.
- Same kind of edit, with the remaining differences stated per operation in ``OPS`` (and in the document):
  e.g. our keyboard typos and letter replacements go to DPAEG's *dependency-parse keywords* (Sec. 4.4.2: "the
  proposed keywords extraction algorithm is used to extract keywords from the question", which needs a
  parse), while the peers pick words at random; our deletion unit is the sentence (Kumar et al.'s DelRand;
  callbluff has no word-deletion attack), theirs the word.

Goals, by what an operation needs (they replace "10x nlpaug on every operation", which compared parse-based
operations with random edits):

- operations that need no linguistic analysis (word shuffle, sentence deletion, real misspellings of random
  words): >= 3x nlpaug's equivalent and >= CheckList's rate where CheckList has one (``add_typos``, beside the
  random misspellings);
- operations that need a parse or a tagger (DPAEG's keyword typos and misspellings, ModLexicon): >= 0.9x the
  throughput of the spaCy components they use, run alone on the same texts in this process (``nlp.pipe`` with
  the very components and batch sizes the attack's ``prefetch`` uses, caches emptied the same way): the
  physical limit of a design that parses; and ModLexicon >= nlpaug's tagger-based SynonymAug.

What the design can reach is measured beside the goals (the section "What the goals ask" of the results): the
spaCy components an operation needs, alone (for Shuffle spaCy's tokenizer, for DelRand the statistical sentence
recogniser, for the parse-based ones their ``prefetch`` calls), and the engine's own cost per record
(:class:`EngineFloor`: an attack that makes one output without reading the text) for operations that need no
analysis at all. A goal that asks for more than that limit cannot be met by any implementation of that design
(e.g. a Shuffle that tokenizes with spaCy, a sentence deletion that finds sentences with spaCy's senter, or any
operation that derives a generator per record and records provenance, against CheckList's one ``add_typos``).

TextAttack's rates are shown for information (no goal).

    bash benchmarks/peers/setup.sh && .venv/bin/python benchmarks/peers/run.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from callbluff.attacks.base import StaticAttack  # noqa: E402
from callbluff.datasets import load  # noqa: E402
from callbluff.engine.generate import AttackSpec, Generation  # noqa: E402
from callbluff.records import OpenQuestion, ScoredResponse  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "asap-sas" / "train.tsv.gz"
PEERS_VENV = REPO / "benchmarks" / ".peers-venv"
PEERS_PY = PEERS_VENV / "bin" / "python"
NO_ANALYSIS_GOALS = {"nlpaug": 3.0, "CheckList": 1.0}
"""Goals of the operations that need no analysis: callbluff / tool rate."""
PARSE_GOAL = 0.9
"""Goal of the parse-based operations: callbluff / (the spaCy components they use, alone)."""
SYNONYM_GOAL_NLPAUG = 1.0
"""ModLexicon / nlpaug SynonymAug."""

# the spaCy calls of each parse-based attack's prefetch (pipeline mode, components disabled, batch size)
DPAEG_PARSE = (("full", ("ner", "lemmatizer"), 256),)
MODLEXICON_PARSE = (("full", ("ner",), 32), ("sentences", (), 64))

OPS: dict[str, dict[str, Any]] = {
    "keyboard typos": {
        "compared": ("NoiseKeyboard", {"max_questions": 1}), "designed": ("NoiseKeyboard", {}),
        "kind": "parse", "spacy": DPAEG_PARSE,
        "analysis": "dependency parse (DPAEG Algorithm 1 keywords; Sec. 4.4.2 modifies those keywords)",
        "difference": "ours: one QWERTY-neighbour letter in each of 1+ dependency-parse keywords of the text; "
                      "nlpaug KeyboardAug: letters of ~30% of random words; TextAttack WordSwapQWERTY: ~10% "
                      "of words"},
    "character replacement": {
        "compared": ("NoiseReplace", {"max_questions": 1}), "designed": ("NoiseReplace", {}),
        "kind": "parse", "spacy": DPAEG_PARSE,
        "analysis": "dependency parse (DPAEG Algorithm 1 keywords)",
        "difference": "ours: one random letter in each of 1+ dependency-parse keywords; nlpaug RandomCharAug "
                      "(substitute): letters of ~30% of random words; TextAttack "
                      "WordSwapRandomCharacterSubstitution: ~10% of words"},
    "real-misspelling swap": {
        "compared": ("DPAEG", {"max_questions": 1}), "designed": ("DPAEG", {}),
        "kind": "parse", "spacy": DPAEG_PARSE,
        "analysis": "dependency parse (keywords) and POS (spell-similar words of the keyword's POS)",
        "difference": "ours: DPAEG (Algorithm 2): keywords replaced by real typos (the natural-noise list, the "
                      "same list nlpaug ships as spelling_en.txt), spell-similar words and their typos, within "
                      "edit distance 4; nlpaug SpellingAug: ~30% of random words replaced by a typo of that list"},
    "random misspellings": {
        "compared": ("Misspell", {"rate": 0.3}), "designed": None, "kind": "no-analysis",
        "analysis": "none: a regular expression finds the words",
        "difference": "ours: Misspell (Ding et al. Sec. 5.3 benign noise) replaces 30% of the words, drawn at "
                      "random among those with a real misspelling in the typo corpora, by one of them; nlpaug "
                      "SpellingAug: ~30% of random words replaced by a typo of its spelling_en.txt; CheckList "
                      "add_typos: one swap of two adjacent characters at a random position"},
    "word shuffle": {
        "compared": ("Shuffle", {"min_score": 0}), "designed": ("Shuffle", {}), "kind": "no-analysis",
        "spacy": (("tokenizer", (), 0),),
        "analysis": "spaCy's tokenizer (no statistical component)",
        "difference": "ours: every token of the answer in a random order (Ding et al.); nlpaug "
                      "RandomWordAug(swap): ~30% of words swapped with a neighbour"},
    "word deletion": {
        "compared": ("DelRand", {}), "designed": None, "kind": "no-analysis", "spacy": (("sentences", (), 64),),
        "analysis": "statistical sentence split (spaCy senter), batched per task",
        "difference": "ours: Kumar et al.'s DelRand deletes 25% of the SENTENCES (no word-deletion attack in "
                      "callbluff); nlpaug RandomWordAug(delete): ~30% of words; TextAttack WordDeletion: ~10% "
                      "of words"},
    "WordNet synonym swap": {
        "compared": ("ModLexicon", {}), "designed": None, "kind": "parse", "spacy": MODLEXICON_PARSE,
        "retags": True,
        "analysis": "POS tags, named entities, lemmas and a re-tagging of the result (keeps POS in context)",
        "difference": "ours: one word per sentence (Kumar et al.); nlpaug SynonymAug(wordnet): ~30% of words; "
                      "TextAttack WordSwapWordNet: ~10% of words"},
}


class EngineFloor(StaticAttack):
    """The engine's own cost per record, which every callbluff operation pays: an attack that makes one output
    without reading the text (the record's seeded generator, the example with its id and provenance, the
    failure policy), timed like the others."""

    name = "EngineFloor"
    task = "content"
    family = "benchmark"
    paper = "none (benchmarks/peers/run.py)"
    description = "One output per record, the text unread."
    record_type = ScoredResponse
    expect = "same-score"

    def generate(self, record: Any, rng: Any, res: Any, prompt: Any = None, state: Any = None) -> list[Any]:
        return [self.perturbed(record, record.text + "!")]


def records_for(attack: str, answers: list[ScoredResponse]) -> list[Any]:
    if attack.startswith(("Noise", "DPAEG")):
        return [OpenQuestion(id=a.id, question=a.text) for a in answers]
    return answers


def fresh_resources() -> None:
    """Empty every cache filled from the texts: a new process-wide ``Resources`` (parses, spans), flushed spaCy
    tokenizer caches, the attribute ruler's per-token-attributes cache, and callbluff's per-word memos (DPAEG's
    Algorithm 2 per keyword, the letter positions of the noise baselines, ModLexicon's synonyms and
    lemminflect lookups, the typo corpus's misspellings per word asked: the corpus is read again, in the
    warm-up). The pipelines, WordNet and the dictionary stay loaded."""
    from callbluff.attacks.essay import modify
    from callbluff.attacks.questions import words
    from callbluff.attacks.questions.attacks import _corpus, _typo_similar_words
    from callbluff.resources import context
    from callbluff.resources.typos import cached_corpus
    from callbluff.resources.attribute_rules import IndexedRules
    from callbluff.resources.spacy_pipeline import load_english

    for memo in (_typo_similar_words, words._ascii_letters, modify._synonym_forms, modify._inflection,
                 modify._lemma_pos, _corpus, cached_corpus):  # the typo corpus read again: no word's memo
        memo.cache_clear()
    context._DEFAULT = None
    for mode in ("full", "sentences"):
        nlp = load_english(mode)
        tok = nlp.tokenizer
        tok.rules = tok.rules  # spaCy flushes the tokenizer's cache when its rules are set
        if "attribute_ruler" in nlp.pipe_names and isinstance(nlp.get_pipe("attribute_ruler").match, IndexedRules):
            nlp.get_pipe("attribute_ruler").match.clear()


def time_ours(op: str, role: str, name: str, params: dict[str, Any], answers: list[ScoredResponse],
              prompts: dict[str, Any], repeats: int) -> dict[str, Any]:
    recs = records_for(name, answers)
    spec = AttackSpec.of(EngineFloor()) if name == "EngineFloor" else AttackSpec.make(name, params)
    row: dict[str, Any] = {"tool": "callbluff", "operation": op, "attack": name, "params": params, "role": role}
    try:
        gen = Generation([spec], prompts, seed=0)
        gen.fit(recs)
        passes = []
        for _ in range(repeats):
            fresh_resources()
            gen.generate_records(recs[:5])  # warm-up
            t0 = time.perf_counter()
            examples, errors = gen.generate_records(recs)
            passes.append(time.perf_counter() - t0)
        secs = statistics.median(passes)
        row.update(inputs=len(recs), outputs=len(examples), errors=len(errors), seconds=round(secs, 3),
                   pass_seconds=[round(x, 3) for x in passes],
                   texts_per_s=round(len(recs) / secs, 1), outputs_per_s=round(len(examples) / secs, 1),
                   outputs_per_input=round(len(examples) / len(recs), 2), status="ok")
    except Exception as e:  # noqa: BLE001
        row["status"] = f"not measured: {type(e).__name__}: {e}"[:300]
    print(json.dumps(row), flush=True)
    return row


def record_retagging(name: str, params: dict[str, Any], answers: list[ScoredResponse],
                     prompts: dict[str, Any]) -> list[tuple[list[str], list[str]]]:
    """The tagger calls an attack makes beyond its ``prefetch`` (ModLexicon's re-tagging of the windows
    around its replacements, Kumar et al.'s POS check in context): one pass through the generation path with
    the full pipeline's ``pipe`` recording each call (texts, disabled components) whose parser is off."""
    from callbluff.resources.spacy_pipeline import load_english

    nlp = load_english("full")
    calls: list[tuple[list[str], list[str]]] = []
    original = nlp.pipe

    def recording(texts: Any, *args: Any, **kw: Any) -> Any:
        texts = list(texts)
        if "parser" in (kw.get("disable") or []):
            calls.append((texts, list(kw["disable"])))
        return original(texts, *args, **kw)

    nlp.pipe = recording  # type: ignore[method-assign]
    try:
        fresh_resources()
        gen = Generation([AttackSpec.make(name, params)], prompts, seed=0)
        gen.fit(answers)
        gen.generate_records(answers)
    finally:
        del nlp.pipe  # the class's method again
    return calls


def time_spacy(op: str, stages: tuple[tuple[str, tuple[str, ...], int], ...], texts: list[str],
               repeats: int, extra_calls: list[tuple[list[str], list[str]]] | None = None) -> dict[str, Any]:
    """The spaCy components an attack runs, alone on the same texts: the ceiling of an operation that parses.
    ``stages`` are its ``prefetch`` calls (pipeline mode, disabled components, batch size) on every text;
    ``extra_calls`` the further calls it makes while generating (recorded by :func:`record_retagging`),
    replayed one ``nlp.pipe`` each as it made them. Caches are emptied before each pass as for our rows
    (:func:`fresh_resources`), after a warm-up on 5 texts."""
    from callbluff.resources.spacy_pipeline import load_english

    what = " + ".join("the sentences pipeline's tokenizer" if mode == "tokenizer" else
                      f"{mode} pipeline" + (f" without {', '.join(off)}" if off else "") + f" (batch {b})"
                      for mode, off, b in stages)
    if extra_calls:
        what += (f" + its {len(extra_calls)} tagger calls on {sum(len(t) for t, _ in extra_calls)} windows "
                 "(recorded from one pass)")
    row: dict[str, Any] = {"tool": "spaCy", "operation": op, "config": f"nlp.pipe alone: {what}"}
    try:
        pipes = [(load_english("sentences" if mode == "tokenizer" else mode), mode == "tokenizer", list(off), b)
                 for mode, off, b in stages]
        full = load_english("full")

        def run(some: list[str]) -> None:
            for nlp, tokenizer_only, off, b in pipes:
                docs = nlp.tokenizer.pipe(some) if tokenizer_only else nlp.pipe(some, batch_size=b, disable=off)
                for _doc in docs:
                    pass

        passes = []
        for _ in range(repeats):
            fresh_resources()
            run(texts[:5])
            t0 = time.perf_counter()
            run(texts)
            for call_texts, off in extra_calls or ():
                for _doc in full.pipe(call_texts, disable=off):
                    pass
            passes.append(time.perf_counter() - t0)
        secs = statistics.median(passes)
        row.update(inputs=len(texts), seconds=round(secs, 3), pass_seconds=[round(x, 3) for x in passes],
                   texts_per_s=round(len(texts) / secs, 1), status="ok")
    except Exception as e:  # noqa: BLE001
        row["status"] = f"not measured: {type(e).__name__}: {e}"[:300]
    print(json.dumps(row), flush=True)
    return row


def goal_for(kind: str, op: str, tool: str) -> float | None:
    """The goal of callbluff's rate divided by ``tool``'s on ``op`` (None: shown for information)."""
    if tool == "spaCy":
        return PARSE_GOAL if kind == "parse" else None  # a no-analysis operation's spaCy row: its ceiling
    if kind == "no-analysis":
        return NO_ANALYSIS_GOALS.get(tool)
    if op == "WordNet synonym swap" and tool == "nlpaug":
        return SYNONYM_GOAL_NLPAUG
    return None


def run_peers(texts: list[str], repeats: int) -> tuple[list[dict[str, Any]], list[str]]:
    if not PEERS_PY.exists():
        return [], [f"{PEERS_PY} is missing: run bash benchmarks/peers/setup.sh"]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(texts, fh)
    # the peers' NLTK data: substitutes built by nltk_data.py, then callbluff's WordNet (scripts/setup.sh)
    data = [str(PEERS_VENV / "nltk_data"), str(REPO / ".venv" / "nltk_data")]
    env = {**os.environ, "NLTK_DATA": os.pathsep.join(data)}
    done = subprocess.run([str(PEERS_PY), str(Path(__file__).with_name("peer_ops.py")), fh.name, str(repeats)],
                          capture_output=True, text=True, check=False, env=env)
    os.unlink(fh.name)
    if done.returncode != 0:
        return [], [f"peer_ops.py failed: {done.stderr[-500:]}"]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return got["rows"], list(got["notes"])


def substitutes() -> list[str]:
    """The NLTK data substitutes the peers ran with (the README each one carries)."""
    root = PEERS_VENV / "nltk_data"
    return [p.read_text(encoding="utf-8").strip() for p in sorted(root.rglob("README"))] if root.exists() else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--repeats", type=int, default=5,
                    help="passes per row; the median pass is reported (TextAttack: one pass, each takes minutes)")
    ap.add_argument("--no-peers", action="store_true", help="time callbluff only (development; writes no result files)")
    args = ap.parse_args()
    load_before = os.getloadavg()
    t_start = time.perf_counter()
    ds = load(f"asap-sas:{DATA}")
    answers: list[ScoredResponse] = []
    for r in ds:
        if len(answers) >= args.n:
            break
        answers.append(r)
    ours: list[dict[str, Any]] = []
    for op, cfg in OPS.items():
        for role in ("compared", "designed"):
            if cfg[role] is not None:
                name, params = cfg[role]
                ours.append(time_ours(op, role, name, params, answers, ds.prompts, args.repeats))
    floor = time_ours("engine floor", "floor", "EngineFloor", {}, answers, ds.prompts, args.repeats)
    texts = [a.text for a in answers]
    ceilings = []
    for op, cfg in OPS.items():
        if cfg.get("spacy"):
            name, params = cfg["compared"]
            extra = record_retagging(name, params, answers, ds.prompts) if cfg.get("retags") else None
            ceilings.append(time_spacy(op, cfg["spacy"], texts, args.repeats, extra))
    peers, notes = ([], ["peers not run (--no-peers)"]) if args.no_peers else run_peers(texts, args.repeats)
    rows = []
    for op, cfg in OPS.items():
        mine = [r for r in ours if r["operation"] == op]
        compared = next(r for r in mine if r["role"] == "compared")
        rows += [{**r, "ratio": "", "kind": cfg["kind"]} for r in mine]
        for p in [*ceilings, *peers]:
            if p.get("operation") != op:
                continue
            ratio = (round(compared["texts_per_s"] / p["texts_per_s"], 2)
                     if compared.get("texts_per_s") and p.get("texts_per_s") else None)
            goal = goal_for(cfg["kind"], op, p["tool"])
            ok = None if ratio is None or goal is None else ratio >= goal
            rows.append({**p, "kind": cfg["kind"], "ratio": ratio, "goal": goal, "ok": ok})
    for p in peers:
        if "operation" not in p:
            notes.append(f"{p['tool']}: {p['status']}")
    limits = reachability(rows, floor)
    result = {"benchmark": "peers", "command": "python benchmarks/peers/run.py " + " ".join(sys.argv[1:]),
              "texts": len(answers), "data": "ASAP-SAS train.tsv.gz, first answers in file order",
              "wall_seconds": round(time.perf_counter() - t_start, 1),
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
              "operations": {op: {"analysis": c["analysis"], "difference": c["difference"], "kind": c["kind"]}
                             for op, c in OPS.items()},
              "goals": {"no-analysis": NO_ANALYSIS_GOALS, "parse (spaCy alone)": PARSE_GOAL,
                        "synonym swap (nlpaug SynonymAug)": SYNONYM_GOAL_NLPAUG},
              "nltk_substitutes": substitutes(), "rows": rows, "engine_floor": floor, "limits": limits,
              "notes": notes}
    if not args.no_peers:  # a development run does not replace the full run's results
        (REPO / "benchmarks" / "results").mkdir(exist_ok=True)
        (REPO / "benchmarks" / "results" / "peers.json").write_text(json.dumps(result, indent=2) + "\n")
        Path(__file__).with_name("RESULTS-peers.md").write_text(render(result))
    print(render(result))


def reachability(rows: list[dict[str, Any]], floor: dict[str, Any]) -> list[dict[str, Any]]:
    """Per goal vs a peer: the rate it asks of callbluff beside the fastest any callbluff implementation could
    reach by design, measured in this run: the time per text of the spaCy components the operation needs,
    alone (its ``spaCy`` row), plus the engine's own cost per record (``EngineFloor``), as if the operation's
    own work took no time at all."""
    out = []
    engine = floor.get("texts_per_s")
    for r in rows:
        if r["tool"] == "callbluff" or not r.get("goal") or not r.get("texts_per_s"):
            continue
        ceiling = r if r["tool"] == "spaCy" else next(
            (c for c in rows if c["tool"] == "spaCy" and c["operation"] == r["operation"] and c.get("texts_per_s")),
            None)
        limit: float | None = engine
        by = "the engine alone (EngineFloor)"
        if ceiling:
            limit = round(1 / (1 / ceiling["texts_per_s"] + (1 / engine if engine else 0)), 1)
            by = ceiling["config"].removeprefix("nlp.pipe alone: ") + (" + the engine (EngineFloor)" if engine else "")
        asked = round(r["goal"] * r["texts_per_s"], 1)
        tool = "its spaCy components alone" if r["tool"] == "spaCy" else r["tool"]
        out.append({"operation": r["operation"], "goal": f">= {r['goal']}x {tool}", "asked_texts_per_s": asked,
                    "limit_texts_per_s": limit, "limit": by,
                    "reachable": None if limit is None else limit >= asked})
    return out


def render(result: dict[str, Any]) -> str:
    lines = ["# callbluff vs nlpaug, TextAttack, CheckList", "",
             f"Command: `{result['command']}` (generated; do not edit). {result['texts']} ASAP-SAS answers "
             f"(first in file order), the same texts for every tool; wall time {result['wall_seconds']} s; load "
             f"average before {result['load_average_before']}, after {result['load_average_after']} on "
             f"{result['machine']['cpus']} CPUs (a load above the CPU count means other work shared the CPUs "
             "with every tool alike). Method and fairness: the docstring of benchmarks/peers/run.py.", "",
             "Rates are inputs (texts) per second: the median of the passes over the texts (each after a 5-text "
             "warm-up and, for callbluff, with emptied per-text and per-word caches; TextAttack one pass, each takes minutes; "
             "`pass_seconds` in benchmarks/results/peers.json). `compared` rows make one "
             "output per input, like the peers, and are the ones divided by the peers' rates; `as designed` rows "
             "are the attack's own defaults (several outputs per input, or only some inputs), shown for their "
             "outputs/s.", "",
             "Goals (callbluff / tool): operations that need no analysis >= 3x nlpaug's equivalent and >= "
             "CheckList's rate; operations that need a parse or a tagger >= 0.9x the spaCy components they use "
             "run alone on the same texts (the `spaCy` rows: the attack's own `prefetch` calls, timed bare), and "
             "ModLexicon >= nlpaug's SynonymAug. TextAttack is shown for information.", "",
             "| operation | needs | tool (configuration) | inputs/s | outputs/s | outputs per input | "
             "callbluff / tool | goal | status |", "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in result["rows"]:
        if r["tool"] == "callbluff":
            params = ", ".join(f"{k}={v}" for k, v in r["params"].items()) or "defaults"
            who = f"callbluff {r['attack']} ({params}; {'compared' if r['role'] == 'compared' else 'as designed'})"
        else:
            who = r["tool"] + (f" {r['config']}" if r.get("config") else "")
        goal = "" if r.get("goal") is None else r["goal"]
        verdict = "" if r.get("ok") is None else (" (goal met)" if r["ok"] else " (goal NOT met)")
        lines.append(f"| {r['operation']} | {r.get('kind', '')} | {who} | {r.get('texts_per_s', '')} | "
                     f"{r.get('outputs_per_s', '')} | "
                     f"{r.get('outputs_per_input', '')} | {r.get('ratio', '')} | {goal} | {r['status']}{verdict} |")
    floor = result.get("engine_floor") or {}
    lines += ["", "## What the goals ask, beside what the design can reach", "",
              "A goal against a peer asks callbluff for a rate; the fastest a callbluff operation can be is that of "
              "what it cannot skip, measured in this run: the spaCy components it needs, alone (tokenizer, "
              "sentence recogniser, tagger and parser), plus the engine's own cost per record "
              f"({floor.get('texts_per_s', '?')} texts/s for an attack that makes one output without reading the "
              "text: the record's seeded generator, the example with its id and provenance), as if the operation's "
              "own work took no time. Where that limit is below the rate asked, no implementation of the design "
              "meets the goal; where it is above, the goal is open to a faster implementation.", "",
              "| operation | goal | rate asked (texts/s) | limit (texts/s) | limit measured as | reachable |",
              "| --- | --- | ---: | ---: | --- | --- |"]
    for g in result.get("limits") or []:
        lines.append(f"| {g['operation']} | {g['goal']} | {g['asked_texts_per_s']} | {g['limit_texts_per_s']} | "
                     f"{g['limit']} | {'yes' if g['reachable'] else 'no' if g['reachable'] is False else '?'} |")
    lines += ["", "## What each operation needs, and how the edits differ", "",
              "| operation | linguistic analysis callbluff needs | difference of the edits |", "| --- | --- | --- |"]
    for op, c in result["operations"].items():
        lines.append(f"| {op} | {c['analysis']} | {c['difference']} |")
    subs = result.get("nltk_substitutes") or []
    lines += ["", "## NLTK data the peers ran with", "",
              "Nothing can be downloaded from NLTK's data server here. benchmarks/peers/nltk_data.py (run by "
              "setup.sh) writes substitutes in NLTK's formats; WordNet 3.0 is Debian's `wordnet-base` through "
              "callbluff's scripts/setup.sh.", ""]
    lines += [f"- {s}" for s in subs] or ["- none found (benchmarks/.peers-venv/nltk_data is missing)"]
    notes = result.get("notes") or []
    if notes:
        lines += ["", "## Notes", "", *[f"- {n}" for n in notes]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
