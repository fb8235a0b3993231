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
from html import escape
from typing import Any

from callbluff.render.plots import bar_svg
from callbluff.render.tables import PAIR_FIELDS, _config_key, _prompt_key
from callbluff.render.text import config_labels, fmt, natural_key, num, pct, pooled_rows, short_params


@dataclass
class View:
    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]
    svg: str = ""
    notes: list[str] = field(default_factory=list)


def _attack_label(r: Mapping[str, Any]) -> str:
    """The attack's name with its non-default parameters (the name alone when every one is at its default)."""
    params = short_params(r["params"], str(r["attack"]))
    return str(r["attack"]) if params == "defaults" else f"{r['attack']} {params}"


def _int(v: Any) -> str:
    x = num(v)
    return "–" if x is None else str(int(round(x)))


MAX_BARS = 30
"""Attack configurations one chart shows as it is; a run with more gets :func:`attack_bars`' grouped form."""
PANEL_BARS = 30
"""Configurations per panel of the grouped form; an attack with more is split over several panels."""


def attack_bars(pooled: Sequence[Mapping[str, Any]], metric: str, targets: Sequence[str], *, ylabel: str,
                reference: float | None = None, series_of: Sequence[tuple[str, str, str]] | None = None,
                worst_first: bool = False) -> str:
    """A bar chart of ``metric`` per attack configuration that stays legible at any suite size (HTML: SVG
    charts, with captions when grouped).

    Up to :data:`MAX_BARS` configurations: one chart, one bar per configuration and series (a series per target,
    or ``series_of`` = (series name, target, metric) triples, e.g. F1 before and under attack). More (Kumar et
    al.'s protocol has 171): an overview with one bar per attack (the mean over its configurations, a whisker
    from the lowest to the highest), then small multiples: one panel per attack, its configurations labelled by
    their parameters alone in the parameters' natural order (a grid reads the same in every panel), at most
    :data:`PANEL_BARS` to a panel (a longer attack continues in the next panel). ``worst_first`` orders the
    one-chart form by the highest value first; the grouped form always puts the attack with the highest mean
    first, and the attacks with a single configuration share one panel, after the others. "" when no row has
    the metric."""
    triples = list(series_of) if series_of is not None else [(t, t, metric) for t in targets]
    rows = [r for r in pooled if any(num(r.get(m)) is not None for _, _, m in triples)]
    if not rows:
        return ""
    value: dict[tuple[str, str, str], float | None] = {}
    for r in rows:
        for _, t, m in triples:
            if str(r["target"]) == t:
                value[(t, m, _attack_label(r))] = num(r.get(m))
    configs: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        lab = _attack_label(r)
        configs.setdefault(str(r["attack"]), [])
        if all(_attack_label(x) != lab for x in configs[str(r["attack"])]):
            configs[str(r["attack"])].append(r)
    labels = [_attack_label(r) for rs in configs.values() for r in rs]

    def worst(lab: str) -> float:
        return max((v for (t, m, la), v in value.items() if la == lab and v is not None), default=-1.0)

    if len(labels) <= MAX_BARS:
        order = sorted(labels, key=lambda lab: (-worst(lab), natural_key(lab)) if worst_first else natural_key(lab))
        series = {name: [value.get((t, m, lab)) for lab in order] for name, t, m in triples}
        return bar_svg(order, series, ylabel=ylabel, reference=reference)

    def mean_of(attack: str) -> float:
        vals = [v for (t, m, la), v in value.items() for r in configs[attack] if la == _attack_label(r)
                and v is not None]
        return sum(vals) / len(vals) if vals else -1.0

    attacks = sorted(configs, key=lambda a: (-mean_of(a), a))
    overview: dict[str, list[float | None]] = {}
    spans: dict[str, list[tuple[float, float] | None]] = {}
    for name, t, m in triples:
        overview[name], spans[name] = [], []
        for a in attacks:
            vals = [v for r in configs[a] if (v := value.get((t, m, _attack_label(r)))) is not None]
            overview[name].append(sum(vals) / len(vals) if vals else None)
            spans[name].append((min(vals), max(vals)) if len(vals) > 1 else None)
    parts = [f'<p class="note">{len(labels)} attack configurations of {len(attacks)} attacks: first one bar per '
             "attack (the mean over its configurations; the whisker spans its lowest to its highest configuration), "
             "then one panel per attack with each configuration, labelled by its parameters.</p>",
             bar_svg([f"{a} ({len(configs[a])})" for a in attacks], overview, ylabel=ylabel, reference=reference,
                     ranges=spans), '<div class="multiples">']
    short_ylabel = ylabel.split(" (")[0]  # a panel is narrow: the overview's axis label says what it means
    singles = [a for a in attacks if len(configs[a]) == 1]
    for a in attacks:
        if a in singles and len(singles) > 1:
            continue
        names_of = _panel_labels(configs[a])
        labs = sorted((_attack_label(r) for r in configs[a]), key=lambda lab: natural_key(names_of[lab]))
        pages = [labs[i:i + PANEL_BARS] for i in range(0, len(labs), PANEL_BARS)]
        for k, page in enumerate(pages):
            names = [names_of[lab] for lab in page]
            series = {name: [value.get((t, m, lab)) for lab in page] for name, t, m in triples}
            part = f" (configurations {k * PANEL_BARS + 1}-{k * PANEL_BARS + len(page)} of {len(labs)})" \
                if len(pages) > 1 else f" ({len(labs)} configuration{'s' if len(labs) != 1 else ''})"
            parts.append(f"<figure><figcaption><b>{escape(a)}</b>{escape(part)}</figcaption>"
                         + bar_svg(names, series, ylabel=short_ylabel, reference=reference, width=5.6) + "</figure>")
    if len(singles) > 1:  # one panel for the attacks without a grid, in the overview's order
        series = {name: [value.get((t, m, _attack_label(configs[a][0]))) for a in singles] for name, t, m in triples}
        parts.append(f"<figure><figcaption><b>Attacks with one configuration</b> ({len(singles)})</figcaption>"
                     + bar_svg(singles, series, ylabel=short_ylabel, reference=reference, width=5.6) + "</figure>")
    parts.append("</div>")
    return "\n".join(parts)


