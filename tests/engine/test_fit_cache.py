"""Fitted states persisted across runs (callbluff.resources.fit_cache): a second run reads the state instead of
fitting, gets the same bytes, and refits when the records, params or switch say so; BabelGen's vocabulary is
kept on disk the same way."""

from __future__ import annotations

import pytest

from callbluff.attacks.essay import BabelGen
from callbluff.attacks.essay import generate as babel
from callbluff.resources import fit_cache
from callbluff.engine.generate import AttackSpec, fit_states
from callbluff.records import Prompt, ScoredResponse

PROMPT = Prompt("p1", "Write about computers and your family.")
KEYWORDS = {"keywords": ["computer", "family", "friend"]}
TINY = {"N": (("zephyr", "zephyrs"),), "V": (("obfuscate", "obfuscates", "obfuscated", "obfuscating"),),
        "A": (("lugubrious",),), "R": (("lugubriously",),)}


def records(extra: str = "") -> list[ScoredResponse]:
    return [ScoredResponse("e1", "p1", "Computers help my family." + extra, (3.0,)),
            ScoredResponse("e2", "p1", "My friend has a computer at home.", (2.0,))]


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """A fresh cache directory and a count of BabelGen.fit calls."""
    monkeypatch.setenv("CALLBLUFF_HOME", str(tmp_path))
    monkeypatch.delenv(fit_cache.ENV_SWITCH, raising=False)
    calls = []
    real = BabelGen.fit

    def fit(self, recs, prompt, res):
        calls.append(prompt.id if prompt else None)
        return real(self, recs, prompt, res)

    monkeypatch.setattr(BabelGen, "fit", fit)
    monkeypatch.setattr(BabelGen, "_vocabulary", lambda self: TINY)  # not the ~20 s WordNet scan
    return calls


def test_second_run_reads_the_state_and_gets_the_same_bytes(counted, tmp_path) -> None:
    spec = AttackSpec.make("BabelGen", KEYWORDS)
    first = fit_states([spec], records(), {"p1": PROMPT})
    second = fit_states([spec], records(), {"p1": PROMPT})
    assert counted == ["p1"]
    assert second == first and second[(spec, "p1")]["mean_words"] == pytest.approx(5.5)
    attack = BabelGen(**KEYWORDS)
    assert attack.state_hash(first[(spec, "p1")]) == attack.state_hash(second[(spec, "p1")])
    assert len(list((tmp_path / "fit-states").rglob("*.pickle"))) == 1


def test_changed_records_params_or_switch_refit(counted, monkeypatch) -> None:
    spec = AttackSpec.make("BabelGen", KEYWORDS)
    fit_states([spec], records(), {"p1": PROMPT})
    fit_states([spec], records(" And more."), {"p1": PROMPT})  # other records: other key
    assert len(counted) == 2
    fit_states([AttackSpec.make("BabelGen", {**KEYWORDS, "count": 3})], records(), {"p1": PROMPT})
    assert len(counted) == 3
    monkeypatch.setenv(fit_cache.ENV_SWITCH, "0")
    fit_states([spec], records(), {"p1": PROMPT})
    assert len(counted) == 4


def test_attacks_that_do_not_opt_in_are_fitted_every_time(counted, monkeypatch) -> None:
    monkeypatch.setattr(BabelGen, "fit_fingerprint", lambda self: None)
    spec = AttackSpec.make("BabelGen", KEYWORDS)
    fit_states([spec], records(), {"p1": PROMPT})
    fit_states([spec], records(), {"p1": PROMPT})
    assert len(counted) == 2


def test_an_unreadable_cached_state_is_refitted(counted, tmp_path) -> None:
    spec = AttackSpec.make("BabelGen", KEYWORDS)
    first = fit_states([spec], records(), {"p1": PROMPT})
    for p in (tmp_path / "fit-states").rglob("*.pickle"):
        p.write_bytes(b"not a pickle")
    assert fit_states([spec], records(), {"p1": PROMPT}) == first and len(counted) == 2


def test_babel_vocabulary_is_kept_on_disk(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CALLBLUFF_HOME", str(tmp_path))
    monkeypatch.delenv(fit_cache.ENV_SWITCH, raising=False)
    built = []

    def build(*args):
        built.append(args)
        return TINY

    monkeypatch.setattr(babel, "build_babel_vocabulary", build)
    uncached = babel.babel_vocabulary.__wrapped__  # past the in-memory cache: each call is a fresh process
    assert uncached(1.0, 2.0, 5) == TINY and uncached(1.0, 2.0, 5) == TINY
    assert built == [(1.0, 2.0, 5)]
    assert uncached(1.0, 2.5, 5) == TINY and len(built) == 2  # other arguments: built again


def test_the_cache_directory_can_be_chosen(counted, monkeypatch, tmp_path) -> None:
    elsewhere = tmp_path / "bench"
    monkeypatch.setenv(fit_cache.ENV_DIR, str(elsewhere))
    spec = AttackSpec.make("BabelGen", KEYWORDS)
    fit_states([spec], records(), {"p1": PROMPT})
    fit_states([spec], records(), {"p1": PROMPT})
    assert len(counted) == 1 and len(list((elsewhere / "fit-states").rglob("*.pickle"))) == 1
    assert not (tmp_path / "fit-states").exists()


def test_a_cache_that_cannot_be_written_does_not_stop_the_fit(counted, monkeypatch, tmp_path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setenv(fit_cache.ENV_DIR, str(blocked))
    spec = AttackSpec.make("BabelGen", KEYWORDS)
    state = fit_states([spec], records(), {"p1": PROMPT})[(spec, "p1")]
    assert state["keywords"] == KEYWORDS["keywords"] and counted == ["p1"]
    assert fit_cache.store("k" * 64, lambda: None) is False  # unpicklable: not stored, no error
