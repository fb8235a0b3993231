"""Short-answer content scoring, Ding et al. 2020: scored answers to questions with a score scale; how many
generated non-answers does the scorer reject (ARR: scored at the bottom of the scale)?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from callbluff.metrics.rows import ERROR_FIELDS
from callbluff.records import Prompt, Record, ScoredResponse
from callbluff.render.views import View, arr_view, kumar_grids
from callbluff.tasks.base import register_task
from callbluff.tasks.scoring import GRADER_REPORT_FIELDS, ScoringTask

KIT_PROMPT = Prompt("kit-content", "content", "Explain how heat reaches the handle of a metal spoon standing "
                    "in hot tea, and name the process.", score_min=0, score_max=2,
                    reference="By conduction: the particles of the metal pass the heat along the spoon to the handle.",
                    rubric="2 points: names conduction and says how the heat moves through the metal; 1 point: "
                    "names conduction or says metal conducts heat; 0 points: otherwise.")
KIT_ANSWERS = [
    ("kit-c1", 2.0, "The heat travels through the metal by conduction, from the hot end in the tea up to the handle."),
    ("kit-c2", 2.0, "Conduction: the particles in the hot part of the spoon vibrate and pass the energy along the "
     "metal to the handle."),
    ("kit-c3", 1.0, "The spoon gets hot because metal is a good conductor."),
    ("kit-c4", 0.0, "The tea is hot so the spoon is hot."),
    ("kit-c5", 2.0, "By conduction through the spoon.\n"),
    ("kit-c6", 0.0, "idk"),
]


class ContentTask(ScoringTask):
    """Short-answer content scoring (Ding et al. 2020); ``arr`` on every attack row."""

    name = "content"
    description = "short-answer content scoring: Ding et al. 2020"
    pair_arr = True
    fields = ("n", "expect", "failure_pct", "qwk", "arr", "neg_pct", "pos_pct", "not_lowered_pct", "mean_diff_pct",
              "abs_mean_diff_pct", "std_diff_pct", "ttest_p", "mean_score_pct", "queries_mean", *GRADER_REPORT_FIELDS, *ERROR_FIELDS)
    terminal_fields = ("n", "failure_pct", "qwk", "arr", "neg_pct", "pos_pct", "mean_diff_pct", "ttest_p",
                       *ERROR_FIELDS)
    robust_fields = (("arr", "ARR %"), ("not_lowered_pct", "not lowered %"), ("mean_diff_pct", "mean change %"),
                     ("mean_score_pct", "mean score %"))
    clean_vs_robust = ("QWK on real answers next to the Adversarial Rejection Rate on generated ones (Ding et al. 2020, "
                       "Sec. 3.2)")

    def views(self, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
        """Kumar et al.'s grids, then Ding et al. Fig. 1: ARR per adversarial generator."""
        return kumar_grids(rows, targets, paper_shape=False) + arr_view(rows, targets)

    def kit_records(self) -> tuple[list[Record], dict[str, Prompt]]:
        recs = [ScoredResponse(i, KIT_PROMPT.id, t, (s,)) for i, s, t in KIT_ANSWERS]
        return list(recs), {KIT_PROMPT.id: KIT_PROMPT}


CONTENT = register_task(ContentTask())
