"""Countermeasures of Ding et al. 2020 Sec. 5.1-5.3 (callbluff.defenses): feature variants, adversarial training
data, noisy answers for the trade-off; `callbluff filter fit|apply`; the generic-corpus requirement."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.countermeasures.adversarial_training import adversarial_training_set
from callbluff.defenses import FEATURE_VARIANTS, feature_variant, noisy_answer
from callbluff.countermeasures.battery import battery
from callbluff.defenses.tradeoff import same_score_pct
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.typos import TypoCorpus, load_corpus
from helpers import shared_path

P = Prompt("p", "content", score_min=0, score_max=3)
TYPOS = TypoCorpus({"bamboo": ("bambo", "bambboo"), "pandas": ("pandaz",), "eat": ("eet",), "koalas": ("koalaz",)})
ANSWERS = ["Pandas eat bamboo, and koalas eat eucalyptus.", "Both are specialists: pandas eat bamboo only.",
           "Koalas live in Australia and pandas in China.", "They eat one plant, so they are specialists."] * 6


def _records(texts: list[str], prompt: str = "p") -> list[ScoredResponse]:
    return [ScoredResponse(f"{prompt}-{i}", prompt, t, (float(i % 4),)) for i, t in enumerate(texts)]


def test_noisy_answer_replaces_the_asked_share_with_real_misspellings() -> None:
    text = "Pandas eat bamboo, and koalas eat eucalyptus."  # 7 words, 5 with misspellings in TYPOS
    out, replaced, words = noisy_answer(text, 0.3, TYPOS, np.random.default_rng(0))
    assert (replaced, words) == (2, 7)
    changed = [(a, b) for a, b in zip(text.split(), out.split(), strict=True) if a != b]
    assert len(changed) == 2
    for a, b in changed:
        core = a.strip(",.")
        assert b.strip(",.") in TYPOS.typos(core) and b.endswith(a[len(core):])  # punctuation kept
    assert noisy_answer(text, 0.3, TYPOS, np.random.default_rng(0))[0] == out  # seeded
    assert noisy_answer(text, 0.0, TYPOS, np.random.default_rng(0)) == (text, 0, 7)
    # more asked than the corpus can misspell: every misspellable word, and the achieved count says so
    assert noisy_answer(text, 1.0, TYPOS, np.random.default_rng(0))[1] == 5
    assert noisy_answer("", 0.5, TYPOS, np.random.default_rng(0)) == ("", 0, 0)
    with pytest.raises(ValueError, match="rate=2"):
        noisy_answer(text, 2, TYPOS, np.random.default_rng(0))


def test_noisy_answers_from_the_real_typo_corpora() -> None:
    typos = load_corpus([shared_path("data", "typos", "missp.dat.gz"), shared_path("data", "typos", "wikipedia.dat")])
    text = "The panda and the koala both depend on a single food source, which makes them specialists."
    out, replaced, words = noisy_answer(text, 0.5, typos, np.random.default_rng(3))
    assert words == 16 and replaced == 8
    assert sum(a != b for a, b in zip(text.split(), out.split(), strict=True)) == 8


def test_same_score_pct() -> None:
    assert same_score_pct([0, 1, 2, 3], [0, 1, 1, float("nan")]) == pytest.approx(200 / 3)


def test_feature_variants_are_the_papers() -> None:
    assert FEATURE_VARIANTS["no-char-no-unigram"] == ("word_2_5", "length")
    assert "dep_triples" in FEATURE_VARIANTS["paper+dep"] and "pos_ngrams" in FEATURE_VARIANTS["paper+pos"]
    assert feature_variant("no-char-no-unigram", tune=False).features == ("word_2_5", "length")
    with pytest.raises(ValueError, match="known: paper"):
        feature_variant("nope")


def test_adversarial_training_set_labels_generated_answers_wrong() -> None:
    cfgs = [{"attack": "RandomChars", "params": {}}, {"attack": "PromptWords", "params": {"n": 2}},
            {"attack": "Shuffle", "params": {"min_score": 2}}]
    out = adversarial_training_set(_records(ANSWERS), {"p": P, "empty": Prompt("empty", "content")}, total=30,
                                   configs=cfgs, seed=5)
    mine = [r for r in out if r.prompt_id == "p"]
    assert len(mine) == 30 and all(r.gold == 0.0 for r in mine) and len({r.id for r in out}) == len(out)
    assert sum(r.id.startswith("adv-p-RandomChars") for r in mine) == 10
    assert not [r for r in out if r.prompt_id == "empty" and r.text.strip() == ""]
    again = adversarial_training_set(_records(ANSWERS), {"p": P}, total=30, configs=cfgs, seed=5)
    assert [r.text for r in again] == [r.text for r in mine]


def test_battery_reports_configurations_that_cannot_run() -> None:
    errors: list[str] = []
    out = battery(_records(ANSWERS), P, 3, configs=[{"attack": "RandomWords", "params": {"corpus": "/no/such"}},
                                                   {"attack": "RandomChars", "params": {}}], errors=errors)
    assert {a.config for a in out} == {"RandomChars"} and len(out) == 3
    assert len(errors) == 1 and "RandomWords" in errors[0] and "/no/such" in errors[0]


def test_cli_filter_fit_and_apply(tmp_path: Path) -> None:
    data = tmp_path / "answers.jsonl"
    rows = [{"id": f"a{i}", "prompt_id": "p", "text": t, "score": i % 4} for i, t in enumerate(ANSWERS)]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    spec = f"jsonl:{data}?task=content&score_min=0&score_max=3"
    runner = CliRunner()
    r = runner.invoke(app, ["filter", "fit", "--data", spec, "--kind", "unigram-perplexity", "--out",
                            str(tmp_path / "f")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "f" / "filter.json").read_text())["prompts"]["p"]["n_fit"] == len(ANSWERS)
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "n1", "prompt_id": "p", "text": "pandas eat bamboo", "score": 0}) + "\n"
                   + json.dumps({"id": "n2", "prompt_id": "p", "text": "zebras eat grass", "score": 0}) + "\n")
    r = runner.invoke(app, ["filter", "apply", "--filter", str(tmp_path / "f"), "--data",
                            f"jsonl:{new}?task=content&score_min=0&score_max=3", "--out", str(tmp_path / "o.jsonl")])
    assert r.exit_code == 0, r.output
    flags = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [(f["id"], f["flagged"]) for f in flags] == [("n1", False), ("n2", True)]
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "o1", "prompt_id": "q", "text": "pandas", "score": 0}) + "\n")
    r = runner.invoke(app, ["filter", "apply", "--filter", str(tmp_path / "f"), "--data",
                            f"jsonl:{other}?task=content&score_min=0&score_max=3"])
    assert r.exit_code == 2 and "fitted on prompts ['p']" in r.output and "['q']" in r.output
    r = runner.invoke(app, ["filter", "fit", "--data", spec, "--kind", "magic", "--out", str(tmp_path / "g")])
    assert r.exit_code == 2 and "use one of" in r.output


def test_generic_corpus_requirement_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from callbluff.resources import requirements

    monkeypatch.setenv("CALLBLUFF_HOME", str(tmp_path))
    msg = requirements.REQUIREMENTS["generic-corpus"].check()
    assert msg is not None and "squad_fetch" in msg and "corpus=PATH" in msg
