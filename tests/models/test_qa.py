"""SlidingWindowQA (hand-made and real SQuAD questions) and TransformerQA (shared minilm-l6-squad)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from callbluff.metrics import em, f1, normalize_answer
from callbluff.models.qa import SlidingWindowQA, TransformerQA
from callbluff.targets.base import Input, Target

PARA = ("The Eiffel Tower was built for the 1889 World's Fair in Paris. It was designed by the engineer "
        "Gustave Eiffel. The tower is 330 metres tall and it is the most visited paid monument in the world.")


def _dev(shared_data: Path, n: int, step: int = 1, paragraphs: int = 1000) -> list[tuple[str, str, list[str]]]:
    """``n`` SQuAD v1.1 dev questions: every ``step``-th question of the first ``paragraphs`` paragraphs of
    each article (few paragraphs keep the spaCy parsing cheap)."""
    path = shared_data / "squad-v1.1" / "dev-v1.1.json.gz"
    if not path.exists():
        pytest.skip(f"needs {path}")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    out = [(q["question"], p["context"], [a["text"] for a in q["answers"]])
           for art in data["data"] for p in art["paragraphs"][:paragraphs] for q in p["qas"]]
    return out[::step][:n]


# -- SlidingWindowQA --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sw() -> SlidingWindowQA:
    return SlidingWindowQA()


def test_sliding_window_hand_made(sw: SlidingWindowQA) -> None:
    qs = ["The tower was designed by which engineer?", "How tall is the tower?"]
    out = sw.predict([Input("reading", q, context=PARA) for q in qs])
    assert isinstance(sw, Target)
    assert all(o.ok for o in out)
    assert "Gustave Eiffel" in out[0].answer
    assert "330" in out[1].answer
    for o in out:
        assert o.answer == o.candidates[0].text
        assert 1 <= len(o.candidates) <= sw.top_k
        scores = [c.score for c in o.candidates]
        assert scores == sorted(scores, reverse=True)
        assert all(c.text in PARA for c in o.candidates)
        assert len({c.text for c in o.candidates}) == len(o.candidates)
        # candidates made only of question words are excluded (paper silent; see docstring)
        assert normalize_answer(o.answer) not in {"eiffel tower", "tower"}


def test_sliding_window_overlap_step_prefers_matching_sentence(sw: SlidingWindowQA) -> None:
    ctx = "Anna lives in Berlin. Her brother Tom moved to Madrid in 2010 after his studies."
    out = sw.predict([Input("reading", "Where did Tom move after his studies?", context=ctx)])[0]
    assert out.answer in {"Madrid", "to Madrid"}
    # the sentence that does not overlap with the question ranks below
    assert all(c.text != "Berlin" for c in out.candidates[:2])


def test_sliding_window_distance_variant_breaks_ties_by_proximity() -> None:
    ctx = ("Rome is old. The festival was held near the river for many years and later it was held in "
           "Lyon. Paris is far away.")
    q = [Input("reading", "Where was the festival held?", context=ctx)]
    base = {c.text: c.score for c in SlidingWindowQA(distance=False, top_k=10).predict(q)[0].candidates}
    dist = {c.text: c.score for c in SlidingWindowQA(distance=True, top_k=10).predict(q)[0].candidates}
    # same overlap and window score without the distance term ...
    assert base["Lyon"] == base["later"]
    # ... "Lyon" is 2 words from "held", "later" 3: Richardson et al.'s d ranks "Lyon" higher
    assert dist["Lyon"] > dist["later"]
    # the sentence without question words ranks last in both variants
    assert max(base["Rome is old"], dist["Rome is old"]) < min(base["Lyon"], dist["Lyon"])
    assert SlidingWindowQA(distance=True).fingerprint != SlidingWindowQA().fingerprint


def test_sliding_window_errors_are_outputs(sw: SlidingWindowQA) -> None:
    out = sw.predict([Input("reading", "Who?"), Input("reading", " ", context=PARA),
                      Input("reading", "Who designed it?", context=PARA)])
    assert not out[0].ok and "context" in (out[0].error or "")
    assert not out[1].ok and "empty question" in (out[1].error or "")
    assert out[2].ok


def test_sliding_window_ngram_candidates_and_save_load(tmp_path: Path) -> None:
    m = SlidingWindowQA(candidates="ngrams", max_answer_words=3, distance=True, top_k=3)
    m.save(tmp_path / "sw")
    m2 = SlidingWindowQA.load(tmp_path / "sw")
    assert m2.params == m.params and m2.fingerprint == m.fingerprint
    inp = [Input("reading", "Who designed the Eiffel Tower?", context=PARA)]
    assert m.predict(inp) == m2.predict(inp)
    assert all(len(c.text.split()) <= 3 for c in m.predict(inp)[0].candidates)
    with pytest.raises(ValueError, match="candidates"):
        SlidingWindowQA(candidates="trees")  # type: ignore[arg-type]
    # process-pool workers get a light pickle (the spaCy pipeline re-loads lazily) that answers the same
    import pickle

    blob = pickle.dumps(m)
    assert len(blob) < 10_000 and pickle.loads(blob).predict(inp) == m.predict(inp)


@pytest.mark.slow
def test_sliding_window_real_squad(shared_data: Path, sw: SlidingWindowQA) -> None:
    dev = _dev(shared_data, 150, paragraphs=1)  # 150 questions over the first paragraphs of 30 articles
    out = sw.predict([Input("reading", q, context=c) for q, c, _ in dev])
    golds = [g for _, _, g in dev]
    preds = [o.answer for o in out]
    # the SQuAD paper reports EM 13.2 / F1 20.2 for this baseline on the whole dev set
    assert f1(preds, golds) > 10.0
    assert em(preds, golds) > 3.0
    assert all(o.answer in c for o, (_, c, _) in zip(out, dev, strict=True))


# -- TransformerQA ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reader() -> TransformerQA:
    from helpers import shared_path

    pytest.importorskip("transformers", reason="TransformerQA needs the 'hf' extra (torch + transformers)")
    path = shared_path("models", "minilm-l6-squad")
    if not (path / "config.json").is_file():
        pytest.skip(f"needs the shared reader at {path} (see ../shared/models/README.md)")
    return TransformerQA(path, top_k=4, num_threads=1)  # one per test process (make test runs two)


@pytest.mark.slow
def test_transformer_qa_on_dev_questions(reader: TransformerQA, shared_data: Path) -> None:
    dev = _dev(shared_data, 20, step=523)
    out = reader.predict([Input("reading", q, context=c) for q, c, _ in dev])
    golds = [g for _, _, g in dev]
    preds = [o.answer for o in out]
    assert em(preds, golds) >= 40.0  # README: EM 58.8 on 1,000 dev questions
    assert f1(preds, golds) >= 50.0
    for o, (_, c, _) in zip(out, dev, strict=True):
        assert o.ok and o.answer == o.candidates[0].text
        assert 1 <= len(o.candidates) <= 4
        assert [x.score for x in o.candidates] == sorted((x.score for x in o.candidates), reverse=True)
        assert all(x.text in c for x in o.candidates)


def test_transformer_qa_contract_and_save_load(reader: TransformerQA, tmp_path: Path) -> None:
    assert isinstance(reader, Target)
    fp = reader.fingerprint
    assert fp.startswith("transformer-qa:minilm-l6-squad:")
    out = reader.predict([Input("reading", "Who designed the Eiffel Tower?", context=PARA),
                          Input("reading", "Who designed it?")])
    assert out[0].ok and "Gustave Eiffel" in out[0].answer
    assert not out[1].ok and "context" in (out[1].error or "")
    import pickle

    blob = pickle.dumps(reader)  # after predict: the loaded model is not pickled along
    assert len(blob) < 10_000 and pickle.loads(blob).fingerprint == fp
    reader.save(tmp_path / "tqa")
    again = TransformerQA.load(tmp_path / "tqa")
    assert again.fingerprint == fp
    other = TransformerQA(reader.model_dir, max_length=256, stride=64)
    assert other.fingerprint != fp  # decoding settings are part of the model version
    with pytest.raises(FileNotFoundError, match="config.json"):
        TransformerQA(tmp_path)
