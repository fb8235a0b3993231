"""The numbers users read: metrics.json rows pinned to hand-computed values, for every task.

Each task has a small data set and a target whose adversarial answers move in known directions (score up,
down, unchanged; answer right, wrong; prediction failed, on the original or the adversarial input). The
same expected rows are checked twice:

- end to end, through :class:`callbluff.engine.run.Engine` (real attacks for essay/content: ShuffleSent,
  Shuffle; tiny test-only static attacks for reading/questions, registered only for the test), reading
  ``metrics.json``;
- on the pure row builder :func:`callbluff.engine.metrics_rows.compute_metrics`, fed hand-made tables.

Scoring tasks use two prompts with different scales, so the pooled ``all`` row (scores rescaled to 0-100 of
each prompt's range before pooling) is really checked. The arithmetic behind every expected value is in the
comments. Error counts (``n_errors*``) are not asserted here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from callbluff.attacks.base import _REGISTRY, AttackParams, StaticAttack, register
from callbluff.engine.metrics_rows import compute_metrics
from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.records import OpenQuestion, Perturbed, Prompt, QAExample, Record
from callbluff.resources.context import Resources
from callbluff.targets import CallableTarget, Input

FAIL = "FAIL"  # the target raises on this input: an error row, never a score
TARGET = "t"


def check_row(row: dict[str, Any], expected: dict[str, float]) -> None:
    for key, value in expected.items():
        assert row.get(key) == pytest.approx(value, rel=1e-12, abs=1e-12), (row["attack"], row["prompt"], key)


def find(rows: Sequence[dict[str, Any]], attack: str, prompt: str) -> dict[str, Any]:
    hits = [r for r in rows if r["attack"] == attack and r["prompt"] == prompt and r["target"] == TARGET]
    assert len(hits) == 1, (attack, prompt, [(r["attack"], r["prompt"]) for r in rows])
    tasks = {r["task"] for r in rows}
    assert len(tasks) == 1 and tasks <= {"essay", "content", "reading", "questions"}, tasks
    assert isinstance(json.loads(hits[0]["params"]), dict)  # canonical JSON of the attack's parameters
    if attack == "clean":
        assert hits[0]["params"] == "{}"
    return hits[0]


def fail_or(value: Any) -> Any:
    if value == FAIL:
        raise RuntimeError("test target fails on this input on purpose")
    return value


def run_engine(tmp_path: Path, spec: str, attack: str, fn: Callable[..., Any], **target: Any) -> list[dict]:
    suite = parse_suite({"name": "pinned", "seed": 3, "dataset": {"spec": spec}, "attack": [{"name": attack}],
                         "output": {"report": False}}, source="test")
    out = tmp_path / "run"
    Engine(suite, out, targets={TARGET: CallableTarget(fn, **target)}).execute()
    return json.loads((out / "metrics.json").read_text())


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# =========================================================================================== scoring
# (id, prompt, key word, gold, original score, adversarial score); the key word identifies the record
# in any order of its words or sentences. Ranges are inferred per prompt from the gold scores (min..max).

ESSAYS = [
    # prompt e1, scale 2-12 (range 10)
    ("E1", "e1", "Alice", 2, 4, 4),  # unchanged
    ("E2", "e1", "Bruno", 12, 10, 6),  # down 4
    ("E3", "e1", "Chloe", 7, 5, 8),  # up 3
    ("E4", "e1", "Dmitri", 8, 8, FAIL),  # adversarial prediction failed
    # prompt e2, scale 0-3 (range 3)
    ("F1", "e2", "Emma", 0, 0, 0),  # unchanged
    ("F2", "e2", "Felix", 3, 3, 1),  # down 2
    ("F3", "e2", "Greta", 2, 2, 1),  # down 1
    ("F4", "e2", "Hugo", 1, FAIL, 2),  # original prediction failed
]
ESSAY_ATTACK = "ShuffleSent"  # every essay has 3 sentences: all are attacked
ESSAY_PROMPTS = {"e1": (2, 12), "e2": (0, 3)}
ESSAY_EXPECTED = {
    # e1: valid pairs E1 0, E2 -4, E3 +3 (E4 missing) -> n 3; down 1/3, up 1/3, not lowered (up or same) 2/3;
    #     mean d = -1/3 of range 10 -> -3.333...%
    "e1": {"n": 3, "n_missing": 1, "neg_pct": 100 / 3, "pos_pct": 100 / 3, "not_lowered_pct": 200 / 3,
           "mean_diff_pct": -10 / 3},
    # e2: F1 0, F2 -2, F3 -1 (F4 missing) -> down 2/3, up 0, not lowered 1/3; mean d = -1 of range 3 -> -33.3%
    "e2": {"n": 3, "n_missing": 1, "neg_pct": 200 / 3, "pos_pct": 0.0, "not_lowered_pct": 100 / 3,
           "mean_diff_pct": -100 / 3},
    # all: differences as % of each prompt's range: e1 0, -40, +30; e2 0, -66.67, -33.33 -> n 6, 2 missing;
    #      down 3/6, up 1/6, not lowered 3/6; mean (0 - 40 + 30 + 0 - 66.67 - 33.33) / 6 = -110/6
    #      (pooling raw scores instead would give (0 - 4 + 3 + 0 - 2 - 1) / 6 = -0.67 points = -0.67%)
    "all": {"n": 6, "n_missing": 2, "neg_pct": 50.0, "pos_pct": 100 / 6, "not_lowered_pct": 50.0,
            "mean_diff_pct": -110 / 6},
}

ANSWERS = [
    # prompt p1, scale 0-3 (range 3); Shuffle attacks the correct answers only (gold 3, the top)
    ("c1", "p1", "apple", 3, 3, 1),  # down 2
    ("c2", "p1", "banana", 3, 2, 3),  # up 1
    ("c3", "p1", "cherry", 3, 3, 3),  # unchanged
    ("c4", "p1", "damson", 3, 3, FAIL),  # adversarial prediction failed
    ("c5", "p1", "elder", 0, 0, None),  # not attacked (gold 0)
    ("c6", "p1", "fig", 3, 1, 0),  # down 1, to the bottom
    # prompt p2, scale 1-5 (range 4, bottom 1)
    ("d1", "p2", "grape", 5, 5, 1),  # down 4, to the bottom
    ("d2", "p2", "hazel", 5, 4, 4),  # unchanged
    ("d3", "p2", "kiwi", 1, 1, None),  # not attacked (gold 1)
    ("d4", "p2", "lemon", 5, 3, 4),  # up 1
]
CONTENT_ATTACK = "Shuffle"
CONTENT_PROMPTS = {"p1": (0, 3), "p2": (1, 5)}
CONTENT_EXPECTED = {
    # p1: c1 -2, c2 +1, c3 0, c6 -1 (c4 missing) -> n 4; down 2/4, up 1/4, not lowered 2/4;
    #     mean d = -2/4 = -0.5 of range 3 -> -16.67%; ARR: adversarial scores 1, 3, 3, 0 -> one at the bottom 0
    "p1": {"n": 4, "n_missing": 1, "neg_pct": 50.0, "pos_pct": 25.0, "not_lowered_pct": 50.0,
           "mean_diff_pct": -50 / 3, "arr": 25.0},
    # p2: d1 -4, d2 0, d4 +1 -> down 1/3, up 1/3, not lowered 2/3; mean d = -1 of range 4 -> -25%;
    #     ARR: adversarial 1, 4, 4 on a scale whose bottom is 1 -> 1/3
    "p2": {"n": 3, "n_missing": 0, "neg_pct": 100 / 3, "pos_pct": 100 / 3, "not_lowered_pct": 200 / 3,
           "mean_diff_pct": -25.0, "arr": 100 / 3},
    # all: % of range: c1 -66.67, c2 +33.33, c3 0, c6 -33.33, d1 -100, d2 0, d4 +25 -> n 7, 1 missing;
    #      down 3/7, up 2/7, not lowered 4/7; mean (-200/3 + 100/3 - 100/3 - 100 + 25) / 7 = -425/21;
    #      ARR with each prompt's own bottom: c6 (0 on 0-3) and d1 (1 on 1-5) of 7 -> 2/7
    "all": {"n": 7, "n_missing": 1, "neg_pct": 300 / 7, "pos_pct": 200 / 7, "not_lowered_pct": 400 / 7,
            "mean_diff_pct": -425 / 21, "arr": 200 / 7},
}


def essay_text(word: str) -> str:
    return f"{word} walked along the river. The water was cold in spring. Birds sang near the old bridge."


def answer_text(word: str) -> str:
    return f"{word} pandas eat bamboo shoots"


def scoring_target(records: Sequence[tuple], text_of: Callable[[str], str]) -> Callable[[str], float]:
    """Scores the unmodified text with the record's original score, anything else with its adversarial one."""
    original = {text_of(word): orig for _, _, word, _, orig, _ in records}
    adversarial = {word: adv for _, _, word, _, _, adv in records}

    def score(text: str) -> float:
        if text in original:
            return float(fail_or(original[text]))
        [word] = [w for w in (t.strip(".,") for t in text.split()) if w in adversarial]
        return float(fail_or(adversarial[word]))

    return score


