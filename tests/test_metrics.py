"""Metrics against hand-computed values (arithmetic in the comments), edge cases, and real data."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from callbluff.metrics import (
    OVERSTABILITY_FIELDS,
    ROW_KEYS,
    answer_matches,
    arr,
    average_precision,
    em,
    exact_match,
    f1,
    f1_score,
    hit_at_k,
    map_score,
    metric_row,
    mrr,
    normalize_answer,
    overstability,
    qwk,
    ranking_metrics,
    recall_at_k,
    reciprocal_rank,
    relevance,
    round_half_up,
    squad_metrics,
    success_rate,
    success_stats,
    worst_case_squad_metrics,
)

# ============================================================================ QWK


def _qwk_by_formula(a: list[int], b: list[int], lo: int, hi: int) -> float:
    """Textbook QWK (Kumar et al. Sec. 2.3): 1 - sum(W*O) / sum(W*E), W_ij = (i-j)^2 / (N-1)^2."""
    k = hi - lo + 1
    o = np.zeros((k, k))
    for x, y in zip(a, b):
        o[x - lo, y - lo] += 1
    e = np.outer(o.sum(1), o.sum(0)) / o.sum()
    i, j = np.indices((k, k))
    w = (i - j) ** 2 / (k - 1) ** 2
    return 1 - (w * o).sum() / (w * e).sum()


def test_qwk_hand_computed() -> None:
    # y_true = [0,1,2], y_pred = [0,2,2] on 0..2, W_ij = (i-j)^2.
    # O: (0,0)=1, (1,2)=1, (2,2)=1   -> sum W*O = W[1,2] = 1
    # true marginals [1,1,1], pred marginals [1,0,2]; E = outer / 3 -> each row is [1/3, 0, 2/3]
    # sum W*E = row0: 4*2/3 = 8/3; row1: 1*1/3 + 1*2/3 = 1; row2: 4*1/3 = 4/3 -> total 5
    # kappa = 1 - 1/5 = 0.8
    assert qwk([0, 1, 2], [0, 2, 2], score_min=0, score_max=2) == pytest.approx(0.8)
    assert qwk([0, 1, 2], [0, 1, 2], score_min=0, score_max=2) == pytest.approx(1.0)


def test_qwk_depends_on_full_scale() -> None:
    # y_true = [0,1,3,3], y_pred = [0,1,1,3]. On the full scale 0..3 (W = (i-j)^2):
    # sum W*O = W[3,1] = 4; true marginals {0:1,1:1,3:2}, pred marginals {0:1,1:2,3:1}
    # sum W*E = (1/4) * [ r0*(2*1 + 1*9) + r1*(1*1 + 1*4) + r3*(1*9 + 2*4) ] = (11 + 5 + 2*17)/4 = 12.5
    # kappa = 1 - 4/12.5 = 0.68.  Without the scale, labels {0,1,3} get indices 0,1,2 (3 "moves" to 2):
    # sum W*O = 1, sum W*E = (6 + 2 + 2*6)/4 = 5 -> kappa = 0.8 (sklearn's default)
    assert qwk([0, 1, 3, 3], [0, 1, 1, 3], score_min=0, score_max=3) == pytest.approx(0.68)
    assert qwk([0, 1, 3, 3], [0, 1, 1, 3]) == pytest.approx(0.8)
    assert qwk([0, 1, 3, 3], [0, 1, 1, 3], labels=[0, 1, 2, 3]) == pytest.approx(0.68)


def test_qwk_constant_ratings() -> None:
    # both raters give every item the same score: 0/0 in the formula; convention: perfect agreement -> 1.0
    assert qwk([2, 2, 2], [2, 2, 2]) == 1.0
    assert qwk([2, 2, 2], [2.0, 2.2, 1.9], score_min=0, score_max=3) == 1.0  # rounds to [2,2,2]
    assert qwk([1], [1], score_min=0, score_max=3) == 1.0
    # both constant but different: O == E exactly, kappa = 1 - 1 = 0
    assert qwk([1, 1, 1], [2, 2, 2], score_min=0, score_max=3) == 0.0


def test_qwk_rounding_and_clipping() -> None:
    # half up: 0.5 -> 1, 1.5 -> 2, 2.5 -> 3 (numpy's rint would give 0, 2, 2)
    assert round_half_up([0.5, 1.5, 2.5, 2.49, -0.5]).tolist() == [1.0, 2.0, 3.0, 2.0, 0.0]
    # predictions [0.4, 1.5, 3.6] -> round [0, 2, 4] -> clip to 0..3 -> [0, 2, 3] == gold
    assert qwk([0, 2, 3], [0.4, 1.5, 3.6], score_min=0, score_max=3) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not on the scale"):
        qwk([0, 2, 3], [0.4, 1.5, 3.6], score_min=0, score_max=3, clip=False)
    with pytest.raises(ValueError, match="gold score 5 at position 1"):
        qwk([0, 5], [0, 1], score_min=0, score_max=3)


def test_qwk_errors_and_missing() -> None:
    with pytest.raises(ValueError, match="y_true is empty"):
        qwk([], [])
    with pytest.raises(ValueError, match="3 items but y_pred has 2"):
        qwk([0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match=r"1 missing score.*positions \[1\]"):
        qwk([0, 1, 2], [0, None, 2])
    with pytest.raises(ValueError, match="score_max must be greater"):
        qwk([0, 1], [0, 1], score_min=3, score_max=3)
    # omit drops the (1, None) pair: [0,2] vs [0,2] -> 1.0; [0,1,2] vs [0,nan,1] -> [0,2] vs [0,1]
    assert qwk([0, 1, 2], [0, None, 2], nan_policy="omit") == 1.0
    # [0,2] vs [0,1] on 0..2: O (0,0),(2,1): sum W*O = 1; marginals [1,0,1] / [1,1,0];
    # E = outer/2: E[0,0]=E[0,1]=E[2,0]=E[2,1]=1/2 -> sum W*E = (0 + 1 + 4 + 1)/2 = 3 -> 1 - 1/3
    assert qwk([0, 1, 2], [0, float("nan"), 1], score_min=0, score_max=2, nan_policy="omit") == pytest.approx(2 / 3)


def test_qwk_matches_textbook_formula_on_random_scores() -> None:
    rng = np.random.default_rng(7)
    for lo, hi in [(0, 2), (0, 3), (2, 12), (0, 60)]:
        a = rng.integers(lo, hi + 1, size=200).tolist()
        b = np.clip(np.array(a) + rng.integers(-2, 3, size=200), lo, hi).tolist()
        assert qwk(a, b, score_min=lo, score_max=hi) == pytest.approx(_qwk_by_formula(a, b, lo, hi), abs=1e-12)


@pytest.mark.slow
def test_qwk_on_asap_sas_prompt1_raters(shared_data: Path) -> None:
    import pandas as pd

    path = shared_data / "asap-sas" / "train.tsv.gz"
    if not path.exists():
        pytest.skip(f"needs {path}")
    df = pd.read_csv(path, sep="\t", quoting=3)
    p1 = df[df["EssaySet"] == 1]
    assert len(p1) == 1672  # SOURCE.md
    ours = qwk(p1["Score1"], p1["Score2"], score_min=0, score_max=3)
    ref = cohen_kappa_score(p1["Score1"], p1["Score2"], weights="quadratic", labels=[0, 1, 2, 3])
    assert ours == pytest.approx(ref, abs=1e-12)
    assert ours == pytest.approx(_qwk_by_formula(p1["Score1"].tolist(), p1["Score2"].tolist(), 0, 3), abs=1e-12)
    # two trained human raters on a 0-3 science prompt agree closely, far from chance
    assert 0.85 < ours < 0.995


# ============================================================================ overstability


def test_overstability_hand_computed() -> None:
    # original [2,3,4,5,6], adversarial [1,3,6,2,6], range 0..10 -> d = [-1, 0, 2, -3, 0]
    s = overstability([2, 3, 4, 5, 6], [1, 3, 6, 2, 6], 0, 10)
    assert list(s) == list(OVERSTABILITY_FIELDS)
    assert s["n"] == 5 and s["n_missing"] == 0
    assert s["neg_pct"] == pytest.approx(40.0)  # 2 of 5 went down
    assert s["pos_pct"] == pytest.approx(20.0)  # 1 of 5 went up (two ties: unchanged)
    assert s["not_lowered_pct"] == pytest.approx(60.0)  # 1 up + 2 unchanged of 5 were not lowered
    assert s["mean_diff_pct"] == pytest.approx(-4.0)  # mean d = -2/5 = -0.4 -> -4% of 10
    assert s["abs_mean_diff_pct"] == pytest.approx(12.0)  # mean |d| = 6/5 = 1.2
    # deviations from -0.4: -0.6, 0.4, 2.4, -2.6, 0.4; squares sum 13.2; /5 = 2.64; sqrt = 1.62481
    assert s["std_diff_pct"] == pytest.approx(16.2481, abs=1e-4)
    assert s["mean_neg_diff_pct"] == pytest.approx(-20.0)  # mean(-1, -3) = -2
    assert s["mean_pos_diff_pct"] == pytest.approx(20.0)  # mean(2) = 2
    # paired t: sample var 13.2/4 = 3.3, se = sqrt(3.3/5) = 0.812404, t = -0.4/0.812404 = -0.492366, df 4;
    # Student-t CDF for df 4: F(t) = 1/2 + 3/4 x (1 - x^2/3), x = t / sqrt(4 + t^2) -> p = 2 F(t) = 0.648261
    t = -0.4 / math.sqrt(3.3 / 5)
    x = t / math.sqrt(4 + t * t)
    assert s["ttest_p"] == pytest.approx(2 * (0.5 + 0.75 * x * (1 - x * x / 3)), abs=1e-9)
    assert s["ttest_p"] == pytest.approx(0.648261, abs=1e-6)


def test_overstability_ttest_df2() -> None:
    # d = [-1,-2,-3] on 0..10: mean -2, sample sd 1, t = -2 / (1/sqrt 3) = -3.4641, df 2
    # F(t) = 1/2 + t / (2 sqrt(2 + t^2)) = 0.5 - 3.4641/(2*3.741657) = 0.037090 -> p = 0.074180
    s = overstability([5, 5, 5], [4, 3, 2], 0, 10)
    assert s["ttest_p"] == pytest.approx(0.0741799, abs=1e-6)
    assert s["neg_pct"] == 100.0 and s["pos_pct"] == 0.0
    assert s["not_lowered_pct"] == 0.0  # every score went down: the scorer lowered them all
    assert s["mean_pos_diff_pct"] == 0.0  # none went up: 0.0 by convention
    assert s["std_diff_pct"] == pytest.approx(100 * math.sqrt(2 / 3) / 10)  # ddof=0: sqrt(((1+0+1)/3))


def test_overstability_nan_pairs_are_left_out() -> None:
    # pairs 2 (nan adversarial) and 4 (None original) dropped; valid d = [-1, +1] on range 2..12 (10)
    s = overstability([3, 4, 5, None], [2, float("nan"), 6, 7], 2, 12)
    assert s["n"] == 2 and s["n_missing"] == 2
    assert s["neg_pct"] == 50.0 and s["pos_pct"] == 50.0
    assert s["mean_diff_pct"] == 0.0 and s["abs_mean_diff_pct"] == pytest.approx(10.0)
    assert s["not_lowered_pct"] == 50.0  # of the 2 valid pairs, 1 went up; missing pairs count nowhere


def test_not_lowered_pct_counts_up_and_unchanged_but_not_down() -> None:
    # Kumar et al. 3.1: a robust scorer lowers every adversarial response. d = a - o on a 1..6 scale:
    # [+2, 0, -1, 0, +1e-12 (below tol: unchanged), -3, +1, None (left out)] -> 7 valid pairs;
    # not lowered: +2, 0, 0, +1e-12, +1 = 5 of 7 = 71.428571...%; lowered: -1, -3 = 2 of 7 (neg_pct)
    s = overstability([2, 4, 5, 3, 4, 6, 1, 3], [4, 4, 4, 3, 4 + 1e-12, 3, 2, None], 1, 6)
    assert s["n"] == 7 and s["n_missing"] == 1
    assert s["not_lowered_pct"] == pytest.approx(500 / 7)
    assert s["neg_pct"] == pytest.approx(200 / 7)
    assert s["pos_pct"] == pytest.approx(200 / 7)  # +2 and +1 (1e-12 is below tol)
    # a score lowered by less than tol is not lowered; one lowered by more is
    assert overstability([3.0], [3.0 - 1e-12], 0, 3)["not_lowered_pct"] == 100.0
    assert overstability([3.0], [3.0 - 1e-6], 0, 3)["not_lowered_pct"] == 0.0


def test_overstability_degenerate_cases() -> None:
    # no change at all (a perfectly overstable model): t-test undefined -> p = 1.0 by convention
    s = overstability([1, 2, 3], [1, 2, 3], 0, 3)
    assert s["ttest_p"] == 1.0
    assert s["neg_pct"] == s["pos_pct"] == s["mean_diff_pct"] == s["std_diff_pct"] == 0.0
    assert s["mean_neg_diff_pct"] == 0.0 and s["mean_pos_diff_pct"] == 0.0
    # float noise below tol is "unchanged"
    assert overstability([1.0, 2.0], [1.0 + 1e-12, 2.0 - 1e-12], 0, 3)["neg_pct"] == 0.0
    # identical shift -1 for everyone: zero variance but a systematic drop -> p = 0.0
    assert overstability([1, 2, 3], [0, 1, 2], 0, 3)["ttest_p"] == 0.0
    # one pair: no t-test
    assert math.isnan(overstability([1], [0], 0, 3)["ttest_p"])
    # every prediction failed: n = 0 and every statistic NaN (not a crash, not a zero)
    s = overstability([1, 2], [None, None], 0, 3)
    assert s["n"] == 0 and s["n_missing"] == 2 and all(math.isnan(s[k]) for k in OVERSTABILITY_FIELDS[2:])
    with pytest.raises(ValueError, match="original is empty"):
        overstability([], [], 0, 3)
    with pytest.raises(ValueError, match="2 items but adversarial has 1"):
        overstability([1, 2], [1], 0, 3)
    with pytest.raises(ValueError, match="score range"):
        overstability([1], [1], 3, 0)


# ============================================================================ ARR


def test_arr_rounds_to_the_scale() -> None:
    # [0, 0.4, 0.5, 1, 2, -0.3, None] on a 0-3 scale: None left out -> 6 scores;
    # rounded half up: 0, 0, 1, 1, 2, 0 -> 3 at the bottom -> 50%
    scores = [0, 0.4, 0.5, 1, 2, -0.3, None]
    assert arr(scores, 0) == pytest.approx(50.0)
    # raw comparison (<= 0 + 1e-9): 0 and -0.3 -> 2 of 6
    assert arr(scores, 0, rounding=False) == pytest.approx(100 * 2 / 6)
    # bottom of ASAP-AES set 1 is 2: 2 and 2.49 rejected, 3 not
    assert arr([2, 2.49, 3], 2) == pytest.approx(100 * 2 / 3)
    assert arr([0, 0, 0], 0) == 100.0 and arr([1, 2], 0) == 0.0


def test_one_rule_for_the_minimum_in_arr_the_streaming_counts_and_the_bottom_expectation() -> None:
    """Ding et al.'s rejection is decided in one place (``at_minimum``) and every reader agrees with it: ``arr``,
    the streaming ``Bottom`` counts of the metric rows and the ``bottom`` expectation's verdict."""
    from callbluff.metrics import at_minimum
    from callbluff.metrics.expectations import Outcome, judge
    from callbluff.metrics.streaming import Bottom

    scores = np.array([0, 0.4, 0.5, 1, 2, -0.3, 2.49, 3])
    mins = np.array([0, 0, 0, 0, 0, 0, 2, 2])
    want = [True, True, False, False, False, True, True, False]
    assert at_minimum(scores, mins).tolist() == want
    assert not at_minimum(np.nan, 0)
    b = Bottom()
    b.add(scores, mins, np.full(8, 3.0))
    assert (b.rejected, b.scored) == (sum(want), 8)
    verdicts = [judge("bottom", Outcome(orig_score=1.0, adv_score=float(s), score_min=float(m)))
                for s, m in zip(scores, mins)]
    assert verdicts == want


