"""A self-contained ``report.html`` for a run directory (no external assets; the full report with plots
and annotation sheets builds on this)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader

from callbluff.metrics.rows import FIELDS



def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if abs(v) >= 10:
            return f"{v:.1f}".rstrip("0").rstrip(".")
        return f"{v:.3g}" if abs(v) < 0.01 and v != 0 else f"{v:.3f}".rstrip("0").rstrip(".")
    return str(v)


def short_params(params: Any) -> str:
    """``{"a":1,"b":null}`` -> ``a=1`` (parameters left at null defaults are omitted)."""
    try:
        d = json.loads(params) if isinstance(params, str) else dict(params)
    except (TypeError, ValueError):
        return str(params)
    return " ".join(f"{k}={v}" for k, v in d.items() if v is not None) or "defaults"


def headlines(task: str, rows: list[dict[str, Any]]) -> list[str]:
    """One plain sentence per (attack, params, target), from the pooled row (prompt "all" or the only one)."""
    out: list[str] = []
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r["attack"] != "clean":
            groups.setdefault((r["attack"], r["params"], r["target"]), []).append(r)
    for (attack, params, target), rs in groups.items():
        r = next((x for x in rs if x["prompt"] == "all"), rs[0] if len(rs) == 1 else None)
        if r is None:
            continue
        head = f"{attack} ({short_params(params)}) against {target}: "
        if task in ("essay", "content") and r.get("n"):
            unchanged = 100.0 - (r.get("neg_pct") or 0.0) - (r.get("pos_pct") or 0.0)
            text = (f"{_fmt(unchanged)}% of {r['n']} adversarial responses kept their score, "
                    f"{_fmt(r.get('pos_pct'))}% gained; mean change {_fmt(r.get('mean_diff_pct'))}% of the scale")
            if r.get("arr") is not None:
                text += f"; only {_fmt(r['arr'])}% were rejected (ARR; 100% is ideal)"
            out.append(head + text + ".")
        elif task == "reading" and r.get("em") is not None:
            out.append(head + f"EM {_fmt(r.get('em'))} → {_fmt(r.get('em_adv'))}, F1 {_fmt(r.get('f1'))} → "
                       f"{_fmt(r.get('f1_adv'))} on {r.get('n')} questions.")
        elif r.get("success_rate") is not None:
            out.append(head + f"success rate {_fmt(r['success_rate'])}% on {r.get('n')} adversarial questions.")
    return out


def _fields_for(task: str, rows: list[dict[str, Any]]) -> list[str]:
    base = FIELDS.get(task, FIELDS["questions"])
    present = {k for r in rows for k, v in r.items() if v is not None}
    return [f for f in base if f in present]


def _examples(run_dir: Path, per_attack: int) -> list[dict[str, Any]]:
    path = run_dir / "examples.parquet"
    if not path.exists() or per_attack == 0:
        return []
    df = pd.read_parquet(path)
    if not len(df):
        return []
    out = []
    for (_attack, _params), g in df.groupby(["attack", "params"], sort=True):
        g = g.copy()
        if g["adv_score"].notna().any():
            # most telling first: adversarial inputs whose score did not drop
            g["_delta"] = g["adv_score"] - g["orig_score"]
            g = g.sort_values(["_delta", "example_id"], ascending=[False, True])
        out.extend(g.head(per_attack).to_dict("records"))
    return out


def write_report(run_dir: str | Path, per_attack: int = 3) -> Path:
    """Render ``report.html`` from run.json, metrics.json, examples.parquet and errors.jsonl."""
    run_dir = Path(run_dir)
    meta = json.loads((run_dir / "run.json").read_text())
    metrics = json.loads((run_dir / "metrics.json").read_text()) if (run_dir / "metrics.json").exists() else []
    errors = []
    if (run_dir / "errors.jsonl").exists():
        errors = [json.loads(line) for line in (run_dir / "errors.jsonl").read_text().splitlines() if line]
    task = meta.get("dataset", {}).get("task", "content")
    env = Environment(loader=PackageLoader("callbluff.report", "templates"),
                      autoescape=True)  # user text (essays, answers) is always escaped
    env.filters["fmt"] = _fmt
    env.filters["short_params"] = short_params
    html = env.get_template("report.html.j2").render(
        meta=meta, metrics=metrics, fields=_fields_for(task, metrics), task=task,
        headlines=headlines(task, metrics),
        examples=_examples(run_dir, per_attack), errors=errors[:50], n_errors=len(errors),
    )
    out = run_dir / "report.html"
    out.write_text(html, encoding="utf-8")
    return out
