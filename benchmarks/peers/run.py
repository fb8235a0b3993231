"""callbluff beside nlpaug, TextAttack and CheckList on the same real texts, in one run (issue 15).

Texts: the first ``--n`` (default 320) ASAP-SAS training answers (../shared/data/asap-sas/train.tsv.gz). Our
operations run in this interpreter through the engine's generate path (``generate_examples``, the answers
wrapped as the record type each attack takes; warm-up on 5 answers, so one-time spaCy / WordNet loading is not
counted); the peers run in benchmarks/.peers-venv (``bash benchmarks/peers/setup.sh``) through
benchmarks/peers/peer_ops.py on the very same texts. The rate compared is *inputs per second* (texts processed),
because a callbluff attack may emit several variants per input (its ``outputs/s`` is listed too).

Closest equivalents (our operation | theirs):

- keyboard typos: ``NoiseKeyboard`` (DPAEG baseline, Belinkov & Bisk; keywords from spaCy's parse) | nlpaug
  ``KeyboardAug``, TextAttack ``WordSwapQWERTY``, CheckList ``Perturb.add_typos``;
- character replacement: ``NoiseReplace`` | nlpaug ``RandomCharAug(substitute)``, TextAttack
  ``WordSwapRandomCharacterSubstitution``;
- word shuffle: ``Shuffle`` (Ding et al.) | nlpaug ``RandomWordAug(swap)``;
- word deletion: ``DelRand`` (Kumar et al., sentence units by default: the closest we have) | nlpaug
  ``RandomWordAug(delete)``, TextAttack ``WordDeletion``;
- WordNet synonym swap: ``ModLexicon`` (Kumar et al.) | nlpaug ``SynonymAug(wordnet)``, TextAttack
  ``WordSwapWordNet``.

Our operations do more per input than the peers' (a spaCy parse for keywords, sentences or POS, provenance
meta, size/position criteria); that is part of what is timed. Goals: >= 10x nlpaug, >= 100x TextAttack,
>= CheckList on every operation.

    bash benchmarks/peers/setup.sh && .venv/bin/python benchmarks/peers/run.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from callbluff.datasets import load  # noqa: E402
from callbluff.engine.generate import AttackSpec, GenerationTask, fit_states, generate_examples  # noqa: E402
from callbluff.records import OpenQuestion, ScoredResponse  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "asap-sas" / "train.tsv.gz"
PEERS_PY = REPO / "benchmarks" / ".peers-venv" / "bin" / "python"
OURS = {"keyboard typos": ("NoiseKeyboard", {}), "character replacement": ("NoiseReplace", {}),
        "word shuffle": ("Shuffle", {}), "word deletion": ("DelRand", {}),
        "WordNet synonym swap": ("ModLexicon", {})}
GOALS = {"nlpaug": 10.0, "TextAttack": 100.0, "CheckList": 1.0}


def records_for(attack: str, answers: list[ScoredResponse]) -> list[Any]:
    if attack.startswith("Noise"):
        return [OpenQuestion(id=a.id, question=a.text) for a in answers]
    return answers


def time_ours(answers: list[ScoredResponse], prompts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for op, (name, params) in OURS.items():
        recs = records_for(name, answers)
        spec = AttackSpec.make(name, params)
        row: dict[str, Any] = {"tool": "callbluff", "operation": op, "attack": name}
        try:
            states = fit_states([spec], recs, prompts)
            generate_examples(GenerationTask(recs[:5], prompts, [spec], 0, states))  # warm-up
            t0 = time.perf_counter()
            res = generate_examples(GenerationTask(recs, prompts, [spec], 0, states))
            secs = time.perf_counter() - t0
            row.update(inputs=len(recs), outputs=len(res.examples), errors=len(res.errors), seconds=round(secs, 3),
                       texts_per_s=round(len(recs) / secs, 1), outputs_per_s=round(len(res.examples) / secs, 1),
                       status="ok")
        except Exception as e:  # noqa: BLE001
            row["status"] = f"not measured: {type(e).__name__}: {e}"[:300]
        out[op] = row
        print(json.dumps(row), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=320)
    args = ap.parse_args()
    load_before = os.getloadavg()
    ds = load(f"asap-sas:{DATA}")
    answers: list[ScoredResponse] = []
    for r in ds:
        if len(answers) >= args.n:
            break
        answers.append(r)
    ours = time_ours(answers, ds.prompts)
    peers: list[dict[str, Any]] = []
    notes = []
    if PEERS_PY.exists():
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump([a.text for a in answers], fh)
        env = {**os.environ, "NLTK_DATA": str(REPO / ".venv" / "nltk_data")}  # WordNet set up by scripts/setup.sh
        done = subprocess.run([str(PEERS_PY), str(Path(__file__).with_name("peer_ops.py")), fh.name],
                              capture_output=True, text=True, check=False, env=env)
        os.unlink(fh.name)
        if done.returncode == 0:
            got = json.loads(done.stdout.strip().splitlines()[-1])
            peers, notes = got["rows"], list(got["notes"])
        else:
            notes.append(f"peer_ops.py failed: {done.stderr[-500:]}")
    else:
        notes.append(f"{PEERS_PY} is missing: run bash benchmarks/peers/setup.sh")
    rows = []
    for op, mine in ours.items():
        rows.append({**mine, "ratio": ""})
        for p in peers:
            if p.get("operation") != op:
                continue
            ratio = (round(mine["texts_per_s"] / p["texts_per_s"], 2)
                     if mine.get("texts_per_s") and p.get("texts_per_s") else None)
            goal = GOALS[p["tool"]]
            rows.append({**p, "ratio": ratio, "goal": goal, "ok": None if ratio is None else ratio >= goal})
    for p in peers:
        if "operation" not in p:
            notes.append(f"{p['tool']}: {p['status']}")
    result = {"benchmark": "peers", "command": "python benchmarks/peers/run.py " + " ".join(sys.argv[1:]),
              "texts": len(answers), "data": "ASAP-SAS train.tsv.gz, first answers in file order",
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count()}, "rows": rows, "notes": notes}
    (REPO / "benchmarks" / "results").mkdir(exist_ok=True)
    (REPO / "benchmarks" / "results" / "peers.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# callbluff vs nlpaug, TextAttack, CheckList", "",
             f"Command: `{result['command']}`; {len(answers)} ASAP-SAS answers; load average before "
             f"{result['load_average_before']}, after {result['load_average_after']} on {os.cpu_count()} CPUs. "
             "Operations and fairness notes: the docstring of benchmarks/peers/run.py.", "",
             "| operation | tool | inputs/s | outputs/s | callbluff / tool | goal | status |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append(f"| {r['operation']} | {r['tool']}{' ' + r['attack'] if r.get('attack') else ''} | "
                     f"{r.get('texts_per_s', '')} | {r.get('outputs_per_s', '')} | {r.get('ratio', '')} | "
                     f"{r.get('goal', '')} | {r['status']}{' (goal NOT met)' if r.get('ok') is False else ''} |")
    lines += ["", *[f"- {n}" for n in notes]]
    Path(__file__).with_name("RESULTS-peers.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