def test_arr_edge_cases() -> None:
    assert math.isnan(arr([None, float("nan")], 0))
    with pytest.raises(ValueError, match="adversarial_scores is empty"):
        arr([], 0)


# ============================================================================ SQuAD EM / F1


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("The  Denver Broncos!", "denver broncos"),
        ("An apple a day", "apple day"),
        ("theater", "theater"),  # articles only as whole words
        ("Saint-Denis", "saintdenis"),  # punctuation removed, not replaced by a space (official behaviour)
        ("  It's   1,000 B.C. ", "its 1000 bc"),
        ("\u00c9cole", "\u00e9cole"),  # non-ASCII letters kept, lower-cased
        ("¿Qué?", "¿qué"),  # only ASCII punctuation (string.punctuation) is removed
        # The official evaluate-v1.1.py applies white_space_fix(remove_articles(remove_punc(lower(s)))):
        # punctuation goes BEFORE articles, so an article glued to punctuation is part of a word then.
        ("79 A.D.", "79 ad"),  # "79 a.d." -> "79 ad"; "ad" is no article (articles first: "79 d")
        ("the-cat", "thecat"),  # "thecat" is one word (articles first: "cat")
        ("U.S.A. the", "usa"),  # "usa the" -> "usa" (articles first would cut the a of s.a.: "us")
        ("an/the", "anthe"),  # one word once the slash is gone (articles first: "")
        ("The Cat.", "cat"),  # a free-standing article goes either way
        ("a (b) an", "b"),  # "a b an" -> "b"
        ("A", ""),  # an answer that is only an article normalises to nothing
    ],
)
def test_normalize_answer_like_official_script(raw: str, norm: str) -> None:
    assert normalize_answer(raw) == norm


