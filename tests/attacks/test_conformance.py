"""The conformance kit (callbluff.testing) over every registered attack, a test search attack and a test
prompt-level generator; and proof that it fails attacks that break the contract."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from callbluff.attacks.base import (
    GeneratorParams,
    PromptGenerator,
    SearchAttack,
    SearchParams,
    StaticAttack,
    attack_classes,
    get_attack,
    registered,
)
from callbluff.attacks.oracle import Oracle
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.targets.base import Input
from callbluff.testing import (
    CHECKS,
    COMMON_CHECKS,
    AttackCheckError,
    DeterministicTarget,
    attack_checks,
    check_attack,
    default_records,
    parametrize_attack_checks,
    yield_checks,
)


EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "MasterKey": {"check_examples_differ_from_source": (
        "Zhao et al. 2025's first master key is one space (Sec. 3), sent as written: on the kit's essay records "
        "(MasterKey serves content and essay) a record draws it, and the check refuses a blank text")},
}
"""Checks a registered attack is known to fail, ``{attack: {check: reason}}`` (strict xfail: an entry that
starts passing fails the run). Every other registered attack passes every check that applies to its kind."""


@parametrize_attack_checks(attack_classes(), expected_failures=EXPECTED_FAILURES)
def test_every_registered_attack_passes_the_kit(attack, check) -> None:
    check(attack)  # raises AttackCheckError naming the check and the fix


COMMON = [c.__name__ for c in COMMON_CHECKS]


@pytest.mark.parametrize(("name", "extra"), [
    ("ShuffleSent", []),                                                   # static
    ("AddSong", ["check_fit_state"]),                                      # static that fits
    ("AddAny", ["check_search_budget"]),                                   # search
    ("RandomChars", ["check_fit_state", "check_generator_count"]),         # prompt generator
])
def test_kit_yields_the_checks_of_the_attacks_kind(name: str, extra: list[str]) -> None:
    names = [name for name, _ in attack_checks(get_attack(name))]
    assert names == COMMON + extra


def test_every_check_is_yielded_for_some_registered_attack() -> None:
    yielded = {c for cls in attack_classes() for c in yield_checks(cls())}
    assert yielded == set(CHECKS) and len(CHECKS) == len(set(CHECKS))


# -- a test search attack and a test prompt-level generator ---------------------------------------------

FILLERS = ["well", "um", "like", "so", "hmm", "erm"]


class InsertFillerParams(SearchParams):
    tries: int = 8


class _InsertFiller(SearchAttack):
    """Test-only search: insert the filler word that moves the score most (fillers as in Kumar et al. 2020,
    Sec. 3.2 ModFluency), asking the oracle one batch per round."""

    name = "TestInsertFiller"
    task = "content"
    family = "test"
    paper = "test"
    description = "test-only search attack"
    Params = InsertFillerParams
    expect = "same-score"
    record_type = ScoredResponse

    def search(self, record: Record, oracle: Oracle, rng: np.random.Generator, res: Resources,
               prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        words = record.text.split(" ")
        candidates = []
        for _ in range(self.params.tries):
            at = int(rng.integers(0, len(words) + 1))
            filler = FILLERS[int(rng.integers(0, len(FILLERS)))]
            candidates.append((" ".join(words[:at] + [filler] + words[at:]), at, filler))
        outs = oracle.ask([c[0] for c in candidates])
        if not outs:
            return []
        best = max(range(len(outs)), key=lambda i: (outs[i].score or 0, -i))
        text, at, filler = candidates[best]
        return [self.perturbed(record, text, position=at, filler=filler, queries=len(outs))]


class BigramParams(GeneratorParams):
    length: int = 12


class _BigramGenerator(PromptGenerator):
    """Test-only generator: answers sampled from the prompt's word bigrams (Ding et al. 2020, Sec. 2.2
    n-gram generator, in miniature)."""

    name = "TestBigramGenerator"
    task = "content"
    family = "test"
    paper = "test"
    description = "test-only prompt-level generator"
    Params = BigramParams
    expect = "bottom"
    record_type = ScoredResponse

    def fit(self, records, prompt, res):
        pairs = Counter()
        for r in records:
            w = r.text.lower().split()
            pairs.update(zip(w, w[1:]))
        return sorted([a, b, n] for (a, b), n in pairs.items())  # lists: JSON state, stable hash

    def generate_one(self, index: int, prompt: Prompt, state, rng: np.random.Generator, res) -> Perturbed | None:
        if not state:
            return None
        nxt: dict[str, list[str]] = {}
        for a, b, _ in state:
            nxt.setdefault(a, []).append(b)
        word = state[int(rng.integers(0, len(state)))][0]
        out = [word]
        while len(out) < self.params.length and word in nxt:
            word = nxt[word][int(rng.integers(0, len(nxt[word])))]
            out.append(word)
        return self.generated(prompt, " ".join(out), index, n_words=len(out))


def test_test_search_attack_and_generator_pass_while_registered() -> None:
    with registered(_InsertFiller, _BigramGenerator):
        assert get_attack("TestInsertFiller") is _InsertFiller
        check_attack(_InsertFiller)
        check_attack(_InsertFiller(query_budget=3, tries=8))  # the oracle cuts the batch: still fine
        check_attack(_BigramGenerator(count=7))
    with pytest.raises(KeyError):
        get_attack("TestInsertFiller")  # registered only for the block


def test_generator_examples_split_and_stamp() -> None:
    records, prompts = default_records("content")
    gen = _BigramGenerator(count=9)
    state = gen.fit(records, prompts["kit-content"], None)
    from callbluff.resources.context import default_resources

    res = default_resources()
    whole = gen.examples_for(prompts["kit-content"], state, 3, res)
    parts = gen.examples_for(prompts["kit-content"], state, 3, res, 0, 4) + \
        gen.examples_for(prompts["kit-content"], state, 3, res, 4, 50)
    assert [e.to_dict() for e in whole] == [e.to_dict() for e in parts] and len(whole) == 9
    assert {e.source_id for e in whole} == {"prompt:kit-content"} and [e.index for e in whole] == list(range(9))
    assert len({e.meta["fit_state"] for e in whole}) == 1
    with pytest.raises(ValueError, match="needs fit"):
        gen.examples_for(prompts["kit-content"], None, 3, res)


# -- the kit must be able to fail ------------------------------------------------------------------------

class _Base(StaticAttack):
    """Appends a word (test attack, Kumar et al. 2020 Sec. 3.3 in miniature)."""

    task = "content"
    family = "test"
    paper = "test"
    description = "test"
    expect = "lower"
    record_type = ScoredResponse

    def generate(self, record, rng, res, prompt=None, state=None):
        return [self.perturbed(record, record.text + " " + FILLERS[int(rng.integers(0, 6))])]


class _GlobalRandom(_Base):
    """Uses the global random module (Sec. 3.2)."""

    name = "TestGlobalRandom"

    def generate(self, record, rng, res, prompt=None, state=None):
        return [self.perturbed(record, record.text + " " + random.choice(FILLERS) + str(random.random()))]


class _TupleMeta(_Base):
    """Stores a tuple in meta (Sec. 3.2)."""

    name = "TestTupleMeta"

    def generate(self, record, rng, res, prompt=None, state=None):
        return [self.perturbed(record, record.text + " um", where=(1, 2))]


class _SetMeta(_Base):
    """Stores a set in meta (Sec. 3.2)."""

    name = "TestSetMeta"

    def generate(self, record, rng, res, prompt=None, state=None):
        return [self.perturbed(record, record.text + " um", words={"um"})]


class _NoCitation(_Base):
    """Appends a word."""

    name = "TestNoCitation"


class _Mutates(_Base):
    """Writes into the record's meta (Sec. 3.2)."""

    name = "TestMutates"

    def generate(self, record, rng, res, prompt=None, state=None):
        record.meta["seen"] = True  # type: ignore[index]
        return super().generate(record, rng, res, prompt, state)


