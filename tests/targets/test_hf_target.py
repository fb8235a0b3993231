"""HFTarget / qa_predict on the shared minilm-l6-squad reader and real SQuAD v1.1 dev questions."""

from __future__ import annotations

import collections
import gzip
import json
import random
import re
import string
from pathlib import Path

import pytest

from callbluff.targets import Input, from_config

pytest.importorskip("transformers", reason="HF targets need the 'hf' extra (torch + transformers)")


def _norm(s: str) -> str:
    """SQuAD v1.1 official answer normalisation (lower, no punctuation/articles, single spaces)."""
    s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())


def _f1(pred: str, gold: str) -> float:
    p, g = _norm(pred).split(), _norm(gold).split()
    common = sum((collections.Counter(p) & collections.Counter(g)).values())
    if not common:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


@pytest.fixture(scope="module")
def model_dir(shared_models: Path) -> Path:
    path = shared_models / "minilm-l6-squad"
    if not (path / "config.json").is_file():
        pytest.skip(f"needs the shared reader at {path} (see ../shared/models/README.md)")
    return path


@pytest.fixture(scope="module")
def shared_models() -> Path:
    from conftest import SHARED  # tests/conftest.py: ../shared beside the repository

    if not (SHARED / "models").is_dir():
        pytest.skip(f"needs {SHARED / 'models'} (set CALLBLUFF_SHARED to the shared directory)")
    return SHARED / "models"


@pytest.fixture(scope="module")
def squad_dev() -> list[tuple[str, str, list[str]]]:
    from conftest import SHARED

    path = SHARED / "data" / "squad-v1.1" / "dev-v1.1.json.gz"
    if not path.is_file():
        pytest.skip(f"needs SQuAD v1.1 dev at {path}")
    with gzip.open(path) as fh:
        data = json.loads(fh.read())
    return [(qa["question"], p["context"], [a["text"] for a in qa["answers"]])
            for art in data["data"] for p in art["paragraphs"] for qa in p["qas"]]


@pytest.fixture(scope="module")
def reader(model_dir: Path):
    t = from_config({"type": "hf", "model_dir": str(model_dir), "task": "question-answering", "top_k": 5})
    yield t
    t.close()


@pytest.mark.slow
def test_squad_dev_exact_match(reader, squad_dev):
    sample = random.Random(0).sample(squad_dev, 20)
    outs = reader.predict([Input("reading", q, context=c) for q, c, _ in sample])
    em = sum(max(_norm(o.answer) == _norm(g) for g in gold) for o, (_, _, gold) in zip(outs, sample)) / len(sample)
    f1 = sum(max(_f1(o.answer, g) for g in gold) for o, (_, _, gold) in zip(outs, sample)) / len(sample)
    # README: EM 58.8 / F1 70.0 on 1,000 dev questions. Measured with this decoding: this fixed sample of 20
    # gives EM 0.65 / F1 0.77; random.Random(0).sample(dev, 200) gives EM 0.615 / F1 0.71.
    assert 0.45 <= em <= 0.85, em
    assert 0.55 <= f1 <= 0.9, f1
    for o, (q, c, _) in zip(outs, sample):
        assert o.ok and o.answer and o.answer in c
        assert 1 <= len(o.candidates) <= 5 and o.candidates[0].text == o.answer
        scores = [cand.score for cand in o.candidates]
        assert scores == sorted(scores, reverse=True)
        assert len({cand.text for cand in o.candidates}) == len(o.candidates)
    assert reader.stats.inputs == len(sample) and reader.stats.errors == 0


@pytest.mark.slow
def test_answer_beyond_the_first_window_is_found(reader, squad_dev):
    from callbluff.targets.hf import qa_predict

    q, c, gold = next(x for x in squad_dev if x[0].startswith("Which NFL team represented the AFC"))
    filler = " ".join(["The weather in the region was mild and unremarkable that week."] * 36)
    long_ctx = filler + " " + c  # the answer paragraph now starts ~470 tokens in: only later windows see it
    model, tok = reader._model, reader._tokenizer
    [short] = qa_predict(model, tok, [q], [c], top_k=3)
    [long] = qa_predict(model, tok, [q], [long_ctx], top_k=3)
    assert short[0].text in gold and long[0].text in gold
    assert long[0].score == pytest.approx(short[0].score, abs=1.0)  # logit sums, comparable across contexts
    [prob] = qa_predict(model, tok, [q], [c], top_k=3, scores="probability")
    assert prob[0].text == short[0].text and 0 < prob[0].score <= 1
    assert sum(x.score for x in prob) <= 1.0 + 1e-6


def test_missing_context_and_fingerprint(reader, model_dir: Path):
    [o] = reader.predict([Input("reading", "Who?")])
    assert o.error == "question-answering needs Input.context (the paragraph to answer from)"
    from callbluff.targets import HFTarget

    assert HFTarget(model_dir).fingerprint == reader.fingerprint
    assert HFTarget(model_dir, stride=64).fingerprint != reader.fingerprint
    with pytest.raises(FileNotFoundError, match="no Hugging Face model"):
        HFTarget(model_dir.parent / "no-such-model")
    with pytest.raises(ValueError, match="task must be one of"):
        HFTarget(model_dir, task="summarization")