def test_normalize_answer_matches_the_official_script_order() -> None:
    # the official script's four steps, written out: lower -> remove punctuation -> remove articles -> fix
    # whitespace; normalize_answer must agree with it on strings that mix articles and punctuation
    import re
    import string

    def official(s: str) -> str:
        s = s.lower()
        s = "".join(ch for ch in s if ch not in set(string.punctuation))
        s = re.sub(r"\b(a|an|the)\b", " ", s)
        return " ".join(s.split())

    for raw in ["79 A.D.", "the-cat", "A.B.C. the", "(An) apple, a day", "The  end.", "tHe.a.an", "a-an-the"]:
        assert normalize_answer(raw) == official(raw), raw
    # EM is taken on normalised strings: "A.D. 79" matches gold "AD 79" (both "ad 79")
    assert exact_match("A.D. 79", ["AD 79"]) == 1.0


def test_exact_match_and_f1_hand_computed() -> None:
    assert exact_match("the Denver Broncos.", ["Carolina Panthers", "Denver Broncos"]) == 1.0
    # pred [denver, broncos] vs gold [denver, broncos, team]: P = 1, R = 2/3, F1 = 2*(2/3)/(5/3) = 0.8
    assert f1_score("Denver Broncos", ["Denver Broncos team"]) == pytest.approx(0.8)
    # max over golds: 0.8 vs 0 -> 0.8
    assert f1_score("Denver Broncos", ["Panthers", "Denver Broncos team"]) == pytest.approx(0.8)
    # "the the cat sat" -> [cat, sat]; gold [cat, sat, on, mat]: P = 1, R = 1/2 -> F1 = 2/3
    assert f1_score("the the cat sat", "cat sat on mat") == pytest.approx(2 / 3)
    # multiset overlap: [x, y, y] vs [y, y, z]: common {y: 2} -> P = R = 2/3 -> F1 = 2/3
    assert f1_score("x y y", ["y y z"]) == pytest.approx(2 / 3)
    assert exact_match("x y y", ["y y z"]) == 0.0


