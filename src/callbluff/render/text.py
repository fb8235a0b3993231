"""Numbers and parameters as the report and the terminal print them; the pooled row of each attack configuration."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from callbluff.metrics.fields import metric_field
from callbluff.render.catalogue import attack_meta


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


def metric_value(name: str, v: Any) -> str:
    """A value of metric field ``name`` as its declared unit reads (:mod:`callbluff.metrics.fields`): a
    percentage to one decimal (:func:`pct`), any other figure to 3 significant places (:func:`fmt`)."""
    field = metric_field(name)
    return pct(v) if field is not None and field.unit == "%" else fmt(v)


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


def _defaults(attack: str) -> dict[str, Any]:
    """The attack's parameter defaults as JSON values, as the run recorded them (:mod:`callbluff.render.catalogue`;
    {} for an attack neither the run nor the registry knows)."""
    meta = attack_meta(attack)
    return dict(meta["defaults"]) if meta else {}


def num(v: Any) -> float | None:
    """A finite float, or None."""
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def natural_key(text: str) -> tuple[tuple[int, float, str], ...]:
    """Sort key that orders numbers by value ("percent=2.0" before "percent=10.0")."""
    return tuple((0, float(t), "") if re.fullmatch(r"-?\d+(\.\d+)?", t) else (1, 0.0, t)
                 for t in re.findall(r"-?\d+(?:\.\d+)?|[^\d-]+|-", text))


def pooled_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One row per (target, attack, params): the ``all`` row where it exists, else the only prompt's row, else
    every prompt's row (a configuration the engine did not pool)."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("attack") != "clean":
            groups.setdefault((str(r["target"]), str(r["attack"]), str(r["params"])), []).append(r)
    out: list[Mapping[str, Any]] = []
    for rs in groups.values():
        pooled = [r for r in rs if r.get("prompt") == "all"]
        out.extend(pooled or rs)
    return out


def row_label(r: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
    """The attack name, with ``[prompt P]`` when its configuration has several unpooled prompt rows."""
    if r.get("prompt") in ("all", None):
        return str(r["attack"])
    same = [x for x in rows if (x["target"], x["attack"], x["params"]) == (r["target"], r["attack"], r["params"])]
    return str(r["attack"]) + (f" [prompt {r['prompt']}]" if len(same) > 1 else "")


def config_labels(attack: str, params: Sequence[Any]) -> dict[str, str]:
    """Labels for the configurations of one attack in a suite, keyed by their ``params`` (JSON strings): the
    parameters whose value differs between the configurations, each written out (a grid value equal to the
    default is shown, not hidden; whole floats without ``.0``), in the order they first appear. When nothing
    differs (one configuration), the non-default parameters (:func:`short_params`, "defaults" if none).
    Used wherever configurations of one attack stand side by side (chart panels, the Kumar grid, compare)."""
    parsed = {str(p): _params_dict(p) for p in params}
    keys = [k for k in dict.fromkeys(k for d in parsed.values() for k in d)
            if len({json.dumps(d.get(k), sort_keys=True, default=str) for d in parsed.values()}) > 1]
    if not keys:
        return {p: short_params(p, attack) for p in parsed}
    return {p: " ".join(f"{k}={_value(d.get(k))}" for k in keys if d.get(k) is not None) or "defaults"
            for p, d in parsed.items()}


def _params_dict(params: Any) -> dict[str, Any]:
    try:
        d = json.loads(params) if isinstance(params, str) else dict(params)
    except (TypeError, ValueError):
        return {"params": str(params)}
    return d if isinstance(d, dict) else {"params": d}


def _value(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)
