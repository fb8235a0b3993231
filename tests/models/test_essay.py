"""EssayScorer (EASE-like, Kumar et al. 2020 Sec. 2.2) and the essay statistics: hand-made cases and a real
ASAP-AES prompt."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from callbluff.metrics import qwk
from callbluff.models import load_model
from callbluff.models.essay import EssayScorer, holdout_split
from callbluff.models.features import ESSAY_STAT_NAMES, essay_statistics, spelling_vocabulary
from callbluff.records import Prompt, ScoredResponse
from callbluff.targets.base import Input, Target

COL = {n: i for i, n in enumerate(ESSAY_STAT_NAMES)}


def test_statistics_on_a_hand_made_essay() -> None:
    text = ("Dear @CAPS1, computers help people. I beleive they are useful!\n\n"
            "Do they harm us? Maybe, becuase we sit a lot.")
    row = essay_statistics([text], prompt_text="Write about the effects computers have on people.",
                           pos=False)[0]
    assert row[COL["words"]] == 20  # @CAPS1 counts as the word CAPS1
    assert row[COL["sentences"]] == 4
    assert row[COL["question_marks"]] == 1 and row[COL["exclamations"]] == 1
    assert row[COL["anonymised_tokens"]] == 1 and row[COL["paragraphs"]] == 2
    assert row[COL["spelling_errors"]] == 2  # beleive, becuase (CAPS1 is not judged)
    assert row[COL["spelling_error_rate"]] == pytest.approx(2 / 19)  # 19 words judged
    # essay content words (not stop words, > 2 letters) found in the prompt: computers, people out of
    # {dear, computers, help, people, beleive, useful, harm, maybe, becuase, sit, lot}
    assert row[COL["prompt_overlap"]] == pytest.approx(2 / 11)
    assert row[COL["prompt_coverage"]] == pytest.approx(2 / 4)  # of {write, effects, computers, people}
    assert row[COL["source_overlap"]] == 0.0
    assert all(row[COL[f"pos_{t}"]] == 0.0 for t in ("NOUN", "VERB"))  # pos=False


def test_pos_proportions_sum_to_one() -> None:
    pytest.importorskip("spacy")
    row = essay_statistics(["The quick brown fox jumps over the lazy dog."], spelling=False)[0]
    pos = np.array([row[i] for n, i in COL.items() if n.startswith("pos_")])
    assert pos.sum() == pytest.approx(1.0)
    assert row[COL["pos_NOUN"]] > 0 and row[COL["pos_DET"]] == pytest.approx(2 / 10)


def test_spelling_vocabulary_knows_inflections_not_misspellings() -> None:
    vocab, source = spelling_vocabulary()
    assert {"computers", "running", "receive", "because", "koalas"} <= vocab
    assert not {"becuase", "recieve", "beleive", "alot"} & vocab
    assert source


def _toy(n: int, rng: np.random.Generator) -> list[ScoredResponse]:
    good = ["Computers connect people across the world and help students research their essays carefully.",
            "However, spending too many hours online can reduce exercise, so families should set limits.",
            "In conclusion, technology is a powerful tool when it is used with balance and good judgement."]
    out = []
    for i in range(n):
        k = int(rng.integers(0, 4))
        text = " ".join(good[:k]) if k else "i like computr"
        out.append(ScoredResponse(id=str(i), prompt_id="e", text=text + f" Essay {i}.", scores=(float(k),)))
    return out


def test_toy_scorer_orders_essays_and_is_a_target(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    prompt = Prompt(id="e", task="essay", text="Do computers help people?", score_min=0, score_max=3)
    m = EssayScorer(pos=False, n_estimators=50, cv=3).fit(_toy(60, rng), {"e": prompt})
    assert isinstance(m, Target)
    test = _toy(20, np.random.default_rng(1))
    outs = m.predict([Input("essay", r.text, prompt_id="e") for r in test] + [Input("essay", "x", "zzz")])
    assert all(o.ok and o.score in (0.0, 1.0, 2.0, 3.0) for o in outs[:-1])
    assert not outs[-1].ok and "zzz" in (outs[-1].error or "")
    assert qwk([r.gold for r in test], [o.score for o in outs[:-1]], score_min=0, score_max=3) > 0.9
    raw = m.score_texts("e", ["x " * 500], rounded=False)
    assert m.score_texts("e", ["x " * 500])[0] == np.clip(np.floor(raw[0] + 0.5), 0, 3)

    m.data_spec = "hand-made:toy"
    d = m.save(tmp_path / "ess")
    meta = json.loads((d / "model.json").read_text())
    assert meta["kind"] == "essay-scorer" and meta["params"]["pos"] is False
    assert meta["metrics"]["e"]["cv_qwk"] == m.training_summary("e")["cv_qwk"]
    assert meta["prompts"]["e"]["has_prompt_text"] is True
    loaded = load_model(d)
    texts = [r.text for r in test]
    assert np.array_equal(loaded.score_texts("e", texts, rounded=False), m.score_texts("e", texts, rounded=False))
    assert loaded.fingerprint == m.fingerprint == meta["fingerprint"]
    # a different seed trains different trees: a different model version
    other = EssayScorer(pos=False, n_estimators=50, cv=3, seed=14).fit(_toy(60, np.random.default_rng(0)), prompt)
    assert other.fingerprint != m.fingerprint


def test_holdout_split_is_seeded_and_order_free() -> None:
    recs = [ScoredResponse(id=str(i), prompt_id=str(i % 2), text="t", scores=(0.0,)) for i in range(50)]
    tr, te = holdout_split(recs, 0.2, seed=5)
    tr2, te2 = holdout_split(list(reversed(recs)), 0.2, seed=5)
    assert {r.id for r in te} == {r.id for r in te2} and len(te) == 10 and len(tr) == 40
    assert {r.id for r in te} != {r.id for r in holdout_split(recs, 0.2, seed=6)[1]}
    assert sum(r.prompt_id == "0" for r in te) == 5


@pytest.mark.slow
def test_real_asap_aes_prompt_well_above_chance(tmp_path: Path) -> None:
    from helpers import shared_path

    from callbluff.datasets import load

    ds = load(f"asap-aes:{shared_path('data', 'asap-aes', 'training_set_rel3.tsv.gz')}?prompts=3")
    recs = ds.records()[:500]
    tr, te = holdout_split(recs, 0.2, seed=13)
    m = EssayScorer(n_estimators=100, cv=3).fit(tr, ds.prompts)
    pred = m.score_texts("3", [r.text for r in te])
    assert set(pred.tolist()) <= {0.0, 1.0, 2.0, 3.0}
    k = qwk([r.gold for r in te], pred, score_min=0, score_max=3)
    assert k > 0.45, k  # full data ~0.65-0.70; chance 0
    summ = m.training_summary("3")
    assert summ["cv_qwk"] > 0.45 and summ["n_train"] == 400
    loaded = EssayScorer.load(m.save(tmp_path / "aes3"))
    assert np.array_equal(loaded.score_texts("3", [r.text for r in te[:30]]), pred[:30])


def test_train_essay_scorer_with_holdout(tmp_path: Path) -> None:
    from callbluff.models import train_essay_scorer

    meta = train_essay_scorer("demo:essay?split=train", tmp_path / "e", holdout=0.2, pos=False, n_estimators=50)
    (pid,) = [k for k in meta["prompts"]]
    m = meta["metrics"][pid]
    assert m["holdout_n"] == 18 and m["n_train"] == 72 and m["holdout_qwk"] > 0.6  # ~0.95 on the demo essays
    assert meta["holdout"] == {"fraction": 0.2, "seed": 13} and meta["train_seconds"] > 0
    assert json.loads((tmp_path / "e" / "model.json").read_text())["metrics"][pid]["holdout_qwk"] == m["holdout_qwk"]
