"""Numbers and parameters as the report and the terminal print them, and one plain sentence per metric row."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any


def fmt(v: Any) -> str:
    """A metric value for people: ``None``/NaN -> "–", floats to 3 significant places, trailing zeros dropped."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if abs(v) >= 10:
            return f"{v:.1f}".rstrip("0").rstrip(".")
        return f"{v:.3g}" if abs(v) < 0.01 and v != 0 else f"{v:.3f}".rstrip("0").rstrip(".")
    return str(v)


def pct(v: Any) -> str:
    """A percentage to one decimal ("12.5", "100", "-3.6"); "–" when undefined."""
    x = num(v)
    if x is None:
        return "–"
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def short_params(params: Any, attack: str | None = None) -> str:
    """``{"a":1,"b":null}`` -> ``a=1`` (parameters left at null defaults are omitted). Given the ``attack``'s
    registered name, parameters at that attack's defaults are omitted too (for narrow places such as the
    terminal, where DPAEG's full dependency-relation list would fill the screen); the report's provenance keeps
    every value."""
    try:
        d = json.loads(params) if isinstance(params, str) else dict(params)
    except (TypeError, ValueError):
        return str(params)
    defaults = _defaults(attack) if attack else {}
    return " ".join(f"{k}={v}" for k, v in d.items()
                    if v is not None and not (k in defaults and defaults[k] == v)) or "defaults"


@lru_cache(maxsize=256)
def _defaults(attack: str) -> dict[str, Any]:
    """The registered attack's parameter defaults as JSON values ({} for an unknown attack); read-only, cached
    (every metric row of an attack asks)."""
    from callbluff.attacks.base import get_attack

    try:
        fields = get_attack(attack).Params.model_fields
    except (KeyError, AttributeError):
        return {}
    out: dict[str, Any] = {}
    for k, f in fields.items():
        if f.is_required():
            continue
        try:
            out[k] = json.loads(json.dumps(f.get_default(call_default_factory=True), default=list))
        except (TypeError, ValueError):
            continue
    return out


def num(v: Any) -> float | None:
    """A finite float, or None."""
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def sentence(task: str, r: Mapping[str, Any]) -> str | None:
    """One plain sentence for an attack's metric row (what happened, in the papers' terms); None when the row
    has nothing to say (e.g. an attack that failed on every record)."""
    n = r.get("n")
    if task in ("essay", "content"):
        if r.get("neg_pct") is None and r.get("mean_score_pct") is not None:  # prompt-level generator
            text = f"{n} generated answers got on average {pct(r.get('mean_score_pct'))}% of the score range"
            if r.get("arr") is not None:
                text += f"; {pct(r['arr'])}% were rejected (ARR; 100% is ideal)"
            return text + "."
        if not n:
            return None
        unchanged = 100.0 - (num(r.get("neg_pct")) or 0.0) - (num(r.get("pos_pct")) or 0.0)
        text = (f"{pct(unchanged)}% of {n} adversarial responses kept their score, {pct(r.get('pos_pct'))}% "
                f"gained; mean change {pct(r.get('mean_diff_pct'))}% of the scale")
        if r.get("arr") is not None:
            text += f"; {pct(r['arr'])}% were rejected (ARR; 100% is ideal)"
        return text + "."
    if task == "reading" and r.get("em") is not None:
        return (f"EM {fmt(r.get('em'))} → {fmt(r.get('em_adv'))}, F1 {fmt(r.get('f1'))} → {fmt(r.get('f1_adv'))} "
                f"on {n} questions" + (f"; {pct(r['broken_pct'])}% of the correctly answered ones broke"
                                       if r.get("broken_pct") is not None else "") + ".")
    if r.get("success_rate") is not None:
        return f"success rate {pct(r['success_rate'])}% on {n} adversarial questions (DPAEG; 0% is ideal)."
    return None


def headlines(task: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One plain sentence per (attack, params, target), from the pooled row (prompt "all" or the only one)."""
    out: list[str] = []
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        if r["attack"] != "clean":
            groups.setdefault((r["attack"], r["params"], r["target"]), []).append(r)
    for (attack, params, target), rs in groups.items():
        r = next((x for x in rs if x["prompt"] == "all"), rs[0] if len(rs) == 1 else None)
        if r is None:
            continue
        text = sentence(task, r)
        if text is not None:
            out.append(f"{attack} ({short_params(params)}) against {target}: {text}")
    return out
