"""EssayScorer's prompt-overlap statistics (EASE's "prompt-word overlap", Kumar et al. 2020 Sec. 2.2) on the real
ASAP-AES prompt texts and passages of ../shared/data/asap-aes/prompts.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from callbluff.datasets import load
from callbluff.models.essay import EssayScorer
from callbluff.models.features import ESSAY_STAT_NAMES, essay_statistics
from helpers import shared_path

OVERLAP = [ESSAY_STAT_NAMES.index(n) for n in ("prompt_overlap", "prompt_coverage", "source_overlap",
                                               "source_coverage")]


def _set(pid: str, texts: bool = True, n: int = 300):
    tsv = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    shared_path("data", "asap-aes", "prompts.json")
    ds = load(f"asap-aes:{tsv}?prompts={pid}" + ("" if texts else "&prompt_texts=none"))
    return ds.records()[:n], ds.prompts[pid]


def test_overlap_statistics_read_the_prompt_and_the_passage() -> None:
    recs, prompt = _set("5")
    texts = [r.text for r in recs]
    X = essay_statistics(texts, prompt_text=prompt.text, source=prompt.source or "", pos=False, spelling=False)
    assert (X[:, OVERLAP].mean(axis=0) > 0.01).all()
    bare = essay_statistics(texts, pos=False, spelling=False)  # no prompt texts: the four columns are zero
    assert not bare[:, OVERLAP].any()
    assert np.array_equal(np.delete(X, OVERLAP, axis=1), np.delete(bare, OVERLAP, axis=1))
    # Students who use more of the passage's words score higher (set 5: "describe the mood created by the author")
    rho = spearmanr(X[:, ESSAY_STAT_NAMES.index("source_coverage")], [r.gold for r in recs])[0]
    assert rho > 0.4


def test_the_scorer_keeps_the_texts_it_was_trained_with(tmp_path: Path) -> None:
    params = {"pos": False, "spelling": False, "n_estimators": 20, "cv": 2, "cv_metrics": False}
    for texts in (True, False):
        recs, prompt = _set("3", texts, n=200)
        model = EssayScorer(**params).fit(recs, {"3": prompt})
        model.save(tmp_path / str(texts))
        saved = json.loads((tmp_path / str(texts) / "model.json").read_text())
        info = saved["prompts"]["3"]  # model.json says what the scorer was trained with
        assert info["has_prompt_text"] is texts and info["has_source"] is texts
        m = model.models["3"]
        assert (m.prompt_text, m.source) == ((prompt.text, prompt.source) if texts else ("", ""))