class _Unchanged(_Base):
    """Returns the source unchanged (Sec. 3.2)."""

    name = "TestUnchanged"

    def generate(self, record, rng, res, prompt=None, state=None):
        return [self.perturbed(record, record.text)]


class _OrderDependent(_Base):
    """Numbers its outputs with a counter kept across records (Sec. 3.2)."""

    name = "TestOrderDependent"

    def __init__(self, **params):
        super().__init__(**params)
        self.n = 0

    def generate(self, record, rng, res, prompt=None, state=None):
        self.n += 1
        return [self.perturbed(record, f"{record.text} {self.n}")]


class _IgnoresApplies(_Base):
    """Claims to apply to nothing but overrides examples() (Sec. 3.2)."""

    name = "TestIgnoresApplies"

    def applies_to(self, record, prompt):
        return record.gold is not None and record.gold >= 2

    def examples(self, record, rng, res, prompt=None, state=None):
        self.check_record(record)
        return self.generate(record, rng, res, prompt, state)


class _Unpicklable(_Base):
    """Holds a lambda (Sec. 3.2)."""

    name = "TestUnpicklable"

    def __init__(self, **params):
        super().__init__(**params)
        self.f = lambda x: x


class _ReloadedState:
    """A fit state that marks itself when unpickled, so its copy hashes differently from the original."""

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d, reloaded=True)


