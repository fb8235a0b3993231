"""The metric fields of the rows, declared once: ``MetricField(name, unit, better)``.

Every figure a metric row (metrics.json, metrics.csv) can carry is listed here with its unit and the direction
that is an improvement; ``compare`` reads it to scale and colour differences, the gates to check that an
``[[expect]]`` names a real metric, and the renderers to format a value. A task that adds a field declares it
with :func:`register_metric_field` (``tests/test_metrics.py`` checks that every task's ``fields`` are declared).

Units: ``%`` (0-100), ``unit`` (0-1: QWK, Recall@k, MRR, MAP; x100 when differences are ranked), ``p`` (a
p-value), ``count`` and ``queries`` (per-example means), ``label`` (not a number: the expectation's name).
``better``: ``higher`` / ``lower`` is an improvement; ``None`` when the sign depends on the attack (a mean score
change is good or bad by the attack's expectation) or the field is bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Unit = Literal["%", "unit", "p", "count", "queries", "label"]
Better = Literal["higher", "lower"] | None


@dataclass(frozen=True)
class MetricField:
    """One metric field: its name in the rows, its unit and which direction is an improvement."""

    name: str
    unit: Unit
    better: Better
    description: str = ""

    @property
    def unit_scale(self) -> bool:
        """A 0-1 figure (x100 when differences are ranked with percentages)."""
        return self.unit == "unit"


_FIELDS: dict[str, MetricField] = {}


def register_metric_field(field: MetricField) -> MetricField:
    """Declare a metric field (a task's new figure); a name declared twice with other properties is an error."""
    old = _FIELDS.get(field.name)
    if old is not None and old != field:
        raise ValueError(f"metric field {field.name!r} is declared already as {old}; use another name")
    _FIELDS[field.name] = field
    return field


def metric_field(name: str) -> MetricField | None:
    """The declared field ``name``, or ``None``."""
    return _FIELDS.get(name)


def metric_fields() -> dict[str, MetricField]:
    """Every declared field by name (a copy)."""
    return dict(_FIELDS)


def format_value(name: str, value: float) -> str:
    """``value`` of field ``name`` with its unit, as gates and messages print it (``12.5%``, ``0.731``,
    ``p = 0.03``); an undeclared field gets 4 significant digits."""
    field = _FIELDS.get(name)
    if field is None or field.unit in ("count", "queries", "label"):
        return f"{value:.4g}"
    if field.unit == "%":
        return f"{value:.4g}%"
    if field.unit == "p":
        return f"p = {value:.3g}"
    return f"{value:.3f}"


def _declare(unit: Unit, better: Better, *names_and_descriptions: tuple[str, str]) -> None:
    for name, description in names_and_descriptions:
        register_metric_field(MetricField(name, unit, better, description))


_declare("count", None, ("n", "cases in the row"), ("n_errors_original", "failed predictions on the originals"),
         ("n_errors_adversarial", "failed predictions on the adversarial inputs"),
         ("n_errors_generate", "records an attack failed on"))
_declare("label", None, ("expect", "the attack's expectation (metrics.expectations)"))
_declare("%", "lower",
         ("failure_pct", "cases whose verdict under the expectation is a failure"),
         ("not_lowered_pct", "adversarial responses not scored lower (Kumar et al. 2020)"),
         ("pos_pct", "adversarial responses scored higher"),
         ("broken_pct", "questions answered right before and wrong after (Jia & Liang 2017)"),
         ("success_rate", "attacked questions whose answer was lost (DPAEG, Sec. 4.1)"),
         ("mean_score_pct", "mean adversarial score as % of the scale (generated bluffs: lower is better)"),
         ("max_out_pct", "low-scored answers raised to the scale's maximum"),
         ("ceiling_pct", "adversarial answers at the scale's maximum"),
         ("parse_fail_pct", "grader replies that could not be read as a score"),
         ("baseline_failure_pct", "the baseline run's failure share (compare)"),
         ("mae_pct", "mean absolute error on clean answers, % of the scale"),
         ("sample_spread_pct", "spread of repeated samples of one input, % of the scale"),
         ("variant_spread_pct", "spread across prompt variants, % of the scale"))
_declare("%", "higher",
         ("arr", "Adversarial Rejection Rate: answers scored at the minimum (Ding et al. 2020, Sec. 3.2)"),
         ("neg_pct", "adversarial responses scored lower"),
         ("em", "exact match on the originals"), ("f1", "F1 on the originals"),
         ("em_adv", "exact match under attack"), ("f1_adv", "F1 under attack (Jia & Liang 2017)"),
         ("adv_correct_pct", "adversarial inputs still answered correctly"))
_declare("%", None,
         ("mean_diff_pct", "mean score change, % of the scale (its good sign depends on the expectation)"),
         ("abs_mean_diff_pct", "mean absolute score change, % of the scale"),
         ("std_diff_pct", "standard deviation of the score change, % of the scale"),
         ("mean_neg_diff_pct", "mean change of the lowered responses"),
         ("mean_pos_diff_pct", "mean change of the raised responses"),
         ("mean_diff_pct_ci_low", "95 % bootstrap interval of mean_diff_pct, low end"),
         ("mean_diff_pct_ci_high", "95 % bootstrap interval of mean_diff_pct, high end"),
         ("pos_pct_ci_low", "95 % bootstrap interval of pos_pct, low end"),
         ("pos_pct_ci_high", "95 % bootstrap interval of pos_pct, high end"))
_declare("unit", "higher", ("qwk", "quadratic weighted kappa on clean responses (Kumar et al. 2020, Sec. 2.3)"),
         *((f"{m}{sfx}", f"{m} of the gold passage's rank{' under attack' if sfx else ''}")
           for m in ("mrr", "map", "recall_at_1", "recall_at_5", "recall_at_20") for sfx in ("", "_adv")))
_declare("p", None, ("ttest_p", "paired t-test p-value of the score change"))
_declare("queries", None, ("queries_mean", "target queries per adversarial example (mean)"),
         ("queries_median", "target queries per adversarial example (median)"),
         ("queries_max", "target queries per adversarial example (most)"))