def test_empty_prediction_and_empty_golds() -> None:
    assert exact_match("", ["Denver"]) == 0.0 and f1_score("", ["Denver"]) == 0.0
    # both normalise to "": v1.1 gives EM 1 but F1 0 (num_same == 0), exactly like evaluate-v1.1.py
    assert exact_match(".", ["The"]) == 1.0 and f1_score(".", ["The"]) == 0.0
    with pytest.raises(ValueError, match="no gold answers"):
        exact_match("x", [])
    # SQuAD v2.0 rules: no (non-empty) gold -> the empty answer is right, F1 = 1 when both empty
    assert f1_score("", [], version="2.0") == 1.0 and exact_match("", ["the"], version="2.0") == 1.0
    assert f1_score("Denver", [], version="2.0") == 0.0


def test_corpus_em_f1_and_missing_predictions() -> None:
    preds = ["Denver Broncos", None, "cat"]
    golds = [["Denver Broncos team"], ["x"], ["Cat", "dog"]]
    # excluded: per-example EM [0, 1] -> 50; F1 [0.8, 1] -> 90
    assert em(preds, golds) == pytest.approx(50.0)
    assert f1(preds, golds) == pytest.approx(90.0)
    # as the official script does for unanswered questions: the None scores 0 -> EM 1/3, F1 1.8/3
    assert em(preds, golds, missing="zero") == pytest.approx(100 / 3)
    assert f1(preds, golds, missing="zero") == pytest.approx(60.0)
    assert squad_metrics(preds, golds, suffix="_adv") == pytest.approx(
        {"n_adv": 2, "n_missing_adv": 1, "em_adv": 50.0, "f1_adv": 90.0}
    )
    assert set(squad_metrics(preds, golds)) == {"n", "n_missing", "em", "f1"}
    assert math.isnan(em([None], [["x"]]))
    with pytest.raises(ValueError, match="no predictions"):
        f1([], [])
    with pytest.raises(ValueError, match="2 items but golds has 1"):
        em(["a", "b"], [["a"]])


