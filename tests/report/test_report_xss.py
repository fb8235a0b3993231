"""Payloads in every user-controlled field of a run render as text in headless Chromium: no script runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.report.html import write_report
from callbluff.targets import CallableTarget

PAYLOADS = [
    "<script>document.title='pwned'</script>",
    '<img src=x onerror="window.__pwned=1">',
    '<a href="javascript:window.__pwned=2">x</a>',
    "</style><script>window.__pwned=3</script>",
    "</script><script>window.__pwned=4</script>",
]
ALL = " ".join(PAYLOADS)

CHECK = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  var p = document.createElement("pre"); p.id = "xss-verdict";
  p.textContent = JSON.stringify({title: document.title, pwned: window.__pwned === undefined ? null : String(window.__pwned),
    rendered: document.documentElement.getAttribute("data-callbluff-rendered"),
    examples: document.querySelectorAll(".cb-list .ex").length, images: document.images.length,
    js_links: document.querySelectorAll("a[href^='javascript']").length,
    scripts: document.scripts.length, listText: (document.querySelector(".cb-list") || {}).textContent || ""});
  document.body.appendChild(p);
}, 200); });
</script>"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("needs headless Chromium (Debian package `chromium`; `bash scripts/setup.sh` installs it as root)")


def _hostile_run(tmp: Path) -> Path:
    data = tmp / "hostile.jsonl"
    rows = [{"id": f"{PAYLOADS[i % 5]}-{i}", "prompt_id": PAYLOADS[(i + 1) % 5],
             "text": f"{PAYLOADS[i % 5]} answer {i} {PAYLOADS[(i + 2) % 5]} more words here", "score": 2}
            for i in range(10)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def scorer(text: str) -> float:
        if "answer 3" in text:
            raise ValueError(f"target failed on {ALL}")
        return 1.0

    suite = parse_suite({"name": f"suite {PAYLOADS[0]}", "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0"
                                                                               "&score_max=2"},
                         "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}}],
                         "output": {"report": False}}, source="t")
    run = tmp / "run"
    Engine(suite, run, targets={f"scorer {PAYLOADS[1]}": CallableTarget(scorer),
                                f"other {PAYLOADS[4]}": CallableTarget(lambda t: 2.0)}).execute()
    # attack parameters with payloads (no registered attack takes free text, so they are written as a run would)
    hostile = json.dumps({"tokenizer": ALL})
    metrics = json.loads((run / "metrics.json").read_text())
    for r in metrics:
        if r["attack"] != "clean":
            r["params"] = hostile
    (run / "metrics.json").write_text(json.dumps(metrics))
    ex = pd.read_parquet(run / "examples.parquet")
    ex["params"] = hostile
    ex.to_parquet(run / "examples.parquet")
    meta = json.loads((run / "run.json").read_text())
    meta["notes"] = [ALL]
    (run / "run.json").write_text(json.dumps(meta))
    return run


def test_no_payload_runs_in_chromium(tmp_path: Path) -> None:
    browser = chromium()
    run = _hostile_run(tmp_path)
    html = write_report(run).read_text(encoding="utf-8")
    for p in PAYLOADS:
        assert p not in html  # nowhere raw: not in markup, not in the embedded JSON
    assert html.count("<script") == 2  # the example data and the page's own script
    page = tmp_path / "checked.html"
    cut = html.rindex("</body>")
    page.write_text(html[:cut] + CHECK + html[cut:], encoding="utf-8")
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    m = re.search(r'<pre id="xss-verdict">(.*?)</pre>', dom, re.S)
    assert m, f"the checker did not run; DOM starts: {dom[:500]!r}"
    verdict = json.loads(m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
                         .replace("&amp;", "&"))
    assert verdict["pwned"] is None  # no payload set the global
    assert verdict["title"] == f"callbluff report: suite {PAYLOADS[0]}"  # the payload is text in the title
    assert verdict["rendered"] == "1" and verdict["examples"] == 10  # the browser ran and shows a page
    assert verdict["images"] == 0 and verdict["js_links"] == 0 and verdict["scripts"] == 3  # + the checker
    assert PAYLOADS[1] in verdict["listText"] and PAYLOADS[4] in verdict["listText"]  # shown as text
    assert f"target failed on {PAYLOADS[0]}" in verdict["listText"]  # the error message, as text
    shot = tmp_path / "hostile-report.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1200,2400", f"--screenshot={shot}", page.as_uri()], capture_output=True,
                   timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000
