"""Views in the papers' shapes: the primitives each task descriptor's ``views`` picks from (:mod:`callbluff.tasks`),
each given the rows of one run (one task).

- essay / content scoring: a target x prompt grid per attack configuration, each cell Kumar et al.'s Table 5
  tuple ``(neg_pct, pos_pct, mean_diff_pct, not_lowered_pct)`` (rounded), and for prompt-level generators a
  Table 4 grid of the mean score as % of the range (the paper: BabelGen essays get at least 60%);
- content scoring: ARR per generator and target (Ding et al. 2020, Fig. 1: % of adversarial answers scored at
  the bottom of the scale; 100% is ideal);
- reading comprehension: F1 before and after each attack (Jia & Liang 2017: F1 of each model before and under attack; worst case over a
  question's adversarial versions);
- open-domain questions: success rate, Recall@k, MRR and MAP before and after (DPAEG Tables 2-3).

Each view is a caption, a table (header + rows of strings) and, where the paper has a figure, an SVG chart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from callbluff.render.plots import bar_svg
from callbluff.render.tables import PAIR_FIELDS, _config_key, _prompt_key
from callbluff.render.text import fmt, natural_key, num, pooled_rows, short_params


@dataclass
class View:
    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]
    svg: str = ""
    notes: list[str] = field(default_factory=list)


def _attack_label(r: Mapping[str, Any]) -> str:
    return f"{r['attack']} {short_params(r['params'], str(r['attack']))}"


def _int(v: Any) -> str:
    x = num(v)
    return "–" if x is None else str(int(round(x)))


def failure_chart(task: str, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> str:
    """Bars of ``failure_pct`` per attack configuration, one colour per target ("" when no row has one)."""
    pooled = [r for r in pooled_rows(rows) if num(r.get("failure_pct")) is not None]
    if not pooled:
        return ""
    labels = sorted({_attack_label(r) for r in pooled}, key=lambda lab: (
        -max(num(r.get("failure_pct")) or 0 for r in pooled if _attack_label(r) == lab), natural_key(lab)))
    series = {t: [next((num(r.get("failure_pct")) for r in pooled if r["target"] == t and _attack_label(r) == lab),
                       None) for lab in labels] for t in targets}
    return bar_svg(labels, series, ylabel="failure % (share of adversarial inputs handled wrongly; 0 is ideal)",
                   reference=0.0)


def kumar_grids(rows: Sequence[Mapping[str, Any]], targets: Sequence[str], *, paper_shape: bool = True) -> list[View]:
    """Kumar et al. Tables 4-5: per attack configuration, targets x prompts. ``paper_shape`` False (another
    paper's attacks, e.g. Ding et al.'s content generators): the same statistics, titled as Kumar et al.'s
    statistics applied to them rather than as Kumar et al.'s tables."""
    attack_rows = [r for r in rows if r.get("attack") != "clean"]
    if not attack_rows:
        return []
    prompts = sorted({str(r["prompt"]) for r in attack_rows}, key=_prompt_key)
    by_config: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for r in attack_rows:
        by_config.setdefault(_config_key(r), []).append(r)
    views = []
    pair_rows: list[list[str]] = []
    gen_rows: list[list[str]] = []
    for key in sorted(by_config, key=lambda k: (*k[:3], natural_key(short_params(k[3])))):
        rs = by_config[key]
        generated = all(r.get("neg_pct") is None and r.get("mean_score_pct") is not None for r in rs)
        for t in targets:
            cells = []
            for p in prompts:
                r = next((x for x in rs if x["target"] == t and str(x["prompt"]) == p), None)
                if r is None:
                    cells.append("")
                elif generated:
                    cells.append(_int(r.get("mean_score_pct")))
                else:
                    cells.append("(" + ",".join(_int(r.get(f)) for f in PAIR_FIELDS) + ")")
            if any(cells):
                (gen_rows if generated else pair_rows).append([key[2], short_params(key[3], key[2]), t, *cells])
    if pair_rows:
        views.append(View(
            "Target × prompt per attack (Kumar et al. Table 5 shape)" if paper_shape else
            "Target × prompt per attack (Kumar et al. 2020's overstability statistics)",
            "Each cell: (% responses scored lower, % scored higher, mean score change as % of the score range, "
            "% not lowered), rounded. A human lowers the score of every such response (Kumar et al. Sec. 3.1); "
            "'all' pools the prompts (scores rescaled to 0-100 first).",
            ["attack", "params", "target", *prompts], pair_rows))
    if gen_rows:
        views.append(View(
            "Prompt-level generators (Kumar et al. Table 4 shape)" if paper_shape else
            "Prompt-level generators: mean score of the generated answers",
            "Mean score of generated answers as % of the score range (a human gives them the minimum"
            + ("; Kumar et al.: BabelGen essays got at least 60% from most models)." if paper_shape else
               "; Ding et al. 2020 report the share scored at the minimum, the ARR view)."),
            ["attack", "params", "target", *prompts], gen_rows))
    return views