def test_worst_case_over_adversarial_versions() -> None:
    # q1 has three adversarial versions: right, half right (F1 0.8), wrong -> EM min 0, F1 min 0
    # q2 has two: right and F1 0.8 -> EM 0, F1 0.8; q3's only version failed -> left out, n_missing 1
    ids = ["q1", "q1", "q1", "q2", "q2", "q3"]
    preds = ["Denver Broncos", "Denver Broncos team", "Panthers", "cat", "cat sat on", None]
    golds = {"q1": ["Denver Broncos"], "q2": ["cat sat on mat", "cat"], "q3": ["x"]}
    # q2: "cat sat on" vs "cat sat on mat": P = 1, R = 3/4 -> F1 = 6/7; vs "cat": P = 1/3, R = 1 -> 0.5 => 6/7
    r = worst_case_squad_metrics(ids, preds, golds)
    assert r["n_adv"] == 2 and r["n_missing_adv"] == 1
    assert r["em_adv"] == pytest.approx(0.0)
    assert r["f1_adv"] == pytest.approx(100 * (0 + 6 / 7) / 2)


@pytest.mark.slow
def test_squad_dev_gold_as_prediction(shared_data: Path) -> None:
    path = shared_data / "squad-v1.1" / "dev-v1.1.json.gz"
    if not path.exists():
        pytest.skip(f"needs {path}")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)["data"]
    golds = [[a["text"] for a in qa["answers"]] for art in data for par in art["paragraphs"] for qa in par["qas"]]
    assert len(golds) == 10570  # SOURCE.md
    preds = [g[0] for g in golds]
    # predicting the first gold answer is always an exact match and F1 1
    assert em(preds, golds) == 100.0 and f1(preds, golds) == 100.0
    # every gold answer as a prediction (about 34k): still EM 100, and F1 1 except for the golds that
    # are pure punctuation (e.g. "."): they normalise to no tokens, and the official v1.1 F1 is then 0
    # (num_same == 0) whatever the other golds are
    all_preds = [a for g in golds for a in g]
    all_golds = [g for g in golds for _ in g]
    no_tokens = sum(1 for a in all_preds if not any(ch.isalnum() for ch in a))
    assert no_tokens >= 1
    assert em(all_preds, all_golds) == 100.0
    assert f1(all_preds, all_golds) == pytest.approx(100 * (len(all_preds) - no_tokens) / len(all_preds))
    # prefixing an article and suffixing punctuation changes nothing after normalisation
    assert em(["The " + p + "." for p in preds[:500]], golds[:500]) == 100.0