def _panel_labels(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Per configuration of one attack (keyed by :func:`_attack_label`), its label among the attack's others
    (:func:`~callbluff.render.text.config_labels`)."""
    if not rows:
        return {}
    labels = config_labels(str(rows[0]["attack"]), [str(r["params"]) for r in rows])
    return {_attack_label(r): labels[str(r["params"])] for r in rows}


def failure_chart(task: str, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> str:
    """Bars of ``failure_pct`` per attack configuration, one colour per target, worst first (grouped per attack
    for a large suite, :func:`attack_bars`); "" when no row has one."""
    return attack_bars(pooled_rows(rows), "failure_pct", targets, worst_first=True, reference=0.0,
                       ylabel="failure % (share of adversarial inputs handled wrongly; 0 is ideal)")


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
    per_attack: dict[str, list[Mapping[str, Any]]] = {}
    for rs in by_config.values():
        per_attack.setdefault(str(rs[0]["attack"]), []).append(rs[0])
    # a grid's parameters written out in full (a grid value equal to the default is shown, not "defaults")
    names = {(a, lab): text for a, rs in per_attack.items() for lab, text in _panel_labels(rs).items()}

    def shown(key: tuple[Any, ...]) -> str:
        return names.get((str(key[2]), f"{key[2]} {short_params(key[3], str(key[2]))}"), short_params(key[3]))

    for key in sorted(by_config, key=lambda k: (*k[:3], natural_key(shown(k)))):
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
                (gen_rows if generated else pair_rows).append([key[2], shown(key), t, *cells])
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
                 attack_bars(pooled, "arr", targets, ylabel="ARR % (100 is ideal)", reference=100.0))]


def reading_view(rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
    """Jia & Liang 2017: F1 on the attacked questions before and after each attack."""
    pooled = pooled_rows(rows)
    if not pooled:
        return []
    table = [[_attack_label(r), str(r["target"]), fmt(r.get("n")), pct(r.get("em")), pct(r.get("em_adv")),
              pct(r.get("f1")), pct(r.get("f1_adv")), pct(r.get("broken_pct"))] for r in pooled]  # one decimal
    triples = [(f"{t} {when}", t, key) for t in targets for when, key in (("before", "f1"), ("under attack", "f1_adv"))]
    return [View("F1 before and after each attack (Jia & Liang 2017 shape)",
                 "SQuAD v1.1 EM/F1 on the attacked questions; under attack, a question counts with its worst "
                 "adversarial version. 'broken %': correctly answered questions answered wrongly after the attack.",
                 ["attack", "target", "questions", "EM", "EM adv", "F1", "F1 adv", "broken %"], table,
                 attack_bars(pooled, "f1", targets, ylabel="F1", series_of=triples))]


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
    return [View("Success rate, Recall@k, MRR, MAP (DPAEG Tables 2-3 shape)",
                 "Success rate: % of originally correct questions answered wrongly after the attack (0% is ideal); "
                 "ranking metrics over the system's candidate answers, before and after.",
                 ["attack", "target", "n", *[lab for _, lab in fields]], table,
                 attack_bars(pooled, "success_rate", targets, ylabel="success rate % (0 is ideal)",
                             reference=0.0))]