def arr_view(rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
    """Ding et al. Fig. 1: ARR (% rejected, i.e. scored at the minimum) per adversarial generator."""
    pooled = [r for r in pooled_rows(rows) if num(r.get("arr")) is not None]
    if not pooled:
        return []
    labels = sorted({_attack_label(r) for r in pooled}, key=natural_key)
    series = {t: [next((num(r.get("arr")) for r in pooled if r["target"] == t and _attack_label(r) == lab), None)
                  for lab in labels] for t in targets}
    table = [[lab, *[fmt(v) for v in (series[t][i] for t in targets)]] for i, lab in enumerate(labels)]
    return [View("ARR per generator (Ding et al. 2020 Fig. 1 shape)",
                 "Adversarial rejection rate: % of adversarial answers a scorer gives the minimum score; 100% is "
                 "ideal (every answer is wrong or off-topic).", ["attack", *targets], table,
                 bar_svg(labels, series, ylabel="ARR % (100 is ideal)", reference=100.0))]


def reading_view(rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
    """Jia & Liang 2017: F1 on the attacked questions before and after each attack."""
    pooled = pooled_rows(rows)
    if not pooled:
        return []
    table = [[_attack_label(r), str(r["target"]), fmt(r.get("n")), fmt(r.get("em")), fmt(r.get("em_adv")),
              fmt(r.get("f1")), fmt(r.get("f1_adv")), fmt(r.get("broken_pct"))] for r in pooled]
    labels = sorted({_attack_label(r) for r in pooled}, key=natural_key)
    series: dict[str, list[float | None]] = {}
    for t in targets:
        for when, key in (("before", "f1"), ("under attack", "f1_adv")):
            series[f"{t} {when}"] = [next((num(r.get(key)) for r in pooled if r["target"] == t
                                           and _attack_label(r) == lab), None) for lab in labels]
    return [View("F1 before and after each attack (Jia & Liang 2017 shape)",
                 "SQuAD v1.1 EM/F1 on the attacked questions; under attack, a question counts with its worst "
                 "adversarial version. 'broken %': correctly answered questions answered wrongly after the attack.",
                 ["attack", "target", "questions", "EM", "EM adv", "F1", "F1 adv", "broken %"], table,
                 bar_svg(labels, series, ylabel="F1"))]


QUESTION_FIELDS = (("success_rate", "success rate %"), ("recall_at_1", "R@1"), ("recall_at_1_adv", "R@1 adv"),
                   ("recall_at_5", "R@5"), ("recall_at_5_adv", "R@5 adv"), ("recall_at_20", "R@20"),
                   ("recall_at_20_adv", "R@20 adv"), ("mrr", "MRR"), ("mrr_adv", "MRR adv"), ("map", "MAP"),
                   ("map_adv", "MAP adv"))


def questions_view(rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
    """DPAEG Tables 2-3: success rate and the ranking metrics before/after."""
    pooled = pooled_rows(rows)
    if not pooled:
        return []
    fields = [(f, lab) for f, lab in QUESTION_FIELDS if any(r.get(f) is not None for r in pooled)]
    table = [[_attack_label(r), str(r["target"]), fmt(r.get("n")), *[fmt(r.get(f)) for f, _ in fields]]
             for r in pooled]
    labels = sorted({_attack_label(r) for r in pooled}, key=natural_key)
    series = {t: [next((num(r.get("success_rate")) for r in pooled if r["target"] == t
                        and _attack_label(r) == lab), None) for lab in labels] for t in targets}
    return [View("Success rate, Recall@k, MRR, MAP (DPAEG Tables 2-3 shape)",
                 "Success rate: % of originally correct questions answered wrongly after the attack (0% is ideal); "
                 "ranking metrics over the system's candidate answers, before and after.",
                 ["attack", "target", "n", *[lab for _, lab in fields]], table,
                 bar_svg(labels, series, ylabel="success rate % (0 is ideal)", reference=0.0))]