class _UnstableFitState(_Base):
    """Fits a state whose pickled copy is not the same state (Sec. 3.2)."""

    name = "TestUnstableFitState"
    needs_fit = True

    def fit(self, records, prompt, res):
        return _ReloadedState(sorted({w for r in records for w in r.text.split()}))


class _Greedy(SearchAttack):
    """Asks far more than its budget, one candidate at a time (Jia & Liang 2017, Sec. 3.3 AddAny's greedy
    search taken too far): the oracle must stop it."""

    name = "TestGreedy"
    task = "content"
    family = "test"
    paper = "test"
    description = "test"
    expect = "same-score"
    record_type = ScoredResponse

    def search(self, record, oracle, rng, res, prompt=None, state=None):
        best = None
        for i in range(1000):
            out = oracle.ask([f"{record.text} {i}", f"{record.text} {i}!"])
            if out:
                best = f"{record.text} {i}"
        return [self.perturbed(record, best)] if best else []


class _Cheater(_Greedy):
    """Reaches past the oracle to the target (Sec. 3.3)."""

    name = "TestCheater"

    def search(self, record, oracle, rng, res, prompt=None, state=None):
        target = oracle._Oracle__target  # noqa: SLF001 - deliberately breaking the rules
        for i in range(oracle.budget + 5):
            target.predict([oracle._Oracle__to_input(f"{record.text} {i}")])
        return [self.perturbed(record, record.text + " x")]


class _BadGenerator(_BigramGenerator):
    """Ignores index and makes junk (Ding et al. 2020, Sec. 2.2)."""

    name = "TestBadGenerator"

    def generate_one(self, index, prompt, state, rng, res):
        return self.generated(prompt, "   ", index)


class _SharedRngGenerator(_BigramGenerator):
    """Keeps one generator across answers, so splits change the bytes (Ding et al. 2020, Sec. 2.2)."""

    name = "TestSharedRngGenerator"

    def __init__(self, **params):
        super().__init__(**params)
        self.rng = np.random.default_rng(0)

    def generate_one(self, index, prompt, state, rng, res):
        return self.generated(prompt, f"word{int(self.rng.integers(0, 10**9))}", index)


@pytest.mark.parametrize("cls, check", [
    (_GlobalRandom, "check_deterministic"),
    (_TupleMeta, "check_meta_json"),
    (_SetMeta, "check_meta_json"),
    (_NoCitation, "check_docstring_cites_section"),
    (_Mutates, "check_sources_unchanged"),
    (_Unchanged, "check_examples_differ_from_source"),
    (_OrderDependent, "check_order_and_chunking"),
    (_IgnoresApplies, "check_not_applicable"),
    (_Unpicklable, "check_pickles"),
    (_UnstableFitState, "check_fit_state"),
    (_Cheater, "check_search_budget"),
    (_BadGenerator, "check_examples_differ_from_source"),
    (_SharedRngGenerator, "check_order_and_chunking"),
], ids=lambda x: x if isinstance(x, str) else x.name)
def test_broken_attacks_fail_the_kit(cls, check) -> None:
    with registered(cls):
        with pytest.raises(AttackCheckError, match=check):
            check_attack(cls(count=6) if issubclass(cls, PromptGenerator) else cls)


# -- expected failures: a check that applies but that an attack legitimately cannot pass -------------------

UNCHANGED_EXCUSED = {"TestUnchanged": {"check_examples_differ_from_source": "returns its source (test)"}}


def test_check_attack_requires_an_expected_failure_to_fail() -> None:
    with registered(_Unchanged):
        check_attack(_Unchanged, expected_failures=UNCHANGED_EXCUSED)  # the listed check fails, as declared
        stale = {"TestUnchanged": {**UNCHANGED_EXCUSED["TestUnchanged"], "check_meta_json": "stale entry"}}
        with pytest.raises(AttackCheckError, match=r"passes check_meta_json, listed in expected_failures "
                                                   r"\(stale entry\); remove the entry"):
            check_attack(_Unchanged, expected_failures=stale)
        with pytest.raises(AttackCheckError, match="check_examples_differ_from_source"):
            check_attack(_Unchanged)  # not excused: the failure is reported


