"""Essay scoring (AES), Kumar et al. 2020: scored essays to prompts with a score scale; does the scorer notice
shuffled, padded, cut or ungrammatical essays (overstability: a human lowers the score)?"""

from __future__ import annotations

from callbluff.metrics.rows import ERROR_FIELDS
from callbluff.records import Prompt, Record, ScoredResponse
from callbluff.tasks.base import register_task
from callbluff.tasks.scoring import GRADER_REPORT_FIELDS, ScoringTask

KIT_PROMPT = Prompt("kit-essay", "essay", "Should students be required to do volunteer work? Explain your view.",
                    source="Many towns rely on volunteers. At the Maple Street shelter, students from the high school "
                    "serve dinner every Tuesday. The shelter's director says that young helpers bring energy. Some "
                    "parents worry that schoolwork suffers.", score_min=1, score_max=6,
                    reference="Volunteering should be required because it teaches responsibility and connects students "
                    "with their town, as the students at the Maple Street shelter show every Tuesday.",
                    rubric="6: a clear position, developed with specific reasons and examples, well organised, few "
                    "errors; 3-4: a position with some support; 1: no clear position or support.")
KIT_ESSAYS = [
    ("kit-e1", 5.0, "I believe volunteer work should be required for students. First, it teaches responsibility "
     "because people depend on you. Second, students learn skills that school cannot teach. For example, my "
     "cousin learned to cook for forty people at a shelter.\n\nSome people say that students are too busy. "
     "However, two hours a week is not much time. In conclusion, required volunteering makes better citizens."),
    ("kit-e2", 3.0, "Volunteer work is good but it should not be required. Students have homework and sports. "
     "If you make people volunteer they will not enjoy it. I think it should be a choice. That is my opinion."),
    ("kit-e3", 4.0, "  Helping others is important. When I volunteered at the library, I met many kind people. "
     "I shelved books and read to children. It made me feel useful!  So I think schools should ask students to "
     "volunteer. They might find something they love. "),
    ("kit-e4", 1.0, "i dont know volunteer is ok"),
]


class EssayTask(ScoringTask):
    """Essay scoring (Kumar et al. 2020)."""

    name = "essay"
    description = "essay scoring (AES): Kumar et al. 2020"
    responses = "essays"
    fields = ("n", "expect", "failure_pct", "qwk", "neg_pct", "pos_pct", "not_lowered_pct", "mean_diff_pct",
              "abs_mean_diff_pct", "std_diff_pct", "mean_neg_diff_pct", "mean_pos_diff_pct", "ttest_p", "arr",
              "mean_score_pct", "queries_mean", *GRADER_REPORT_FIELDS, *ERROR_FIELDS)
    terminal_fields = ("n", "failure_pct", "qwk", "neg_pct", "pos_pct", "not_lowered_pct", "mean_diff_pct", "ttest_p",
                       *ERROR_FIELDS)
    robust_fields = (("not_lowered_pct", "not lowered %"), ("mean_diff_pct", "mean change % of scale"),
                     ("mean_score_pct", "mean score % of scale"))
    clean_vs_robust = ("QWK on the original essays next to overstability under attack (Kumar et al. 2020, Sec. 1: track "
                       "QWK for performance and adversarial evaluation for validity)")

    def kit_records(self) -> tuple[list[Record], dict[str, Prompt]]:
        return [ScoredResponse(i, KIT_PROMPT.id, t, (s,)) for i, s, t in KIT_ESSAYS], {KIT_PROMPT.id: KIT_PROMPT}


ESSAY = register_task(EssayTask())