def scoring_rows(tmp_path: Path, task: str, records: Sequence[tuple], text_of: Callable[[str], str],
                 attack: str) -> list[dict]:
    data = write_jsonl(tmp_path / f"{task}.jsonl", [{"id": rid, "prompt_id": pid, "text": text_of(word),
                                                     "score": gold} for rid, pid, word, gold, _, _ in records])
    return run_engine(tmp_path, f"jsonl:{data}?task={task}", attack, scoring_target(records, text_of),
                      output="score")


def check_qwk_fields(rows: list[dict], attack: str, prompts: Sequence[str]) -> None:
    """Each attack row carries its prompt's clean qwk; the pooled row the mean over prompts, flagged."""
    clean = [find(rows, "clean", p)["qwk"] for p in prompts]
    for p, q in zip(prompts, clean):
        assert find(rows, attack, p)["qwk"] == pytest.approx(q)
    pooled = find(rows, attack, "all")
    assert pooled["qwk"] == pytest.approx(float(np.mean(clean))) and pooled["qwk_mean_over_prompts"] is True


def test_essay_rows_end_to_end(tmp_path: Path) -> None:
    rows = scoring_rows(tmp_path, "essay", ESSAYS, essay_text, ESSAY_ATTACK)
    assert all(r["task"] == "essay" for r in rows)
    assert json.loads(find(rows, ESSAY_ATTACK, "e1")["params"]) == {"min_sentences": 2}  # the defaults, spelled out
    check_qwk_fields(rows, ESSAY_ATTACK, ["e1", "e2"])
    for prompt, expected in ESSAY_EXPECTED.items():
        check_row(find(rows, ESSAY_ATTACK, prompt), expected)
    assert "arr" not in find(rows, ESSAY_ATTACK, "all")  # ARR is Ding et al.'s content-scoring metric
    # clean rows: valid original scores per prompt (F4's original failed)
    assert (find(rows, "clean", "e1")["n"], find(rows, "clean", "e2")["n"]) == (4, 3)


