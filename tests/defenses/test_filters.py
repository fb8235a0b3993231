"""Filters of Ding et al. 2020 Sec. 5.4 and ours (callbluff.defenses): thresholds, flags, persistence, the
prompt check, bad input, and the FilteredTarget wrapper; one real-data check on ASAP-SAS prompt 3."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from callbluff.attacks.content import PromptChars, PromptWords, RandomChars, Shuffle
from callbluff.datasets.base import load
from callbluff.defenses import (
    FilterPromptError,
    NonWordRateFilter,
    PlausibilityFilter,
    UnigramPerplexityFilter,
    load_filter,
)
from callbluff.defenses.filters import best_threshold, dev_split
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.defenses.filtered import FilteredTarget
from callbluff.engine.target_factory import from_config
from callbluff.targets import CallableTarget
from callbluff.targets.base import Input
from helpers import shared_path

P = Prompt("p", "content", "Explain how pandas and koalas are alike.", score_min=0, score_max=2)
WORDS = ["pandas eat bamboo and koalas eat eucalyptus", "both animals are specialists that eat one plant",
         "the panda and the koala live in small ranges", "koalas sleep most of the day in trees",
         "pandas live in china and koalas in australia", "they both depend on a single food source"]
REAL = [WORDS[i % len(WORDS)] + f" answer {i}" for i in range(60)]
GIBBERISH = ["xqzv plomk trwa bnnq", "zzkt vwqp lkjh", "qqpx mnbvc ttr wkkz", "pfft grblx zqq"] * 10


def _records(texts: list[str], prompt: str = "p") -> list[ScoredResponse]:
    return [ScoredResponse(f"{prompt}-{i}", prompt, t, (float(i % 3),)) for i, t in enumerate(texts)]


def test_best_threshold_maximises_mean_of_arr_and_recall() -> None:
    real = np.array([0.0, 0.0, 0.1, 0.5])
    adv = np.array([0.4, 0.9, 1.0])
    t, a, r = best_threshold(real, adv)
    # flag > 0.1: ARR 100, recall 75 -> mean 87.5 (flag > 0.4 keeps recall 75 but ARR 66.7)
    assert (t, a, r) == (0.1, 100.0, 75.0)


def test_dev_split_is_seeded_and_disjoint() -> None:
    recs = _records(REAL)
    a1, d1 = dev_split(recs, 0.2, 0, "p")
    a2, d2 = dev_split(recs, 0.2, 0, "p")
    assert [r.id for r in d1] == [r.id for r in d2] and len(d1) == 12
    assert not {r.id for r in a1} & {r.id for r in d1}
    assert [r.id for r in dev_split(recs, 0.2, 1, "p")[1]] != [r.id for r in d1]


def test_nonword_filter_flags_gibberish_and_keeps_words() -> None:
    f = NonWordRateFilter(seed=0).fit(_records(REAL), {"p": P}, adversarial={"p": GIBBERISH})
    st = f.summary()["p"]
    assert st["threshold_from"] == "development split" and st["dev_arr"] == 100.0 and st["dev_recall"] == 100.0
    assert f.flag("p", ["mnbvz qwrt plkx", "pandas eat bamboo"]).tolist() == [True, False]
    # a prompt word shared by >= 2 answers enlarges the dictionary: "eucalyptus" is in Hunspell, "koalas" too;
    # an invented word used by many answers becomes a word of the prompt
    g = NonWordRateFilter(seed=0).fit(_records([t + " blorptang" for t in REAL]), {"p": P},
                                      adversarial={"p": GIBBERISH})
    assert g.values("p", ["blorptang"]).tolist() == [0.0]
    assert f.values("p", ["blorptang"]).tolist() == [1.0]


def test_unigram_perplexity_rejects_unseen_words_only() -> None:
    f = UnigramPerplexityFilter().fit(_records(REAL), {"p": P})
    v = f.values("p", ["pandas eat bamboo", "pandas eat pizza", ""])
    assert math.isfinite(v[0]) and math.isinf(v[1]) and math.isinf(v[2])
    assert f.flag("p", ["pandas eat bamboo", "pandas eat pizza", ""]).tolist() == [False, True, True]


def test_unknown_prompt_is_an_error_naming_the_fitted_prompts(tmp_path: Path) -> None:
    f = UnigramPerplexityFilter().fit(_records(REAL), {"p": P})
    with pytest.raises(FilterPromptError, match=r"fitted on prompts \['p'\], not on prompt 'q'"):
        f.flag("q", ["pandas"])
    g = load_filter(f.save(tmp_path / "f"))
    assert g.prompt_ids == ["p"] and g.fingerprint == f.fingerprint
    texts = ["pandas eat bamboo", "zebra"]
    assert g.flag("p", texts).tolist() == f.flag("p", texts).tolist()
    with pytest.raises(ValueError, match="not a saved filter"):
        load_filter(tmp_path / "nothing")


@pytest.mark.parametrize("cls", [NonWordRateFilter, UnigramPerplexityFilter, PlausibilityFilter])
def test_bad_input_never_crashes(cls) -> None:
    prompts = {"empty": Prompt("empty", "content"), "one": Prompt("one", "content"),
               "cyr": Prompt("cyr", "content"), "p": P}
    recs = _records(["only answer here"], "one") + _records(["панды едят бамбук", "коалы едят эвкалипт"] * 8,
                                                            "cyr") + _records(REAL)
    f = cls(dev_count=2).fit(recs, prompts, adversarial={"p": GIBBERISH})
    for pid in prompts:
        flags = f.flag(pid, ["", "панды едят бамбук", "pandas eat bamboo", "熊猫吃竹子", "   "])
        assert flags.dtype == bool and flags.shape == (5,)
        assert flags[0] and flags[4]  # no word: never an answer
    # no answers to learn from: the unigram model knows no word, the others fall back to the non-word rate
    expected = [True, True] if cls is UnigramPerplexityFilter else [False, True]
    assert f.flag("empty", ["pandas eat bamboo", "qxzv wkrp"]).tolist() == expected


def test_filtered_target_rejects_flagged_answers_without_asking_the_scorer(tmp_path: Path) -> None:
    seen: list[str] = []

    def scorer(texts: list[str]) -> list[float]:
        seen.extend(texts)
        return [2.0] * len(texts)

    f = UnigramPerplexityFilter().fit(_records(REAL), {"p": P})
    inner = CallableTarget(scorer, batched=True, fingerprint="fn")
    t = FilteredTarget(inner, f)
    out = t.predict([Input("content", "pandas eat bamboo", "p"), Input("content", "xqzv plomk", "p"),
                     Input("content", "pandas", "other")])
    assert [o.score for o in out[:2]] == [2.0, 0.0] and seen == ["pandas eat bamboo"]
    assert out[2].error is not None and "not on prompt 'other'" in out[2].error
    assert t.fingerprint.startswith("fn|filter:unigram-perplexity:") and t.rejected == 1
    # the same through a [[target]] table with `filter = DIR`
    d = f.save(tmp_path / "filt")
    cfg = {"type": "callable", "function": "tests.defenses.test_filters:constant_two", "batched": True,
           "filter": str(d)}
    target = from_config(cfg)
    assert isinstance(target, FilteredTarget)
    assert [o.score for o in target.predict([Input("content", "koalas sleep", "p"),
                                             Input("content", "qqq zzz", "p")])] == [2.0, 0.0]


def constant_two(texts: list[str]) -> list[float]:
    return [2.0] * len(texts)


def test_plausibility_filter_on_real_answers_of_prompt_3() -> None:
    """ASAP-SAS prompt 3 (600 training answers to fit, the next 300 as unseen real answers): our filter,
    trained against four cheap generators, flags nearly all of their fresh answers and few real ones."""
    path = shared_path("data", "asap-sas", "train.tsv.gz")
    recs = [r for r in load(f"asap-sas:{path}?prompts=3")][:900]
    prompt = Prompt("3", "content", score_min=0, score_max=2)
    fit, unseen = recs[:600], [r.text for r in recs[600:]]
    res = default_resources()

    def answers(seed: int, source: list[ScoredResponse]) -> list[str]:
        out = []
        for a in (RandomChars(count=60), PromptChars(count=60, n=3), PromptWords(count=60, n=1),
                  PromptWords(count=60, n=2)):
            out += [e.text for e in a.examples_for(prompt, a.fit(source, prompt, res), seed, res)]
        sh = Shuffle()
        for r in source[:150]:
            out += [e.text for e in sh.examples(r, np.random.default_rng(seed), res, prompt, None)]
        return out

    f = PlausibilityFilter(seed=0).fit(fit, {"3": prompt}, adversarial={"3": answers(1, fit)})
    adv = answers(2, fit)
    arr = f.flag("3", adv).mean() * 100
    lost = f.flag("3", unseen).mean() * 100
    assert arr >= 90, arr
    assert lost <= 6, lost


def test_word_trigram_lm_is_a_distribution_and_rewards_seen_order() -> None:
    from callbluff.defenses.plausibility import EOS, WordTrigramLM

    answers = [w.split() for w in WORDS]
    lm = WordTrigramLM(answers)
    vocab = sorted({w for a in answers for w in a}) + [EOS]
    for ctx in (("<s>", "<s>"), ("pandas", "eat"), ("koalas", "unknownword")):
        total = sum(lm.prob(*ctx, w) for w in vocab) + lm.prob(*ctx, "<unk>")
        assert total == pytest.approx(1.0, abs=1e-9), ctx
    lp, gain = lm.token_scores("pandas eat bamboo".split())
    _, gain_rev = lm.token_scores("bamboo eat pandas".split())
    assert len(lp) == 4 and gain.mean() > gain_rev.mean()


def _prompt3(n: int) -> list[ScoredResponse]:
    path = shared_path("data", "asap-sas", "train.tsv.gz")
    return [r for r in load(f"asap-sas:{path}?prompts=3")][:n]


def test_shuffled_real_answers_score_lower_word_order_plausibility() -> None:
    """ASAP-SAS prompt 3: the prompt's language model and part-of-speech model (fitted on 600 answers) give
    100 unseen answers a higher context gain and tag log-probability than the same answers shuffled."""
    from callbluff.defenses.plausibility import FEATURES
    from callbluff.resources.ngrams import word_tokens

    recs = _prompt3(700)
    f = PlausibilityFilter(seed=0)
    state = f._fit_prompt([r.text for r in recs[:600]], [], [])
    rng = np.random.default_rng(0)
    unseen = [r.text for r in recs[600:] if len(word_tokens(r.text)) >= 8][:100]
    shuffled = [" ".join(rng.permutation(word_tokens(t)).tolist()) for t in unseen]
    a, b = f.features(state, unseen), f.features(state, shuffled)
    for name in ("lm_gain", "lm_gain_low", "pos_logprob", "pos_low"):
        k = FEATURES.index(name)
        assert np.mean(a[:, k] > b[:, k]) >= 0.8, name
    k = FEATURES.index("lm_negative")  # more tokens placed where the answers never put them
    assert np.mean(b[:, k] > a[:, k]) >= 0.8


def test_plausibility_filter_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    recs = _records(REAL)
    adv = GIBBERISH + [" ".join(w.split()[::-1]) for w in WORDS] * 4
    texts = ["pandas eat bamboo", "bamboo eat pandas", "xqzv plomk", "koalas sleep most of the day"]
    f = PlausibilityFilter(seed=3).fit(recs, {"p": P}, adversarial={"p": adv})
    g = PlausibilityFilter(seed=3).fit(recs, {"p": P}, adversarial={"p": adv})
    assert np.array_equal(f.values("p", texts), g.values("p", texts))
    assert f.summary() == g.summary() and f.fingerprint == g.fingerprint
    h = load_filter(f.save(tmp_path / "f"))
    assert np.array_equal(h.values("p", texts), f.values("p", texts))


def test_plausibility_filter_saved_by_an_older_version_says_how_to_fix(tmp_path: Path) -> None:
    f = PlausibilityFilter(seed=0).fit(_records(REAL), {"p": P}, adversarial={"p": GIBBERISH})
    for st in f.states.values():  # the state of the 8-feature filter had no feature list, LM or tagger model
        for key in ("features", "lm", "pos_lm"):
            del st[key]
    old = load_filter(f.save(tmp_path / "old"))
    with pytest.raises(ValueError, match=r"older callbluff.*fit it again \(`callbluff filter fit"):
        old.flag("p", ["pandas eat bamboo"])


def test_glued_words_are_told_from_random_characters() -> None:
    from callbluff.defenses.plausibility import _splits

    known = frozenset({"transcription", "translation", "protein", "cell"})
    assert _splits("transcriptiontranslation", frozenset(), known)
    assert _splits("proteincell", frozenset(), known)
    assert not _splits("uaxevrxuufcovrq", frozenset(), known)
    assert not _splits("protein", frozenset(), known)  # one word is not glued


def test_plausibility_cross_fit_learns_from_all_training_answers() -> None:
    recs = _records(REAL)
    f = PlausibilityFilter(seed=0).fit(recs, {"p": P}, adversarial={"p": GIBBERISH})
    g = PlausibilityFilter(seed=0, cross_fit=False).fit(recs, {"p": P}, adversarial={"p": GIBBERISH})
    sf, sg = f.states["p"], g.states["p"]
    assert sf["n_real_threshold"] == len(REAL) and sg["n_real_threshold"] == sg["n_dev"] == 12
    assert sf["threshold_from"].startswith("out-of-fold over all training answers")
    assert f.flag("p", ["xqzv plomk trwa", "pandas eat bamboo and koalas eat eucalyptus"]).tolist() == [True, False]


def test_answers_with_the_same_words_form_one_group() -> None:
    from callbluff.defenses.plausibility import _groups

    g = _groups([["a", "b"], ["c"], ["a", "b"], [], ["c"], []])
    assert g.tolist() == [0, 1, 0, 2, 1, 2]
    assert _groups([]).shape == (0,)


# -- the threshold margin, the topic features, noised real answers, the nested estimate --------------------

def test_bounded_threshold_keeps_a_one_sided_margin() -> None:
    from callbluff.defenses.plausibility import bounded_threshold

    real = np.arange(1000, dtype=float)
    t, k = bounded_threshold(real, 0.02, 1.645)
    # floor(1000 * (0.02 - 1.645 * sqrt(0.02 * 0.98 / 1000))) = floor(12.72) = 12
    assert k == 12 and int((real > t).sum()) == 12
    t0, k0 = bounded_threshold(real, 0.02, 0.0)
    assert k0 == 20 and int((real > t0).sum()) == 20
    assert bounded_threshold(np.arange(10, dtype=float), 0.02, 1.645)[1] == 0  # too few answers for any


def _asap(prompt: str, n: int, split: str = "train.tsv.gz") -> list[ScoredResponse]:
    path = shared_path("data", "asap-sas", split)
    return [r for r in load(f"asap-sas:{path}?prompts={prompt}")][:n]


def test_topic_features_tell_another_prompts_answers_from_the_prompts_own() -> None:
    """ASAP-SAS prompts 1 (an acid-rain experiment) and 10 (doghouse colours): fitted on prompt 1 with prompt
    10's answers as the other prompt, prompt 10's unseen answers are far from prompt 1's (``topic``) and nearer to
    their own prompt's (``topic_margin`` > 0), prompt 1's unseen answers the other way round; and the filter
    flags most of those off-topic answers while keeping most of the on-topic ones."""
    from callbluff.defenses.plausibility import FEATURES

    one, ten = _asap("1", 700), _asap("10", 760)
    p1 = Prompt("1", "content", score_min=0, score_max=3)
    f = PlausibilityFilter(seed=0, off_topic=60).fit(one[:500], {"1": p1}, adversarial={"1": GIBBERISH * 3},
                                                     others=ten[:360])
    st = f.states["1"]
    assert st["other_prompts"] == ["10"] and st["n_off_topic"] == 60
    own_x, off_x = f.features(st, [r.text for r in one[500:]]), f.features(st, [r.text for r in ten[360:]])
    k, m = FEATURES.index("topic"), FEATURES.index("topic_margin")
    assert np.median(off_x[:, k]) > np.median(own_x[:, k]) + 0.05
    assert np.median(off_x[:, m]) > 0 > np.median(own_x[:, m])
    assert f.flag("1", [r.text for r in ten[360:]]).mean() >= 0.9
    assert f.flag("1", [r.text for r in one[500:]]).mean() <= 0.1


def test_noised_copies_are_learnt_as_real_and_reported() -> None:
    """A ``noise`` function's copies join the real class (counted, each in its source answer's fold) and the
    filter reports the share of them its threshold would flag; fitting without it records none."""
    recs = _records(REAL)

    def drop_last_word(records, prompt, seed):  # a deterministic noise: every answer loses its last word
        return [(i, r.text.rsplit(" ", 1)[0]) for i, r in enumerate(records)]

    f = PlausibilityFilter(seed=0).fit(recs, {"p": P}, adversarial={"p": GIBBERISH}, noise=drop_last_word)
    g = PlausibilityFilter(seed=0).fit(recs, {"p": P}, adversarial={"p": GIBBERISH})
    assert f.states["p"]["n_noised"] == len(REAL) and g.states["p"]["n_noised"] == 0
    assert f.summary()["p"]["dev_noised_flagged"] is not None and g.summary()["p"]["dev_noised_flagged"] is None
    assert f.flag("p", [t.rsplit(" ", 1)[0] for t in REAL]).mean() <= 0.1


def test_noisy_real_makes_grammar_and_spelling_copies_from_their_seeds() -> None:
    from callbluff.countermeasures.battery import noisy_real
    from callbluff.resources.typos import TypoCorpus

    recs = _records(["The panda eats bamboo and it is a specialist.", "Koalas are eating the leaves of trees.",
                     "ok"])
    typos = TypoCorpus({"panda": ("pnada",), "bamboo": ("bambo",), "koalas": ("kolas",), "leaves": ("leafs",)})
    out = noisy_real(recs, P, 3, typos=typos)
    assert out == noisy_real(recs, P, 3, typos=typos)  # same seed, same copies
    assert all(0 <= i < len(recs) and t != recs[i].text for i, t in out)
    grammar = noisy_real(recs, P, 3, spelling=False)
    assert grammar and all(t != recs[i].text for i, t in grammar)
    spelling = [t for t in noisy_real(recs, P, 3, typos=typos, grammar=False)]
    assert any("pnada" in t or "bambo" in t for _, t in spelling)


def test_nested_real_loss_holds_out_every_answer_once() -> None:
    from callbluff.defenses.plausibility import nested_real_loss

    recs = _records(REAL * 2)  # 120 answers, 60 groups of two copies each
    folds = nested_real_loss(lambda: PlausibilityFilter(seed=0, min_dev=5), recs, P,
                             battery=lambda records, prompt, count, **kw: [_Adv(t) for t in GIBBERISH[:count]],
                             folds=3, seed=1)
    assert [f["fold"] for f in folds] == [0, 1, 2]
    assert sum(f["n_real"] for f in folds) == len(recs)
    assert all(0 <= f["real_flagged_pct"] <= 100 and f["noised_flagged_pct"] is None for f in folds)


class _Adv:
    def __init__(self, text: str) -> None:
        self.text = text


def test_the_threshold_rule_is_judged_on_held_folds() -> None:
    """``oof_folds``: one entry per classifier fold, covering every real answer once, each share in [0, 100]."""
    recs = _records(REAL)
    f = PlausibilityFilter(seed=0).fit(recs, {"p": P}, adversarial={"p": GIBBERISH})
    folds = f.summary()["p"]["oof_folds"]
    assert len(folds) == 5 and sum(x["n_real"] for x in folds) == f.states["p"]["n_real_threshold"]
    assert all(0 <= x["real_flagged_pct"] <= 100 and x["noised_flagged_pct"] is None for x in folds)