# ============================================================================ questions: matching


def test_answer_matches_strings_and_regexes() -> None:
    assert answer_matches("The Eiffel Tower.", ["eiffel tower"])
    assert not answer_matches("Eiffel", ["eiffel tower"])
    # CuratedTREC "Who played Frodo in Lord of The Rings?" -> pattern "Wood"
    assert answer_matches("Elijah Wood", ["Wood"], "regex")  # search: anywhere in the candidate
    assert not answer_matches("Elijah Wood", ["Wood"], "regex", regex_mode="match")  # DrQA: anchored at start
    assert answer_matches("wood", ["Wood"], "regex", regex_mode="match")  # case-insensitive
    fashion = ["Sept?(ember)?|Feb(ruary)?"]  # "When is Fashion week in NYC?"
    assert answer_matches("september", fashion, "regex") and answer_matches("FEB 14", fashion, "regex")
    assert not answer_matches("March", fashion, "regex")
    # punctuation matters to regexes, so the raw candidate is matched, not the normalised one
    assert answer_matches("1,932 feet", [r"1\s?,\s?932 feet"], "regex")
    # empty candidates never match, even a pattern that matches the empty string
    assert not answer_matches("   ", ["x?"], "regex") and not answer_matches("", [""])
    # anything with a .text (e.g. targets.base.Candidate) is accepted
    assert answer_matches(SimpleNamespace(text="Paris", score=0.3), ["paris"])


def test_answer_matches_errors() -> None:
    with pytest.raises(ValueError, match=r"regex '\(unclosed' does not compile"):
        answer_matches("x", ["(unclosed"], "regex")
    with pytest.raises(ValueError, match="no gold answers"):
        answer_matches("x", [], "string")
    with pytest.raises(ValueError, match="answer_type"):
        answer_matches("x", ["x"], "fuzzy")  # type: ignore[arg-type]


@pytest.mark.slow
def test_every_curatedtrec_pattern_compiles(shared_data: Path) -> None:
    folder = shared_data / "open-qa" / "curatedtrec"
    if not folder.exists():
        pytest.skip(f"needs {folder}")
    patterns = []
    for f in sorted(folder.glob("*.tsv")):
        patterns += [line.rstrip("\n").split("\t")[3] for line in f.read_text(encoding="utf-8").splitlines() if line]
    assert len(patterns) == 430 + 430 + 867 + 1704 + 766  # SOURCE.md row counts
    # no exception: every pattern compiles with DrQA's flags; the candidate is not meant to match
    hits = sum(answer_matches("zzqx", [p], "regex") for p in patterns)
    assert hits == 0


# ============================================================================ questions: success rate


def test_success_rate_denominator() -> None:
    # items: 1 success; 2 still right; 3 success; 4 source answered wrongly (excluded);
    # 5 adversarial answer missing; 6 original answer missing -> n = 3, successes 2 -> 66.67%
    orig = [True, True, True, False, True, None]
    adv = [False, True, False, False, None, False]
    s = success_stats(orig, adv)
    assert s == pytest.approx(
        {"n": 3, "n_success": 2, "n_excluded": 1, "n_missing": 2, "success_rate": 200 / 3}
    )
    assert success_rate(orig, adv) == pytest.approx(200 / 3)
    assert math.isnan(success_rate([False, False], [False, True]))  # nothing was attackable
    with pytest.raises(ValueError, match="no adversarial questions"):
        success_rate([], [])


# ============================================================================ questions: ranking


def test_ranking_per_list() -> None:
    rel = [False, True, True, False, True]
    assert hit_at_k(rel, 1) == 0.0 and hit_at_k(rel, 2) == 1.0
    assert hit_at_k(rel, 20) == 1.0  # k larger than the list
    assert reciprocal_rank(rel) == 0.5 and reciprocal_rank(rel, k=1) == 0.0
    # precision at the correct ranks 2, 3, 5: 1/2, 2/3, 3/5 -> AP = (0.5 + 0.6667 + 0.6) / 3 = 0.588889
    assert average_precision(rel) == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3)
    # cut at k=3: ranks 2, 3 -> (1/2 + 2/3) / 2
    assert average_precision(rel, k=3) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert average_precision([]) == 0.0 and reciprocal_rank([]) == 0.0
    # the same correct answer twice (from two paragraphs) counts twice
    assert average_precision([True, True]) == 1.0
    with pytest.raises(ValueError, match="positive integer"):
        hit_at_k(rel, 0)


