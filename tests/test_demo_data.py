"""The demo data sets shipped in ``callbluff/data`` (written for the project, used by ``make demo``): they parse,
ids are unique, scores lie on the prompt's scale, splits are stratified, SQuAD offsets point at the answers,
counts match the README, texts are not duplicated, scores follow the rubric's key elements, and the builder
reproduces the committed files byte for byte."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import callbluff

DATA = Path(callbluff.__file__).resolve().parent / "data"
BUILDER = Path(__file__).resolve().parents[1] / "scripts" / "demo_data" / "build.py"  # not installed: in the checkout
FILES = ("demo_prompts.json", "demo_content.jsonl", "demo_essays.jsonl", "demo_squad.json")


def read_jsonl(name: str) -> list[dict[str, Any]]:
    rows = []
    for i, line in enumerate((DATA / name).read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"{name}:{i}: empty line"
        rows.append(json.loads(line))
    return rows


def norm_key(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def n_sentences(text: str) -> int:
    return len([s for s in re.split(r"[.!?]+(?:\s+|$)", text) if len(s.split()) >= 2])


@pytest.fixture(scope="module")
def prompts() -> dict[str, dict[str, Any]]:
    rows = json.loads((DATA / "demo_prompts.json").read_text(encoding="utf-8"))
    return {p["id"]: p for p in rows}


@pytest.fixture(scope="module")
def content() -> list[dict[str, Any]]:
    return read_jsonl("demo_content.jsonl")


@pytest.fixture(scope="module")
def essays() -> list[dict[str, Any]]:
    return read_jsonl("demo_essays.jsonl")


@pytest.fixture(scope="module")
def squad() -> dict[str, Any]:
    return json.loads((DATA / "demo_squad.json").read_text(encoding="utf-8"))


def test_prompts(prompts: dict[str, dict[str, Any]]) -> None:
    assert set(prompts) == {"demo-1", "demo-2", "demo-essay"}
    expected = {"demo-1": ("content", 0, 2), "demo-2": ("content", 0, 3), "demo-essay": ("essay", 1, 6)}
    for pid, (task, lo, hi) in expected.items():
        p = prompts[pid]
        assert (p["task"], p["score_min"], p["score_max"]) == (task, lo, hi)
        assert len(p["text"].split()) >= 15 and len(p["rubric"].split()) >= 40
    assert prompts["demo-1"]["source"] is None
    assert 180 <= len(prompts["demo-2"]["source"].split()) <= 240  # the ~200-word article
    assert "bamboo" in prompts["demo-2"]["source"] and "eucalyptus" in prompts["demo-2"]["source"]


def check_scored(rows: list[dict[str, Any]], prompts: dict[str, dict[str, Any]], task: str) -> None:
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for r in rows:
        assert set(r) == {"id", "prompt_id", "text", "score", "split"}, r["id"]
        p = prompts[r["prompt_id"]]
        assert p["task"] == task
        assert re.fullmatch(rf"{re.escape(r['prompt_id'])}-\d{{4}}", r["id"]), r["id"]
        assert isinstance(r["score"], int) and p["score_min"] <= r["score"] <= p["score_max"], r["id"]
        assert r["split"] in {"train", "test"} and r["text"].strip() == r["text"] and r["text"]
    keys = Counter(norm_key(r["text"]) for r in rows)
    dups = [k for k, n in keys.items() if n > 1]
    assert not dups, f"duplicate texts: {dups[:3]}"
    # Splits stratified by score: every score has train and test rows, test ~25% of each score.
    by = Counter((r["prompt_id"], r["score"], r["split"]) for r in rows)
    for pid, score in {(r["prompt_id"], r["score"]) for r in rows}:
        n_test, n_train = by[(pid, score, "test")], by[(pid, score, "train")]
        assert n_test >= 1 and n_train >= 1
        assert n_test == round(0.25 * (n_test + n_train)), (pid, score, n_test, n_train)


def test_content(content: list[dict[str, Any]], prompts: dict[str, dict[str, Any]]) -> None:
    check_scored(content, prompts, "content")
    for pid in ("demo-1", "demo-2"):
        rows = [r for r in content if r["prompt_id"] == pid]
        assert len(rows) == 220
        dist = Counter(r["score"] for r in rows)
        top, zero = dist[prompts[pid]["score_max"]] / len(rows), dist[0] / len(rows)
        assert 0.25 <= top <= 0.35 and 0.30 <= zero <= 0.40, (pid, dist)
        words = [len(r["text"].split()) for r in rows]
        assert max(words) <= 60
        assert sum(w < 5 for w in words) <= 0.1 * len(rows)  # a few very short answers, like real ones


def test_content_scores_follow_the_rubric(content: list[dict[str, Any]]) -> None:
    """Key-element checks a grader would make (misspellings included): a demo-1 answer earns 2 only if it
    names conduction and 0 never when it does; a demo-2 answer earns 3 only with the article's food detail."""
    for r in content:
        t = r["text"].lower()
        if r["prompt_id"] == "demo-1":
            if r["score"] == 2:
                assert "condu" in t, r
            if r["score"] == 0:
                assert "condu" not in t, r
        elif r["score"] == 3:
            assert re.search(r"bamb|euca|ucaly", t), r