@pytest.mark.parametrize(("entry", "message"), [
    ({"TestNobody": {"check_meta_json": "x"}}, r"names attack 'TestNobody', which is not among the attacks"),
    ({"TestUnchanged": {"check_search_budget": "x"}}, r"names 'check_search_budget', which is not run on "
                                                      r"TestUnchanged \(its checks: check_declaration, "),
    ({"TestUnchanged": {"check_fit_state": "x"}}, r"names 'check_fit_state', which is not run on TestUnchanged"),
    ({"TestUnchanged": {"check_meta_jsn": "x"}}, r"names 'check_meta_jsn', which is not run"),
    ({"TestUnchanged": {"check_meta_json": " "}}, r"give the reason as a non-empty string"),
])
def test_expected_failures_must_name_a_check_the_attack_gets(entry: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parametrize_attack_checks([_Unchanged], expected_failures=entry)
    with pytest.raises(ValueError, match=message):
        check_attack(_Unchanged, expected_failures=entry)


def test_parametrize_marks_expected_failures_strict_xfail() -> None:
    mark = parametrize_attack_checks([_Unchanged, _Greedy], expected_failures=UNCHANGED_EXCUSED)
    marks = dict(zip(mark.kwargs["ids"], (p.marks for p in mark.args[1])))
    assert len(marks) == len(COMMON) + len(COMMON) + 1  # static: the common checks; search: + the budget check
    [xfail] = marks.pop("TestUnchanged-check_examples_differ_from_source")
    assert xfail.name == "xfail"
    assert xfail.kwargs == {"strict": True, "raises": AttackCheckError, "reason": "returns its source (test)"}
    assert not any(marks.values())


KIT_MODULE = '''
from callbluff.attacks.base import StaticAttack
from callbluff.records import ScoredResponse
from callbluff.testing import parametrize_attack_checks


class Unchanged(StaticAttack):
    """Returns the source unchanged (Sec. 3.2)."""

    name = "TmpUnchanged"
    task = "content"
    family = "test"
    paper = "test"
    description = "test"
    expect = "lower"
    record_type = ScoredResponse

    def generate(self, record, rng, res, prompt=None, state=None):
        return [self.perturbed(record, record.text)]


@parametrize_attack_checks([Unchanged], expected_failures={"TmpUnchanged": {
    "check_examples_differ_from_source": "returns its source",
    "check_meta_json": "listed, but it passes"}})
def test_kit(attack, check):
    check(attack)
'''


def test_expected_failures_run_as_strict_xfail_in_pytest(tmp_path: Path) -> None:
    """A third party's test module: the excused check is an xfail; an excused check that passes fails the run."""
    (tmp_path / "test_kit_module.py").write_text(KIT_MODULE)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfx", "-p", "no:cacheprovider",
                        "test_kit_module.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "1 failed, 10 passed, 1 xfailed" in r.stdout, r.stdout + r.stderr
    assert "test_kit[TmpUnchanged-check_meta_json]" in r.stdout and "[XPASS(strict)] listed, but it passes" in r.stdout
    assert "XFAIL test_kit_module.py::test_kit[TmpUnchanged-check_examples_differ_from_source]" in r.stdout


def test_a_greedy_search_cannot_exceed_its_budget() -> None:
    with registered(_Greedy):
        check_attack(_Greedy(query_budget=7))
        records, prompts = default_records("content")
        target = DeterministicTarget(prompts)
        oracle = Oracle(target, lambda t: Input("content", t, "kit-content"), 7)
        [ex] = _Greedy(query_budget=7).examples(records[0], oracle, np.random.default_rng(0), Resources())
        assert target.inputs == 7 and oracle.used == 7 and oracle.exhausted
        assert ex.text == records[0].text + " 3"  # the last round that got any answer (4th ask, cut to 1)


def test_declaration_errors_at_registration() -> None:
    class NoExpect(_Base):
        """Sec. 1."""
        name = "TestNoExpect"
        expect = None  # type: ignore[assignment]

    class BadExpect(_Base):
        """Sec. 1."""
        name = "TestBadExpect"
        expect = "higher"  # type: ignore[assignment]

    class BadRequires(_Base):
        """Sec. 1."""
        name = "TestBadRequires"
        requires = ("telepathy",)

    class BadParams(_Greedy):
        """Sec. 1."""
        name = "TestBadParams"
        Params = GeneratorParams

    for cls, msg in ((NoExpect, "must declare expect"), (BadExpect, "must declare expect"),
                     (BadRequires, "unknown requirement.*telepathy"), (BadParams, "must subclass SearchParams")):
        with pytest.raises(TypeError, match=msg):
            with registered(cls):
                pass
        with pytest.raises(KeyError):
            get_attack(cls.name)