def test_ranking_aggregates_hand_computed() -> None:
    golds = [["Paris"], ["Wood"], ["Rome"], ["Oslo"]]
    ranked = [
        ["Lyon", "Paris", "paris.", "Nice", "The Paris"],  # rel [0,1,1,0,1]: RR 1/2, AP 0.588889
        ["Elijah Wood"],  # regex: rel [1]: RR 1, AP 1
        [],  # no candidates: a miss (0 everywhere)
        None,  # failed prediction: left out
    ]
    types = ["string", "regex", "string", "string"]
    # recall@1 = (0 + 1 + 0)/3; recall@5 = (1 + 1 + 0)/3; MRR = (1/2 + 1 + 0)/3 = 0.5
    # MAP = (0.588889 + 1 + 0)/3 = 0.529630
    assert recall_at_k(ranked, golds, 1, answer_type=types) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, golds, 5, answer_type=types) == pytest.approx(2 / 3)
    assert mrr(ranked, golds, answer_type=types) == pytest.approx(0.5)
    ap1 = (1 / 2 + 2 / 3 + 3 / 5) / 3
    assert map_score(ranked, golds, answer_type=types) == pytest.approx((ap1 + 1) / 3)
    r = ranking_metrics(ranked, golds, answer_type=types, suffix="_adv")
    assert r == pytest.approx(
        {"n_adv": 3, "n_missing_adv": 1, "recall_at_5_adv": 2 / 3, "recall_at_20_adv": 2 / 3,
         "mrr_adv": 0.5, "map_adv": (ap1 + 1) / 3}
    )
    assert list(ranking_metrics(ranked, golds, answer_type=types)) == [
        "n", "n_missing", "recall_at_5", "recall_at_20", "mrr", "map"]
    with pytest.raises(ValueError, match="answer_type has 2 entries for 4 questions"):
        mrr(ranked, golds, answer_type=["string", "regex"])
    with pytest.raises(ValueError, match="no questions"):
        mrr([], [])


def test_ties_keep_the_systems_order() -> None:
    # two candidates with the same score: the list order is the ranking (no re-sorting by score)
    cands = [SimpleNamespace(text="Lyon", score=0.5), SimpleNamespace(text="Paris", score=0.5)]
    assert relevance(cands, ["Paris"]) == [False, True]
    assert mrr([cands], [["Paris"]]) == 0.5
    assert mrr([cands[::-1]], [["Paris"]]) == 1.0


# ============================================================================ metric rows


def test_metric_row_schema_and_json() -> None:
    fields = overstability([2, 3], [1, None], 0, 10)  # n = 1: ttest_p NaN
    row = metric_row("essay", "AddSong", {"size": 10, "position": "beginning"}, 1, "lstm", qwk=np.float64(0.7), **fields)
    assert list(row)[:5] == list(ROW_KEYS)
    assert row["params"] == '{"position":"beginning","size":10}'  # canonical JSON: sorted keys, compact
    assert row["prompt"] == "1" and row["target"] == "lstm"
    assert type(row["qwk"]) is float and row["ttest_p"] is None  # NaN -> None (undefined)
    assert row["n"] == 1 and row["neg_pct"] == 100.0
    json.dumps(row, allow_nan=False)  # strict JSON
    both = metric_row("reading", "AddSent", {}, None, "bidaf",
                      **squad_metrics(["a"], [["a"]]), **squad_metrics(["b"], [["a"]], "_adv"))
    assert (both["em"], both["em_adv"]) == (100.0, 0.0) and both["prompt"] == "all" and both["params"] == "{}"
    assert metric_row("essay", None, '{"b":1,"a":2}', "3", "t")["params"] == '{"a":2,"b":1}'
    assert metric_row("essay", None, None, "3", "t")["attack"] == "clean"
    with pytest.raises(ValueError, match="task must be a task name"):  # names are checked by the engine
        metric_row("", None, None, None, None)


# ============================================================================ cases found by `make mutation`
# Each test below kills mutants of the metric code that survived the tests above (mutmut, see the Makefile).


def test_overstability_ttest_with_two_pairs() -> None:
    # d = [-1, -3] on 0..10: mean -2, sample sd sqrt(2), se sqrt(2)/sqrt(2) = 1, t = -2, df 1 (Cauchy):
    # p = 2 F(-2) = 1 - 2 atan(2) / pi = 0.295167
    p = overstability([5, 5], [4, 2], 0, 10)["ttest_p"]
    assert p == pytest.approx(1 - 2 * math.atan(2) / math.pi, abs=1e-12)
    assert p == pytest.approx(0.295167, abs=1e-6)


