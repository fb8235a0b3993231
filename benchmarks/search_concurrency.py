"""Model-in-the-loop searches through the engine: sequential vs concurrent (issue 9 acceptance).

200 records, a real HTTP scoring server on 127.0.0.1 answering each request after 20 ms, an HttpTarget with
``concurrency = 8``, and a greedy search attack that asks one candidate at a time (5 queries per record, as a
word-by-word search does). The same suite runs with ``output.search_concurrency = 1`` and ``= 8``, each into a
fresh run directory with a fresh cache; the examples must be identical. Figures go to
``benchmarks/results/search_concurrency.json`` and ``benchmarks/search_concurrency.md``.

Usage: python benchmarks/search_concurrency.py [--records 200] [--delay 0.02] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from callbluff.attacks.base import SearchAttack, SearchParams, registered
from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.records import ScoredResponse

HERE = Path(__file__).resolve().parent
WORDS = ["bamboo", "koala", "habitat", "zebra", "granite", "panda", "forest", "leaf", "river", "stone"]


class _Params(SearchParams):
    steps: int = 5


class GreedyAppendOne(SearchAttack):
    """Benchmark search (Sec. n/a): append one word per step, keep it if the score went up; one query per step."""

    name = "BenchGreedyAppend"
    task = "content"
    family = "benchmark"
    paper = "benchmark"
    description = "benchmark-only greedy search"
    Params = _Params
    expect = "bottom"
    record_type = ScoredResponse

    def search(self, record, oracle, rng, res, prompt=None, state=None):  # type: ignore[no-untyped-def]
        text, best = record.text, -1.0
        for word in rng.permutation(WORDS)[: self.params.steps]:
            out = oracle.ask_one(f"{text} {word}")
            if out is None:
                break
            if out.ok and out.score > best:
                text, best = f"{text} {word}", out.score
        return [self.perturbed(record, text)] if text != record.text else []


def serve(delay: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small response: do not wait for a delayed ACK

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(delay)
            data = json.dumps({"score": len(body["text"].split()) % 4}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def run(data: Path, url: str, out: Path, search_concurrency: int, http_concurrency: int) -> float:
    suite = parse_suite({
        "name": "search-bench", "seed": 1,
        "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
        "target": [{"name": "api", "type": "http", "url": url, "response_path": "score",
                    "concurrency": http_concurrency, "retries": 0}],
        "attack": [{"name": "BenchGreedyAppend", "query_budget": 5}],
        "output": {"report": False, "search_concurrency": search_concurrency, "chunk_size": 1000},
    }, source="benchmark")
    t0 = time.perf_counter()
    Engine(suite, out).execute()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--delay", type=float, default=0.02)
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp, registered(GreedyAppendOne):
        data = Path(tmp) / "a.jsonl"
        data.write_text("".join(json.dumps({"id": f"r{i}", "prompt_id": "p", "score": 1,
                                            "text": " ".join(rng.choice(WORDS, 4))}) + "\n"
                                for i in range(args.records)))
        httpd = serve(args.delay)
        url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        try:
            seq = run(data, url, Path(tmp) / "seq", 1, args.concurrency)
            conc = run(data, url, Path(tmp) / "conc", args.concurrency, args.concurrency)
        finally:
            httpd.shutdown()
        a = pd.read_parquet(Path(tmp) / "seq" / "examples.parquet").sort_values("example_id").reset_index(drop=True)
        b = pd.read_parquet(Path(tmp) / "conc" / "examples.parquet").sort_values("example_id").reset_index(drop=True)
        identical = a.drop(columns=["chunk"]).equals(b.drop(columns=["chunk"]))
        queries = int(a["queries"].sum())
    result = {"records": args.records, "delay_s": args.delay, "http_concurrency": args.concurrency,
              "queries": queries, "sequential_s": round(seq, 3), "concurrent_s": round(conc, 3),
              "speedup": round(seq / conc, 2), "identical_examples": identical,
              "load_average": os.getloadavg()[0], "machine": f"{platform.machine()}, {os.cpu_count()} cores"}
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "search_concurrency.json").write_text(json.dumps(result, indent=2) + "\n")
    md = [
        "# Concurrent model-in-the-loop searches (benchmarks/search_concurrency.py)",
        "",
        f"{args.records} records, greedy search of 5 one-at-a-time queries per record ({queries} queries), a real "
        f"HTTP server on 127.0.0.1 answering after {args.delay * 1000:.0f} ms, HttpTarget concurrency "
        f"{args.concurrency}; fresh cache for each run.",
        "",
        "| search_concurrency | seconds |",
        "| --- | --- |",
        f"| 1 (sequential) | {seq:.2f} |",
        f"| {args.concurrency} | {conc:.2f} |",
        "",
        f"**Speed-up {seq / conc:.2f}x** (goal >= 4x); examples identical: **{identical}**. "
        f"Load average when measured: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.",
    ]
    (HERE / "search_concurrency.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    if not identical:
        raise SystemExit("concurrent and sequential searches gave different examples")


if __name__ == "__main__":
    main()