def test_essays(essays: list[dict[str, Any]], prompts: dict[str, dict[str, Any]]) -> None:
    check_scored(essays, prompts, "essay")
    assert len(essays) == 120
    assert set(Counter(r["score"] for r in essays)) == set(range(1, 7))
    for r in essays:
        assert 120 <= len(r["text"].split()) <= 350, r["id"]
        assert n_sentences(r["text"]) >= 5, r["id"]
    # Quality follows the score: longer, better-developed essays score higher on average.
    mean_len = {s: sum(len(r["text"].split()) for r in essays if r["score"] == s) / sum(
        r["score"] == s for r in essays) for s in range(2, 7)}
    assert all(mean_len[s] < mean_len[s + 1] for s in range(2, 6)), mean_len


def test_squad(squad: dict[str, Any]) -> None:
    assert squad["version"] == "1.1"
    assert len(squad["data"]) == 6
    ids = []
    for art in squad["data"]:
        assert len(art["paragraphs"]) == 1
        para = art["paragraphs"][0]
        ctx = para["context"]
        assert 120 <= len(ctx.split()) <= 180, art["title"]
        assert len(para["qas"]) == 5
        for qa in para["qas"]:
            ids.append(qa["id"])
            assert qa["question"].endswith("?") and qa["answers"]
            for ans in qa["answers"]:
                start = ans["answer_start"]
                assert ctx[start : start + len(ans["text"])] == ans["text"], (qa["id"], ans)
    assert len(ids) == len(set(ids)) == 30


def distribution_row(rows: list[dict[str, Any]], prompt: dict[str, Any]) -> str:
    dist = Counter(r["score"] for r in rows)
    split = Counter(r["split"] for r in rows)
    per = ", ".join(f"{s}: {dist[s]}" for s in sorted(dist))
    return (f"| {prompt['id']} | {prompt['task']} | {prompt['score_min']}-{prompt['score_max']} | {len(rows)} "
            f"| {per} | {split['train']} / {split['test']} |")


def test_readme_counts(content: list[dict[str, Any]], essays: list[dict[str, Any]],
                       prompts: dict[str, dict[str, Any]], squad: dict[str, Any]) -> None:
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for pid, rows in (("demo-1", content), ("demo-2", content), ("demo-essay", essays)):
        row = distribution_row([r for r in rows if r["prompt_id"] == pid], prompts[pid])
        assert row in readme, f"README.md should contain the line\n{row}"
    n_q = sum(len(p["qas"]) for a in squad["data"] for p in a["paragraphs"])
    assert f"{len(squad['data'])} paragraphs, {n_q} questions" in readme


def test_loaders_read_the_demo_files() -> None:
    from callbluff.datasets import load

    ds = load(f"jsonl:{DATA / 'demo_content.jsonl'}?score_min=0&score_max=3")
    assert len(ds) == 440 and set(ds.prompts) == {"demo-1", "demo-2"}
    assert len(load(f"jsonl:{DATA / 'demo_essays.jsonl'}?task=essay&score_min=1&score_max=6")) == 120
    qa = load(f"squad:{DATA / 'demo_squad.json'}").records()
    assert len(qa) == 30 and all(c.startswith(a) for q in qa for a, c in
                                 zip(q.answers, (q.context[s:] for s in q.answer_starts), strict=True))


def test_builder_reproduces_the_files(tmp_path: Path) -> None:
    """The committed files are exactly what ``scripts/demo_data/build.py`` writes (no hand edits, same seed,
    same bytes)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, str(BUILDER), str(tmp_path)], check=True, env=env,
                   capture_output=True, timeout=120)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), f"{name} differs from the builder"