def test_qwk_clips_below_the_scale_and_takes_a_two_point_scale() -> None:
    # -0.6 rounds half up to -1, then is clipped to the bottom 0: [0, 2, 3] == gold -> 1.0
    assert qwk([0, 2, 3], [-0.6, 2, 3], score_min=0, score_max=3) == 1.0
    # a 0-1 scale: quadratic weights are Cohen's kappa; agreement 3/4, chance (2*3 + 2*1) / 16 = 1/2
    # -> (3/4 - 1/2) / (1 - 1/2) = 0.5
    assert qwk([0, 1, 1, 0], [0, 1, 0, 0], score_min=0, score_max=1) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="give both score_min and score_max"):
        qwk([0, 1], [0, 1], score_min=0)
    # one pair left after dropping the missing one: two constant raters who agree -> 1.0
    assert qwk([1, 2], [1, None], nan_policy="omit") == 1.0


def test_squad_v2_rules_reach_the_corpus_scores() -> None:
    # v2.0: no gold means the empty answer is right -> EM/F1 100 on both; v1.1 refuses a question with no gold
    preds, golds = ["", "Denver"], [[], ["Denver"]]
    assert em(preds, golds, version="2.0") == 100.0 and f1(preds, golds, version="2.0") == 100.0
    assert squad_metrics(preds, golds, version="2.0")["em"] == 100.0
    assert exact_match("", [], version="2.0") == 1.0
    assert worst_case_squad_metrics(["q"], [""], [[]], version="2.0")["em_adv"] == 100.0
    with pytest.raises(ValueError, match="no gold answers"):
        em(preds, golds)


def test_nan_prediction_is_missing_and_aligned_golds() -> None:
    s = squad_metrics(["a", float("nan")], [["a"], ["b"]])
    assert (s["n"], s["n_missing"], s["em"]) == (1, 1, 100.0)
    # golds aligned with the predictions (not a mapping): q1 worst EM 0 ("b"), q2 1 -> 50
    w = worst_case_squad_metrics(["q1", "q1", "q2"], ["a", "b", "c"], [["a"], ["a"], ["c"]])
    assert (w["n_adv"], w["em_adv"]) == (2, 50.0)


def test_ranking_cutoffs_regex_mode_and_counts() -> None:
    lists, golds = [["Lyon", "Paris"]], [["Paris"]]
    assert mrr(lists, golds) == 0.5 and mrr(lists, golds, k=1) == 0.0  # only the first candidate counts
    assert map_score(lists, golds) == 0.5 and map_score(lists, golds, k=1) == 0.0
    # DrQA's anchored regex match: "Wood" does not match "Elijah Wood" at its start
    anchored = {"answer_type": "regex", "regex_mode": "match"}
    assert relevance(["Elijah Wood"], ["Wood"], "regex", regex_mode="match") == [False]
    assert ranking_metrics([["Elijah Wood"]], [["Wood"]], ks=(1,), **anchored)["recall_at_1"] == 0.0
    assert recall_at_k([["Elijah Wood"]], [["Wood"]], 1, **anchored) == 0.0
    assert mrr([["Elijah Wood"]], [["Wood"]], **anchored) == 0.0
    # two failed lists of three: n 1, n_missing 2
    r = ranking_metrics([None, None, ["a"]], [["a"], ["a"], ["a"]], ks=(1,))
    assert (r["n"], r["n_missing"], r["recall_at_1"]) == (1, 2, 1.0)
    # two adversarial questions from wrongly answered sources: both excluded, not one
    assert success_stats([False, False, True], [True, False, False]) == {
        "n": 1, "n_success": 1, "n_excluded": 2, "n_missing": 0, "success_rate": 100.0}


def test_every_field_of_every_task_is_declared_once_with_its_unit_and_direction() -> None:
    """The metric-field table (metrics.fields) is the one place of units and directions: every field a task's
    rows carry is declared there, compare's colours and scaling read it, and a redeclaration that differs fails."""
    from callbluff.compare import direction, unit_scale
    from callbluff.metrics.fields import MetricField, format_value, metric_field, register_metric_field
    from callbluff.tasks import all_tasks

    undeclared = sorted({f for t in all_tasks() for f in (*t.fields, *t.clean_fields) if metric_field(f) is None})
    assert undeclared == []
    assert direction("qwk", 0.1) == "better" and direction("failure_pct", 3.0) == "worse"
    assert direction("mean_diff_pct", 5.0) == "" and direction("qwk", 0.0) == ""
    assert unit_scale("mrr_adv") and not unit_scale("f1")
    assert format_value("failure_pct", 12.5) == "12.5%" and format_value("qwk", 0.7312) == "0.731"
    with pytest.raises(ValueError, match="declared already"):
        register_metric_field(MetricField("qwk", "%", "lower"))
