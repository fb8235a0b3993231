"""Metrics: pure functions on arrays and lists. Function names are the ``metrics.json`` field names.

=====================  ==========================================================  =========  ==========================
field                  meaning                                                     unit       source
=====================  ==========================================================  =========  ==========================
``qwk``                quadratic weighted kappa, gold vs predicted scores           [-1, 1]    Kumar et al. 2.3; Ding 3.2
``n``, ``n_missing``   valid items / items left out because a prediction failed    count
``neg_pct``            samples whose score went down under attack                   % samples  Kumar et al. 3.1
``pos_pct``            samples whose score went up                                  % samples  Kumar et al. 3.1
``not_lowered_pct``    samples whose score was not lowered (went up or stayed)      % samples  Kumar et al. 3.1, 4
``mean_diff_pct``      mean of adversarial - original                               % range    Kumar et al. 3.1
``abs_mean_diff_pct``  mean of abs(adversarial - original)                          % range    Kumar et al. 3.1
``std_diff_pct``       standard deviation of the difference                         % range    Kumar et al. 3.1
``mean_neg_diff_pct``  mean difference over the samples that went down              % range    Kumar et al. 3.1
``mean_pos_diff_pct``  mean difference over the samples that went up                % range    Kumar et al. 3.1
``ttest_p``            paired t-test p-value, adversarial vs original               p          Kumar et al. 4.1
``arr``                adversarial answers scored at the bottom of the scale        %          Ding et al. 3.2
``em``, ``f1``         SQuAD v1.1 exact match / token F1 (``_adv``: adversarial)    0-100      Jia & Liang 2017
``success_rate``       adversarial questions answered wrongly (of those whose       %          DPAEG 4.1
                       source question was answered correctly)
``recall_at_<k>``      questions with a correct answer in the top k (k=5, 20)       [0, 1]     DPAEG 4.1
``mrr``                mean reciprocal rank of the first correct candidate          [0, 1]     DPAEG 4.1
``map``                mean average precision of the ranked candidates              [0, 1]     DPAEG 4.1
=====================  ==========================================================  =========  ==========================

Conventions where the papers are silent are stated in each function's docstring (constant ratings
give ``qwk`` 1.0; no change at all gives ``ttest_p`` 1.0; regex answers are searched anywhere in the
candidate, case-insensitively; None/NaN predictions are failures, left out and counted).
"""

from callbluff.metrics.questions import (
    DEFAULT_KS,
    answer_matches,
    average_precision,
    hit_at_k,
    map_score,
    mrr,
    ranking_metrics,
    recall_at_k,
    reciprocal_rank,
    relevance,
    success_rate,
    success_stats,
)
from callbluff.metrics.reading import (
    em,
    exact_match,
    f1,
    f1_score,
    normalize_answer,
    squad_metrics,
    worst_case_squad_metrics,
)
from callbluff.metrics.rows import ROW_KEYS, metric_row
from callbluff.metrics.scoring import OVERSTABILITY_FIELDS, arr, at_minimum, overstability, qwk, round_half_up

__all__ = [
    "DEFAULT_KS",
    "OVERSTABILITY_FIELDS",
    "ROW_KEYS",
    "answer_matches",
    "arr",
    "average_precision",
    "em",
    "exact_match",
    "f1",
    "f1_score",
    "hit_at_k",
    "map_score",
    "metric_row",
    "mrr",
    "normalize_answer",
    "overstability",
    "qwk",
    "ranking_metrics",
    "recall_at_k",
    "reciprocal_rank",
    "relevance",
    "round_half_up",
    "at_minimum",
    "squad_metrics",
    "success_rate",
    "success_stats",
    "worst_case_squad_metrics",
]