def test_content_rows_end_to_end(tmp_path: Path) -> None:
    rows = scoring_rows(tmp_path, "content", ANSWERS, answer_text, CONTENT_ATTACK)
    for prompt, expected in CONTENT_EXPECTED.items():
        check_row(find(rows, CONTENT_ATTACK, prompt), expected)
    assert [find(rows, "clean", p)["n"] for p in ("p1", "p2")] == [6, 4]
    check_qwk_fields(rows, CONTENT_ATTACK, ["p1", "p2"])


def _num(v: Any) -> float:
    return np.nan if v is None or v == FAIL else float(v)


def scoring_tables(records: Sequence[tuple], task: str, attack: str,
                   attacked: Callable[[tuple], bool]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The originals and examples tables as the engine writes them (one target, one chunk)."""
    orig, ex = [], []
    for rid, pid, _, gold, o, a in records:
        o_err = "RuntimeError: failed" if o == FAIL else None
        orig.append({"source_id": rid, "prompt_id": pid, "task": task, "gold": float(gold), "gold_answers": None,
                     "answer_type": "score", "target": TARGET, "score": _num(o), "answer": None, "candidates": None,
                     "error": o_err, "chunk": 0})
        if attacked((rid, pid, _, gold, o, a)):
            ex.append({"example_id": f"{rid}-x", "source_id": rid, "prompt_id": pid, "task": task, "attack": attack,
                       "params": "{}", "index": 0, "field": "text", "original_text": "o", "adversarial_text": "a",
                       "meta": "{}", "gold": float(gold), "gold_answers": None, "target": TARGET,
                       "orig_score": _num(o), "adv_score": _num(a), "orig_answer": None, "adv_answer": None,
                       "orig_candidates": None, "adv_candidates": None, "orig_error": o_err,
                       "adv_error": "RuntimeError: failed" if a == FAIL else None, "queries": 0, "chunk": 0})
    return pd.DataFrame(ex), pd.DataFrame(orig)


def prompts_of(task: str, scales: dict[str, tuple[int, int]]) -> dict[str, Prompt]:
    return {p: Prompt(id=p, task=task, score_min=lo, score_max=hi) for p, (lo, hi) in scales.items()}


@pytest.mark.parametrize(
    ("task", "records", "attack", "scales", "expected", "attacked"),
    [
        ("essay", ESSAYS, ESSAY_ATTACK, ESSAY_PROMPTS, ESSAY_EXPECTED, lambda r: True),
        ("content", ANSWERS, CONTENT_ATTACK, CONTENT_PROMPTS, CONTENT_EXPECTED, lambda r: r[5] is not None),
    ],
    ids=["essay", "content"],
)
def test_scoring_rows_from_tables(task: str, records: list, attack: str, scales: dict, expected: dict,
                                  attacked: Callable[[tuple], bool]) -> None:
    ex, orig = scoring_tables(records, task, attack, attacked)
    rows = compute_metrics(ex, orig, prompts_of(task, scales), task)
    for prompt, values in expected.items():
        check_row(find(rows, attack, prompt), values)
    assert {r["prompt"] for r in rows if r["attack"] == "clean"} == set(scales)  # no pooled clean row


def test_one_prompt_has_no_pooled_row_and_targets_stay_apart() -> None:
    # prompt p1 of the content data only, seen by two targets: "t" as above, "u" with every score swapped
    p1 = [r for r in ANSWERS if r[1] == "p1"]
    ex, orig = scoring_tables(p1, "content", CONTENT_ATTACK, lambda r: r[5] is not None)
    ex_u, orig_u = ex.assign(target="u"), orig.assign(target="u")
    ex_u[["orig_score", "adv_score"]] = ex[["adv_score", "orig_score"]].to_numpy()
    rows = compute_metrics(pd.concat([ex, ex_u]), pd.concat([orig, orig_u]), prompts_of("content", CONTENT_PROMPTS),
                           "content")
    assert not [r for r in rows if r["prompt"] == "all"]
    check_row(find(rows, CONTENT_ATTACK, "p1"), CONTENT_EXPECTED["p1"])
    [u] = [r for r in rows if r["target"] == "u" and r["attack"] == CONTENT_ATTACK]
    # swapped: c1 +2, c2 -1, c3 0, c6 +1 -> down 1/4, up 2/4, not lowered 3/4, mean +0.5 of 3;
    # ARR on the "adversarial" (former original) scores 3, 2, 3, 3 (c4's), 1: none at 0
    check_row(u, {"n": 4, "neg_pct": 25.0, "pos_pct": 50.0, "not_lowered_pct": 75.0, "mean_diff_pct": 50 / 3,
                  "arr": 0.0})


def test_rows_are_plain_json_with_none_for_undefined() -> None:
    # prompt q (0-3) with two answers, both attacked: gold 0 / 3, scored 0 / 3 (qwk 1.0 from two pairs),
    # every adversarial prediction failed: n 0 and every statistic undefined (None in metrics.json, not NaN);
    # the searches cost 0 and 1 queries -> queries_mean 0.5 (any query at all makes it a search row)
    records = [("a", "q", "x", 0, 0, FAIL), ("b", "q", "y", 3, 3, FAIL)]
    ex, orig = scoring_tables(records, "content", CONTENT_ATTACK, lambda r: True)
    ex["queries"] = [0, 1]
    rows = compute_metrics(ex, orig, prompts_of("content", {"q": (0, 3)}), "content")
    json.dumps(rows, allow_nan=False)
    row = find(rows, CONTENT_ATTACK, "q")
    assert row["n"] == 0 and type(row["n"]) is int and row["n_missing"] == 2
    assert row["neg_pct"] is None and row["not_lowered_pct"] is None and row["arr"] is None
    assert row["queries_mean"] == 0.5 and row["qwk"] == 1.0 == find(rows, "clean", "q")["qwk"]
    assert "queries_mean" not in find(scoring_rows_static(), CONTENT_ATTACK, "p1")  # static: no searching


def scoring_rows_static() -> list[dict]:
    ex, orig = scoring_tables(ANSWERS, "content", CONTENT_ATTACK, lambda r: r[5] is not None)
    return compute_metrics(ex, orig, prompts_of("content", CONTENT_PROMPTS), "content")


# =========================================================================================== reading
# Test-only attacks for the QA tasks (no built-in ones exist yet): two static versions per record, the
# target's answer to each is in the tables below. Kept tiny so they port to any attack API.


class _NoParams(AttackParams):
    pass


class _AddDistractors(StaticAttack):
    """Test-only: append one of two fixed distractor sentences to the paragraph (two examples per question)."""

    name = "TestAddDistractors"
    task = "reading"
    family = "test"
    paper = "test (Jia & Liang 2017 Sec. 3 shape: a sentence appended to the paragraph)"
    description = "test-only: append a fixed distractor sentence"
    expect: ClassVar[str] = "same-answer"
    record_type: ClassVar[type] = QAExample
    field: ClassVar[str] = "context"
    Params = _NoParams

    def generate(self, record: Record, rng: np.random.Generator, res: Resources, prompt: Prompt | None = None,
                 state: Any = None) -> list[Perturbed]:
        assert isinstance(record, QAExample)
        return [self.perturbed(record, f"{record.context} {DISTRACTORS[i]}", field="context", index=i)
                for i in range(2)]


class _Rephrase(StaticAttack):
    """Test-only: two fixed rewordings of the question (two examples per question)."""

    name = "TestRephrase"
    task = "questions"
    family = "test"
    paper = "test (DPAEG Sec. 3 shape: a reworded question)"
    description = "test-only: reword the question"
    expect: ClassVar[str] = "same-answer"
    record_type: ClassVar[type] = OpenQuestion
    field: ClassVar[str] = "question"
    Params = _NoParams

    def generate(self, record: Record, rng: np.random.Generator, res: Resources, prompt: Prompt | None = None,
                 state: Any = None) -> list[Perturbed]:
        assert isinstance(record, OpenQuestion)
        return [self.perturbed(record, REPHRASE[i].format(record.question), field="question", index=i)
                for i in range(2)]


@pytest.fixture
def qa_attacks(request: pytest.FixtureRequest) -> Iterator[None]:
    for cls in (_AddDistractors, _Rephrase):
        register(cls)
        request.addfinalizer(lambda key=cls.name.lower(): _REGISTRY.pop(key, None))
    yield


DISTRACTORS = ("Distractor one is here.", "Distractor two is here.")
CONTEXT = "Giant pandas live in the mountains of central China and eat bamboo."
# question: (gold answers, answer on the clean paragraph, with distractor 1, with distractor 2)
READING = {
    "Where do pandas live?": (["in China", "China"], "China", "China", "the mountains of China"),  # down
    "What do pandas eat?": (["bamboo"], "leaves", "bamboo shoots", "bamboo"),  # up (partly right first)
    "Who studied them?": (["The Smith team"], "Smith team", "Smith team.", "the Smith team"),  # unchanged
    "When did the study start?": (["in 1990"], "1990", FAIL, "1990"),  # one version failed
    "How many cubs were born?": (["three"], "three", FAIL, FAIL),  # every version failed
    "Which zoo?": (["Chengdu"], FAIL, "Chengdu", "Beijing"),  # original failed
}
READING_ATTACK = "TestAddDistractors"
READING_EXPECTED = {
    # originals (all attacked), SQuAD-normalised: "China" EM 1 F1 1; "leaves" 0 0; "Smith team" = "smith team"
    # EM 1; "1990" vs "in 1990" EM 0, F1 P 1 R 1/2 -> 2/3; "three" 1 1; Which zoo failed (n_missing 1)
    # -> em 3/5 = 60, f1 (1 + 0 + 1 + 2/3 + 1) / 5 = 11/15
    "em": 60.0, "f1": 220 / 3, "n": 5, "n_missing": 1,
    # worst case over the two versions of each question (Jia & Liang: failed if any version fools it):
    #   Where: "China" 1/1, "mountains of china" EM 0, F1 max(P 1/3 R 1 -> 1/2 vs "china";
    #          1/3, 1/2 -> 2/5 vs "in china") = 1/2 -> worst EM 0, F1 1/2
    #   What: "bamboo shoots" EM 0 F1 2/3, then "bamboo" 1/1 -> 0, 2/3 (the minima of EM and of F1 separately)
    #   Who: "smith team" both -> 1, 1
    #   When: one failed (ignored), "1990" -> 0, 2/3
    #   How many: both failed -> left out (n_missing_adv 1)
    #   Which zoo: "Chengdu" 1/1, "Beijing" 0/0 -> 0, 0 (the original's failure does not matter here)
    # -> n_adv 5, em_adv 1/5 = 20, f1_adv (1/2 + 2/3 + 1 + 2/3 + 0) / 5 = 17/30
    "em_adv": 20.0, "f1_adv": 170 / 3, "n_adv": 5, "n_missing_adv": 1,
    "queries_mean": 0.0,  # a static attack asks the target nothing while searching
}


def reading_answer(inp: Input) -> str:
    _, clean, first, second = READING[inp.text]
    assert inp.context is not None
    if inp.context.endswith(DISTRACTORS[0]):
        return fail_or(first)
    if inp.context.endswith(DISTRACTORS[1]):
        return fail_or(second)
    assert inp.context == CONTEXT
    return fail_or(clean)


def test_reading_rows_end_to_end(tmp_path: Path, qa_attacks: None) -> None:
    data = write_jsonl(tmp_path / "squad.jsonl", [
        {"id": f"q{i}", "question": q, "context": CONTEXT, "answers": golds}
        for i, (q, (golds, *_)) in enumerate(READING.items())])
    rows = run_engine(tmp_path, f"jsonl:{data}?task=reading", READING_ATTACK, reading_answer, pass_input=True,
                      output="answer")
    check_row(find(rows, READING_ATTACK, "all"), READING_EXPECTED)
    clean = {k: READING_EXPECTED[k] for k in ("em", "f1", "n", "n_missing")}  # every question was attacked
    check_row(find(rows, "clean", "all"), clean)


def reading_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    orig, ex = [], []
    for i, (golds, clean, *versions) in enumerate(READING.values()):
        gold_json = json.dumps(golds)
        o_err = "RuntimeError: failed" if clean == FAIL else None
        o_ans = None if clean == FAIL else clean
        orig.append({"source_id": f"q{i}", "prompt_id": None, "task": "reading", "gold": None,
                     "gold_answers": gold_json, "answer_type": "string", "target": TARGET, "score": None,
                     "answer": o_ans, "candidates": None, "error": o_err, "chunk": 0})
        for k, v in enumerate(versions):
            ex.append({"example_id": f"q{i}-{k}", "source_id": f"q{i}", "prompt_id": None, "task": "reading",
                       "attack": READING_ATTACK, "params": "{}", "index": k, "field": "context",
                       "original_text": CONTEXT, "adversarial_text": f"{CONTEXT} {DISTRACTORS[k]}", "meta": "{}",
                       "gold": None, "gold_answers": gold_json, "target": TARGET, "orig_score": None,
                       "adv_score": None, "orig_answer": o_ans, "adv_answer": None if v == FAIL else v,
                       "orig_candidates": None, "adv_candidates": None, "orig_error": o_err,
                       "adv_error": "RuntimeError: failed" if v == FAIL else None, "queries": 0, "chunk": 0})
    return pd.DataFrame(ex), pd.DataFrame(orig)


def test_reading_rows_from_tables() -> None:
    ex, orig = reading_tables()
    rows = compute_metrics(ex, orig, {}, "reading")
    check_row(find(rows, READING_ATTACK, "all"), READING_EXPECTED)
    # only the attacked questions count in the attack row's clean em/f1: drop the attack on "Who studied them?"
    # (q2) -> em over q0, q1, q3, q4 = 2/4, f1 (1 + 0 + 2/3 + 1) / 4 = 2/3;
    # worst case without q2 -> em_adv 0/4, f1_adv (1/2 + 2/3 + 2/3 + 0) / 4 = 11/24
    rows = compute_metrics(ex[ex["source_id"] != "q2"], orig, {}, "reading")
    check_row(find(rows, READING_ATTACK, "all"), {"em": 50.0, "f1": 200 / 3, "em_adv": 0.0, "f1_adv": 1100 / 24})
    check_row(find(rows, "clean", "all"), {"em": 60.0, "f1": 220 / 3})  # the clean row keeps every question


# =========================================================================================== questions

REPHRASE = ("Tell me: {}", "{} Answer briefly.")
CANDIDATES = [("Michelangelo", 0.6), ("Leonardo da Vinci", 0.4)]  # right answer ranked second
# question: (gold answers, answer to the question as asked, to rewording 1, to rewording 2)
QUESTIONS: dict[str, tuple[list[str], Any, Any, Any]] = {
    "Who wrote Hamlet?": (["Shakespeare"], "Shakespeare", "Marlowe", "shakespeare."),
    "What is the capital of France?": (["Paris"], "Paris", "Paris", "Paris."),
    "What is the largest planet?": (["Jupiter"], "Saturn", "Jupiter", "Mars"),  # source answered wrongly
    "Who painted the Mona Lisa?": (["Leonardo da Vinci", "da Vinci"], "da Vinci", FAIL, CANDIDATES),
    "What is the fastest land animal?": (["cheetah"], "the cheetah", "A cheetah.", "lion"),
    "How many legs does a spider have?": (["eight", "8"], FAIL, "8", "eight"),  # source failed
}
QUESTIONS_ATTACK = "TestRephrase"
QUESTIONS_EXPECTED = {
    # per adversarial question (DPAEG's unit), (source correct, adversarial correct):
    #   Hamlet (T, F) (T, T); France (T, T) (T, T); planet (F, T) (F, F): not an attack, excluded;
    #   Mona Lisa (T, failed): missing, (T, F: "Michelangelo" ranked first); cheetah (T, T) (T, F);
    #   spider: source failed, both missing
    # -> n 7, answered wrongly 3 (Marlowe, Michelangelo, lion): success rate 3/7
    "success_rate": 300 / 7, "n": 12,
    # ranking on the sources' answers (one per example; spider's 2 failed): 10 lists, 8 correct at rank 1
    "recall_at_1": 0.8, "mrr": 0.8,
    # on the adversarial answers: 11 lists (Mona Lisa 1 failed); correct at rank 1: Hamlet 1 ("shakespeare."),
    # France 2, planet 1, cheetah 1, spider 2 = 7; Mona Lisa 2 has the right answer at rank 2 (in the top 5;
    # reciprocal rank 1/2, AP 1/2) -> recall@1 7/11, recall@5 8/11, MRR = MAP = (7 + 1/2) / 11
    "recall_at_1_adv": 7 / 11, "recall_at_5_adv": 8 / 11, "recall_at_20_adv": 8 / 11, "mrr_adv": 7.5 / 11,
    "map_adv": 7.5 / 11, "queries_mean": 0.0,
}


def questions_answer(text: str) -> Any:
    for i, pattern in enumerate(REPHRASE):
        head, tail = pattern.split("{}")
        if text.startswith(head) and text.endswith(tail) and text[len(head):len(text) - len(tail)] in QUESTIONS:
            return fail_or(QUESTIONS[text[len(head):len(text) - len(tail)]][2 + i])
    return fail_or(QUESTIONS[text][1])


def test_questions_rows_end_to_end(tmp_path: Path, qa_attacks: None) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", [{"id": f"w{i}", "question": q, "answers": golds}
                                               for i, (q, (golds, *_)) in enumerate(QUESTIONS.items())])
    rows = run_engine(tmp_path, f"jsonl:{data}?task=questions", QUESTIONS_ATTACK, questions_answer,
                      output="answer")
    check_row(find(rows, QUESTIONS_ATTACK, "all"), QUESTIONS_EXPECTED)
    # clean row over the 6 questions: 5 answered (spider failed), 4 correct (planet wrong) -> recall@1 4/5
    check_row(find(rows, "clean", "all"), {"n": 6, "recall_at_1": 0.8, "mrr": 0.8})


def questions_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    def fields(v: Any) -> tuple[Any, Any, Any]:  # (answer, candidates JSON, error)
        if v == FAIL:
            return None, None, "RuntimeError: failed"
        if isinstance(v, list):
            return v[0][0], json.dumps([list(c) for c in v]), None
        return v, None, None

    orig, ex = [], []
    for i, (q, (golds, asked, *versions)) in enumerate(QUESTIONS.items()):
        gold_json = json.dumps(golds)
        oa, oc, oe = fields(asked)
        orig.append({"source_id": f"w{i}", "prompt_id": None, "task": "questions", "gold": None,
                     "gold_answers": gold_json, "answer_type": "string", "target": TARGET, "score": None,
                     "answer": oa, "candidates": oc, "error": oe, "chunk": 0})
        for k, v in enumerate(versions):
            aa, ac, ae = fields(v)
            ex.append({"example_id": f"w{i}-{k}", "source_id": f"w{i}", "prompt_id": None, "task": "questions",
                       "attack": QUESTIONS_ATTACK, "params": "{}", "index": k, "field": "question",
                       "original_text": q, "adversarial_text": REPHRASE[k].format(q), "meta": "{}", "gold": None,
                       "gold_answers": gold_json, "target": TARGET, "orig_score": None, "adv_score": None,
                       "orig_answer": oa, "adv_answer": aa, "orig_candidates": oc, "adv_candidates": ac,
                       "orig_error": oe, "adv_error": ae, "queries": 0, "chunk": 0})
    return pd.DataFrame(ex), pd.DataFrame(orig)


def test_questions_rows_use_each_question_answer_type() -> None:
    # a CuratedTREC-style regex gold "Wood" accepts "Elijah Wood" (a match anywhere); as a string it would not.
    # Source answered right, its rewording wrongly -> success 1/1; no prediction failed, so the ranking
    # fields are there: recall@1 on the sources 1.0, on the rewordings 0.0
    gold = json.dumps(["Wood"])
    orig = pd.DataFrame([{"source_id": "r", "prompt_id": None, "task": "questions", "gold": None,
                          "gold_answers": gold, "answer_type": "regex", "target": TARGET, "score": None,
                          "answer": "Elijah Wood", "candidates": None, "error": None, "chunk": 0}])
    ex = pd.DataFrame([{"example_id": "r-0", "source_id": "r", "prompt_id": None, "task": "questions",
                        "attack": QUESTIONS_ATTACK, "params": "{}", "index": 0, "field": "question",
                        "original_text": "Who played Frodo?", "adversarial_text": "Tell me: Who played Frodo?",
                        "meta": "{}", "gold": None, "gold_answers": gold, "target": TARGET, "orig_score": None,
                        "adv_score": None, "orig_answer": "Elijah Wood", "adv_answer": "Sean Astin",
                        "orig_candidates": None, "adv_candidates": None, "orig_error": None, "adv_error": None,
                        "queries": 0, "chunk": 0}])
    rows = compute_metrics(ex, orig, {}, "questions")
    check_row(find(rows, QUESTIONS_ATTACK, "all"), {"success_rate": 100.0, "recall_at_1": 1.0, "mrr": 1.0,
                                                     "recall_at_1_adv": 0.0, "recall_at_20_adv": 0.0})
    check_row(find(rows, "clean", "all"), {"recall_at_1": 1.0, "n": 1})


def test_questions_rows_from_tables() -> None:
    ex, orig = questions_tables()
    rows = compute_metrics(ex, orig, {}, "questions")
    check_row(find(rows, QUESTIONS_ATTACK, "all"), QUESTIONS_EXPECTED)
    # swap what the bot said to the source and to the rewording: (source, adversarial) pairs become
    # Hamlet (F, T) excl, (T, T); France (T, T) x2; planet (T, F) success, (F, F) excl; Mona Lisa (None, T)
    # missing, (F, T) excl; cheetah (T, T), (F, T) excl; spider missing x2 -> n 5, 1 success -> 20%
    swapped = ex.copy()
    for a, b in (("orig_answer", "adv_answer"), ("orig_candidates", "adv_candidates"), ("orig_error", "adv_error")):
        swapped[[a, b]] = ex[[b, a]].to_numpy()
    rows = compute_metrics(swapped, orig, {}, "questions")
    check_row(find(rows, QUESTIONS_ATTACK, "all"), {"success_rate": 20.0})
