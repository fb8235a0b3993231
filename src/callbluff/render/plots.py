"""Inline SVG bar charts (matplotlib, Agg backend): no image files, no network, text kept as SVG text.

Every label is escaped by matplotlib's SVG writer (``svg.fonttype = "none"`` writes labels as ``<text>``
elements whose content is XML-escaped), so names from a run cannot add markup, and mathtext is off
(``text.parse_math``), so a ``$`` in a name is a dollar sign. Ids are salted with a fixed
string and the date is left out, so the same figures render to the same bytes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")


def bar_svg(categories: Sequence[str], series: Mapping[str, Sequence[float | None]], *, ylabel: str,
            title: str = "", ymax: float | None = 100.0, reference: float | None = None, width: float = 8.4,
            ranges: Mapping[str, Sequence[tuple[float, float] | None]] | None = None) -> str:
    """Grouped horizontal bars: one group per category, one bar per series (missing values leave a gap).

    ``reference`` draws a dashed line (e.g. the ideal value); ``width`` is the figure's width in inches;
    ``ranges`` (per series, per category) draws a (low, high) whisker over each bar and labels the bar
    ``value (low–high)`` (e.g. the mean of an attack's configurations and their range). The height grows with
    the bars (0.32 inch a bar, at most 14 inches: callers split longer charts, see
    :func:`callbluff.render.views.attack_bars`). Returns an ``<svg ...>...</svg>`` string."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    cats = list(categories)
    names = list(series)
    height = max(1.6, 0.32 * len(cats) * max(1, len(names)) + 0.9)
    # text.parse_math off: every label, tick, title and legend entry is the user's text as written (a name
    # with ``$...$`` is no mathtext, which could fail to parse or change what the name shows)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "callbluff", "font.size": 9,
                                "font.family": "sans-serif", "text.parse_math": False}):
        fig, ax = plt.subplots(figsize=(width, min(height, 14.0)))
        bar_h = 0.8 / max(1, len(names))
        for k, name in enumerate(names):
            vals = [v if v is not None else 0.0 for v in series[name]]
            ys = [i - 0.4 + bar_h * (k + 0.5) for i in range(len(cats))]
            bars = ax.barh(ys, vals, height=bar_h * 0.92, color=PALETTE[k % len(PALETTE)],
                           label=name if len(name) <= 32 else name[:31] + "…")
            spans = list((ranges or {}).get(name) or [None] * len(cats))
            for b, v, span in zip(bars, series[name], spans):
                y = b.get_y() + b.get_height() / 2
                label = "n/a" if v is None else _num(v)
                x = b.get_width()
                if span is not None:
                    ax.plot([span[0], span[1]], [y, y], color="#222", linewidth=1.1, solid_capstyle="butt")
                    ax.plot([span[0], span[0]], [y - bar_h * 0.25, y + bar_h * 0.25], color="#222", linewidth=1.1)
                    ax.plot([span[1], span[1]], [y - bar_h * 0.25, y + bar_h * 0.25], color="#222", linewidth=1.1)
                    label += f" ({_num(span[0])}–{_num(span[1])})"
                    x = max(x, span[1])
                ax.annotate(label, (x, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7,
                            color="#333")
        ax.set_yticks(range(len(cats)), [c if len(c) <= 48 else c[:47] + "…" for c in cats])
        ax.invert_yaxis()
        ax.set_xlabel(ylabel)
        if ymax is not None:
            ax.set_xlim(0, ymax * (1.22 if ranges else 1.08))  # room for the labels right of the bars
            ax.set_xticks([t for t in ax.get_xticks() if 0 <= t <= ymax])
        if reference is not None:
            ax.axvline(reference, color="#999", linestyle="--", linewidth=1)
        if title:
            ax.set_title(title, fontsize=10, loc="left")
        if len(names) > 1:  # outside the axes: never over a bar
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return inline_svg(buf.getvalue())


def _num(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.2g}"


def inline_svg(svg: str) -> str:
    """matplotlib's SVG file as an element for an HTML page: the XML prolog, the RDF metadata and the namespace
    declarations (HTML's parser supplies them for inline SVG) are dropped."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    return re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", svg[:400], count=2) + svg[400:]
