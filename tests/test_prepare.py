"""`callbluff prepare` builds the one-time caches once: built, then cached (nothing rebuilt), skipped with the
fix when an input is missing, failed when the build raises or writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import callbluff.prepare as prep
from callbluff.cli import app
from callbluff.resources.paths import cache_dir
from callbluff.resources.requirements import check_requirements


def _file_step(name: str, builds: list[str], requires: tuple[str, ...] = ()) -> prep.Step:
    def target() -> Path:
        return cache_dir("test-prepare") / f"{name}.json"

    def build() -> None:
        builds.append(name)
        target().write_text(json.dumps({"built": name}))

    return prep.Step(name, f"test cache {name}", requires, lambda: target().is_file(), build)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CALLBLUFF_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_built_once_then_cached(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[str] = []
    monkeypatch.setattr(prep, "STEPS", (_file_step("a", builds), _file_step("b", builds)))
    lines: list[str] = []
    first = prep.prepare(log=lines.append)
    assert [(r.name, r.status) for r in first] == [("a", "built"), ("b", "built")]
    assert (home / "test-prepare" / "a.json").is_file()
    second = prep.prepare(log=lines.append)
    assert [(r.name, r.status) for r in second] == [("a", "cached"), ("b", "cached")]
    assert builds == ["a", "b"]  # nothing rebuilt the second time
    assert "prepare a: built in" in lines[1] and "prepare a: cached in" in lines[5]
    assert [r.name for r in prep.prepare(["b"], log=lines.append)] == ["b"]


def test_missing_input_is_skipped_with_the_fix(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[str] = []
    monkeypatch.setattr(prep, "STEPS", (_file_step("a", builds, requires=("no-such-resource",)),
                                        _file_step("b", builds)))
    results = prep.prepare(log=lambda m: None)
    assert results[0].status == "skipped" and "unknown requirement 'no-such-resource'" in results[0].detail
    assert results[1].status == "built" and builds == ["b"]  # the other steps still run


def test_a_build_that_raises_or_writes_nothing_fails(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> None:
        raise OSError("disk full")

    monkeypatch.setattr(prep, "STEPS", (prep.Step("raises", "x", (), lambda: False, boom),
                                        prep.Step("silent", "y", (), lambda: False, lambda: None)))
    raises, silent = prep.prepare(log=lambda m: None)
    assert (raises.status, raises.detail) == ("failed", "OSError: disk full")
    assert silent.status == "failed" and "no cache file was written" in silent.detail
    assert prep.main([]) == 1
    monkeypatch.setattr(prep, "FETCHES", ())  # the command fetches first; nothing to fetch here
    res = CliRunner().invoke(app, ["prepare"])
    assert res.exit_code == 1 and "a step failed" in res.output


def test_unknown_step_is_refused() -> None:
    with pytest.raises(ValueError,
                       match="unknown prepare step.*nope.*choose from reading-lexicon, dpaeg-dictionary, generic-ngrams"):
        prep.prepare(["nope"])
    assert prep.main(["nope"]) == 2
    res = CliRunner().invoke(app, ["prepare", "nope"])
    assert res.exit_code == 2 and "reading-lexicon" in res.output


def test_dpaeg_dictionary_is_the_file_dpaeg_reads(home: Path) -> None:
    if check_requirements(["wordnet", "wordfreq"]):
        pytest.skip(f"WordNet/wordfreq missing: {check_requirements(['wordnet', 'wordfreq'])}")
    from callbluff.attacks.questions import words

    words.dictionary.cache_clear()  # another test may have loaded it from the default cache
    try:
        (r,) = prep.prepare(["dpaeg-dictionary"], log=lambda m: None)
        assert r.status == "built"
        path = words.dictionary_path()
        assert path.is_relative_to(home) and len(json.loads(path.read_text())) > 30_000
        (again,) = prep.prepare(["dpaeg-dictionary"], log=lambda m: None)
        assert again.status == "cached"
        assert words.dictionary().size == 40_000  # DPAEG's own loader reads what prepare wrote
    finally:
        words.dictionary.cache_clear()


def test_lexicon_readiness_follows_its_cache_files(home: Path, tmp_path: Path) -> None:
    from callbluff.attacks.reading.lexicon import _cache_key, lexicon_cached

    corpus = tmp_path / "squad.json"
    assert not lexicon_cached(corpus)  # no corpus: not cached
    corpus.write_text(json.dumps({"data": [{"paragraphs": [{"context": "Ada wrote to Babbage."}]}]}))
    assert not lexicon_cached(corpus, paragraphs=10)
    _, _, base = _cache_key(corpus, 10, 2, 30_000)
    base.with_suffix(".npz").write_bytes(b"x")
    assert not lexicon_cached(corpus, paragraphs=10)  # both files are needed
    base.with_suffix(".json").write_text("{}")
    assert lexicon_cached(corpus, paragraphs=10) and base.is_relative_to(home)
    assert not lexicon_cached(corpus, paragraphs=11)  # other parameters, other cache


def test_generic_ngrams_readiness_follows_the_files_the_generators_write(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The step is ready exactly when every table the generic generators load is on disk: one table built the
    generators' way (generic_sampler) is found, and the step stays not ready until all ten are there."""
    if check_requirements(["generic-corpus"]):
        pytest.skip(f"no generic corpus: {check_requirements(['generic-corpus'])}")
    from callbluff.resources import ngrams
    from callbluff.resources.corpus import CorpusSpec, generic_corpus

    monkeypatch.setenv(ngrams.CACHE_ENV, str(tmp_path / "tables"))
    monkeypatch.setattr(ngrams, "_TABLES", {})
    assert not prep._generic_ngrams_ready()
    ngrams.generic_sampler(CorpusSpec(), "char", 1)  # what GenericChars n=1's fit does
    fingerprint = generic_corpus().fingerprint
    assert ngrams._table_path(fingerprint, "char", 1).is_file()
    assert not prep._generic_ngrams_ready()  # nine tables still missing
    for unit, n in prep.GENERIC_NGRAMS[1:]:
        ngrams._table_path(fingerprint, unit, n).write_bytes(b"")  # stand-ins: readiness looks at the names only
    assert prep._generic_ngrams_ready()


def test_fetches_report_each_step_and_one_that_cannot_run_does_not_stop_the_others(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`callbluff prepare` for a user without the Makefile: a fetch that cannot be had here (WordNet without
    Debian's wordnet-base) is reported as skipped with its cause, and the next fetches still run."""
    def no_wordnet() -> None:
        raise FileNotFoundError("WordNet file data.noun not found in /usr/share/wordnet: install Debian's "
                                "wordnet-base and wordnet-sense-index")

    ran: list[str] = []
    monkeypatch.setattr(prep, "FETCHES", (prep.Fetch("wordnet", "w", no_wordnet),
                                          prep.Fetch("squad", "s", lambda: ran.append("squad"))))
    lines: list[str] = []
    wordnet, squad = prep.fetch_resources(log=lines.append)
    assert wordnet.status == "skipped" and "wordnet-base" in wordnet.detail
    assert squad.status == "ready" and ran == ["squad"]
    assert any("prepare wordnet: skipped" in line and "wordnet-base" in line for line in lines)
    monkeypatch.setattr(prep, "STEPS", ())
    res = CliRunner().invoke(app, ["prepare"])
    assert res.exit_code == 0 and "wordnet: skipped" in res.output and "1 step(s) left out" in res.output
