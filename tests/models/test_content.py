"""ContentScorer (Ding et al. 2020 Sec. 3.1 shallow system): hand-made cases and a real ASAP-SAS prompt."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from callbluff.metrics import qwk
from callbluff.models import load_model
from callbluff.models.content import ContentScorer, LinearOvO
from callbluff.models.features import PAPER_GROUPS, ContentFeaturizer
from callbluff.records import Prompt, ScoredResponse
from callbluff.targets.base import Input, Target

PROMPT = Prompt(id="p", task="content", text="Why do plants need sunlight?", score_min=0, score_max=2)

FULL = ["Plants use sunlight for photosynthesis to make glucose from carbon dioxide and water.",
        "Sunlight gives the energy for photosynthesis, which makes sugar from water and carbon dioxide.",
        "Through photosynthesis the plant turns light energy, water and CO2 into glucose and oxygen.",
        "Light drives photosynthesis so the plant can make glucose food from carbon dioxide and water.",
        "The chlorophyll captures sunlight and photosynthesis makes glucose out of water and carbon dioxide.",
        "They need sunlight because photosynthesis uses light energy to produce glucose from CO2 and water."]
PART = ["Plants need sunlight to make food.", "Sunlight helps them make their food.",
        "They use the light to grow food.", "Sunlight is food energy for the plant.",
        "The plant makes food with light.", "Light makes the food for plants."]
NONE = ["I like my dog very much.", "The weather is nice today.", "Plants are green.",
        "I do not know the answer.", "My favourite colour is blue.", "Dogs bark at night."]


def _records(texts: list[str], score: int, start: int = 0) -> list[ScoredResponse]:
    return [ScoredResponse(id=f"{score}-{start + i}", prompt_id="p", text=t, scores=(score,))
            for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def toy_train() -> list[ScoredResponse]:
    return _records(FULL, 2) + _records(PART, 1) + _records(NONE, 0)


@pytest.fixture(scope="module")
def toy_model(toy_train: list[ScoredResponse]) -> ContentScorer:
    return ContentScorer(cv=3, C_grid=(0.01, 0.1), length_weight_grid=(1.0, 10.0)).fit(toy_train, {"p": PROMPT})


def test_toy_model_separates_full_partial_and_wrong_answers(toy_model: ContentScorer) -> None:
    s = toy_model.score_texts("p", ["Photosynthesis uses sunlight to make glucose from water and carbon dioxide.",
                                    "The plant makes its food with sunlight.",
                                    "My dog likes the weather."])
    assert s.tolist() == [2.0, 1.0, 0.0]


def test_works_as_a_target_with_inputs(toy_model: ContentScorer) -> None:
    assert isinstance(toy_model, Target)
    assert toy_model.fingerprint.startswith("content-scorer:")
    outs = toy_model.predict([Input("content", "Sunlight lets photosynthesis make glucose.", prompt_id="p"),
                              Input("content", "Dogs bark.", prompt_id=None),  # single-prompt model
                              Input("content", "anything", prompt_id="nope"), Input("content", "", prompt_id="p")])
    assert outs[0].ok and outs[1].ok and outs[3].ok
    assert all(o.score in (0.0, 1.0, 2.0) for o in (outs[0], outs[1], outs[3]))
    assert not outs[2].ok and "nope" in (outs[2].error or "") and "'p'" in (outs[2].error or "")


def test_tuning_summary_records_the_grid_on_train(toy_model: ContentScorer) -> None:
    summ = toy_model.training_summary("p")
    assert len(summ["cv_grid"]) == 2 * 2 * 2  # C x class_weight x length weight
    assert summ["chosen"]["C"] in (0.01, 0.1)
    assert summ["cv_qwk"] == max(row["cv_qwk"] for row in summ["cv_grid"])
    assert summ["classes"] == {"0": 6, "1": 6, "2": 6}


def test_untuned_model_uses_weka_defaults(toy_train: list[ScoredResponse]) -> None:
    m = ContentScorer(tune=False).fit(toy_train, PROMPT)
    assert m.training_summary("p")["chosen"] == {"C": 1.0, "class_weight": None, "length_weight": 1.0}
    assert m.training_summary("p")["cv_grid"] == []


@pytest.mark.parametrize("n_classes", [2, 3, 4])
def test_primal_one_vs_one_equals_libsvm_linear_svc(n_classes: int) -> None:
    from sklearn.svm import SVC

    rng = np.random.default_rng(n_classes)
    X = sparse.csr_matrix((rng.random((90, 40)) < 0.2).astype(float))
    w = rng.normal(size=(40,))
    y = np.digitize(X @ w + rng.normal(scale=0.5, size=90), np.quantile(X @ w, np.linspace(0, 1, n_classes + 1)[1:-1]))
    Xt = sparse.csr_matrix((rng.random((200, 40)) < 0.2).astype(float))
    for cw in (None, "balanced"):
        ref = SVC(kernel="linear", C=0.5, class_weight=cw).fit(X, y)
        ovo = LinearOvO.fit_gram((X @ X.T).toarray(), X, y.astype(float), C=0.5, class_weight=cw)
        assert np.array_equal(ovo.predict(Xt), ref.predict(Xt).astype(float))
        assert len(ovo.pairs) == n_classes * (n_classes - 1) // 2


def test_feature_groups_switch_the_feature_space(toy_train: list[ScoredResponse]) -> None:
    texts = [r.text for r in toy_train]
    paper = ContentFeaturizer(PAPER_GROUPS, max_char=500, max_word=300).fit(texts)
    names = paper.feature_names()
    assert {n.split(":")[0] for n in names} == set(PAPER_GROUPS)
    assert "length:tokens" in names and "word_unigram:photosynthesis" in names and "char:ph" in names
    assert sum(paper.group_sizes().values()) == len(names) == paper.transform(texts).shape[1]
    assert paper.group_sizes()["char"] == 500 and paper.group_sizes()["word_unigram"] + paper.group_sizes()["word_2_5"] == 300

    robust = ContentFeaturizer(["word_2_5", "length"], max_word=300).fit(texts)
    rn = robust.feature_names()
    assert not any(n.startswith(("char:", "word_unigram:")) for n in rn)
    assert all(len(n.split(":", 1)[1].split()) >= 2 for n in rn if n.startswith("word_2_5:"))
    assert robust.transform(["Dogs bark at night."]).shape[1] == len(rn)

    # length is min-max normalised on train and scaled by its weight; not clipped beyond the training max
    lens = [len(t.split()) for t in texts]
    long_text = " ".join(["word"] * (2 * max(lens)))
    b = robust.blocks([long_text])["length"].toarray()[0, 0]
    assert b > 1.0
    assert robust.transform([long_text], {"length": 3.0})[0, -1] == pytest.approx(3 * b)

    with pytest.raises(ValueError, match="unknown content feature group.*charz.*allowed"):
        ContentScorer(features=["charz"])


def test_models_with_other_groups_differ_and_still_score(toy_train: list[ScoredResponse]) -> None:
    a = ContentScorer(features="word_2_5,length", tune=False, C=0.1).fit(toy_train, PROMPT)
    b = ContentScorer(features=PAPER_GROUPS, tune=False, C=0.1).fit(toy_train, PROMPT)
    assert len(a.feature_names("p")) < len(b.feature_names("p"))
    assert a.fingerprint != b.fingerprint
    s = a.score_texts("p", ["sunlight photosynthesis glucose water"])
    assert s[0] in (0.0, 1.0, 2.0)


def test_syntactic_groups_dep_triples_and_pos_ngrams(toy_train: list[ScoredResponse]) -> None:
    pytest.importorskip("spacy")
    texts = [r.text for r in toy_train]
    fz = ContentFeaturizer(["dep_triples", "pos_ngrams"], max_dep=1000, max_pos=50).fit(texts)
    names = fz.feature_names()
    deps = [n for n in names if n.startswith("dep_triples:")]
    assert deps and all(n.count("|") == 2 for n in deps)
    assert "dep_triples:need|nsubj|plant" in names  # "Plants need sunlight ..."
    assert fz.group_sizes()["pos_ngrams"] == 50
    assert any(n == "pos_ngrams:NN" for n in names)
    m = ContentScorer(features=["word_2_5", "length", "dep_triples"], tune=False, C=0.1).fit(toy_train, PROMPT)
    assert m.score_texts("p", ["Photosynthesis makes glucose."])[0] in (0.0, 1.0, 2.0)


def test_save_load_round_trip(toy_model: ContentScorer, tmp_path: Path) -> None:
    toy_model.data_spec = "hand-made:toy"
    d = toy_model.save(tmp_path / "m")
    meta = json.loads((d / "model.json").read_text())
    assert meta["kind"] == "content-scorer" and meta["data"] == "hand-made:toy"
    assert meta["params"]["features"] == list(PAPER_GROUPS)
    assert set(meta["versions"]) >= {"scikit-learn", "numpy", "python"}
    assert meta["metrics"]["p"]["cv_qwk"] == toy_model.training_summary("p")["cv_qwk"]
    assert meta["fingerprint"] == toy_model.fingerprint and meta["trained_at"]
    loaded = load_model(d)
    assert isinstance(loaded, ContentScorer)
    texts = FULL + PART + NONE + ["", "sunlight", "photosynthesis glucose sunlight"]
    assert np.array_equal(loaded.score_texts("p", texts), toy_model.score_texts("p", texts))
    assert loaded.fingerprint == toy_model.fingerprint
    assert np.allclose(loaded.decision_function("p", texts), toy_model.decision_function("p", texts))
    (d / "model.joblib").write_bytes((d / "model.joblib").read_bytes()[:-10])
    with pytest.raises(ValueError, match="state_sha256"):
        ContentScorer.load(d)


def test_fit_errors_name_the_record() -> None:
    with pytest.raises(ValueError, match="id 'x'.*no gold"):
        ContentScorer().fit([ScoredResponse(id="x", prompt_id="p", text="t")])
    with pytest.raises(ValueError, match="outside the prompt's scale"):
        ContentScorer().fit(_records(["a", "b"], 5), {"p": PROMPT})
    with pytest.raises(RuntimeError, match="not trained"):
        _ = ContentScorer().fingerprint


@pytest.mark.slow
def test_real_asap_sas_prompt_well_above_chance(tmp_path: Path) -> None:
    from helpers import shared_path

    from callbluff.datasets import load

    train = load(f"asap-sas:{shared_path('data', 'asap-sas', 'train.tsv.gz')}?prompts=1")
    test = load(f"asap-sas:{shared_path('data', 'asap-sas', 'public_leaderboard_rel_2.tsv.gz')}?prompts=1")
    tr = train.records()[:700]
    te = test.records()
    m = ContentScorer(cv=3, C_grid=(0.001, 0.01), class_weight_grid=(None,), length_weight_grid=(10.0,))
    m.fit(tr, train.prompts)
    outs = m.predict([Input("content", r.text, prompt_id="1") for r in te])
    scores = [o.score for o in outs]
    assert set(scores) <= {0.0, 1.0, 2.0, 3.0}
    k = qwk([r.gold for r in te], scores, score_min=0, score_max=3)
    assert k > 0.6, k  # full model: ~0.75; chance: 0
    assert m.training_summary("1")["cv_qwk"] > 0.5
    # a random-character answer (Ding et al.'s "nswvtnvakgxpm") is at least scored on the scale
    assert m.score_texts("1", ["nswvtnvakgxpm"])[0] in (0.0, 1.0, 2.0, 3.0)
    loaded = ContentScorer.load(m.save(tmp_path / "sas1"))
    assert np.array_equal(loaded.score_texts("1", [r.text for r in te[:100]]), np.array(scores[:100]))


def test_train_content_scorer_saves_metadata_and_eval_metrics(tmp_path: Path) -> None:
    from callbluff.train import train_content_scorer

    meta = train_content_scorer("demo:content?split=train", tmp_path / "m", prompts=["demo-1"],
                                features="word_2_5,length", eval_spec="demo:content?split=test",
                                C_grid=(0.01, 0.1))
    assert meta["kind"] == "content-scorer" and meta["data"] == "demo:content?split=train"
    assert meta["params"]["features"] == ["word_2_5", "length"]
    assert meta["metrics"]["eval_data"] == "demo:content?split=test"
    assert 0.3 < meta["metrics"]["demo-1"]["eval_qwk"] <= 1.0 and "demo-2" not in meta["metrics"]
    saved = json.loads((tmp_path / "m" / "model.json").read_text())
    assert saved["metrics"]["demo-1"]["eval_qwk"] == meta["metrics"]["demo-1"]["eval_qwk"]
    assert load_model(tmp_path / "m").prompt_ids == ["demo-1"]
