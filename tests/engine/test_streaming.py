"""Streaming metrics (issue 15): rows from sufficient statistics fed chunk by chunk equal the pure metric
functions on all rows at once; metrics streamed from a run's parts equal :func:`compute_metrics` on the merged
tables; the merged Parquet files are streamed part by part."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from callbluff.attacks.base import get_attack
from callbluff.engine.metrics_rows import accumulated_metrics, verdict_tallies
from callbluff.engine.verdicts import Judge

from callbluff import metrics as M
from callbluff.engine.metrics_rows import compute_metrics, stream_metrics
from callbluff.engine.store import RunDir
from callbluff.metrics.scoring import DiffStats
from callbluff.metrics.streaming import Clean, ScoringAccumulator
from callbluff.metrics.scoring import round_half_up
from callbluff.records import Prompt


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pieces", [1, 3, 17])
def test_diff_stats_in_pieces_equal_overstability(seed: int, pieces: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    o = rng.integers(0, 4, n).astype(float)
    a = np.clip(o + rng.integers(-2, 3, n) * rng.random(n).round(1), 0, 3)
    o[rng.random(n) < 0.1] = np.nan  # failed predictions are left out and counted
    a[rng.random(n) < 0.1] = np.nan
    stats = DiffStats()
    for part in np.array_split(np.arange(n), pieces):
        stats.update(o[part], a[part])
    got, want = stats.result(0, 3), M.overstability(o, a, 0, 3)
    assert got.keys() == want.keys()
    for k in want:
        assert close(float(got[k]), float(want[k])), (k, got[k], want[k])


@pytest.mark.parametrize(("o", "a", "p"), [([1, 2, 3], [1, 2, 3], 1.0),  # nothing moved: p = 1
                                           ([1, 2, 3], [2, 3, 4], 0.0),  # same shift everywhere: p = 0
                                           ([1], [2], math.nan)])        # one pair: undefined
def test_diff_stats_t_test_conventions(o: list, a: list, p: float) -> None:
    stats = DiffStats()
    for i in range(len(o)):  # one pair at a time: min/max carry the "all equal" case across pieces
        stats.update(np.array(o[i:i + 1], float), np.array(a[i:i + 1], float))
    got = stats.result(0, 4)["ttest_p"]
    assert close(got, p) and close(got, M.overstability(o, a, 0, 4)["ttest_p"])


@pytest.mark.parametrize("seed", range(8))
def test_qwk_from_confusion_counts_equals_qwk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 200))
    gold = rng.integers(0, 4, n).astype(float)
    pred = gold + rng.normal(0, 1.2, n)  # off-scale predictions are clipped, as by metrics.qwk
    clean = Clean()
    for g, p in zip(round_half_up(gold), round_half_up(pred)):
        clean.pairs[(g, p)] = clean.pairs.get((g, p), 0) + 1
    prompt = Prompt(id="p", task="content", score_min=0, score_max=3)
    assert clean.qwk(prompt) == M.qwk(gold, pred, score_min=0, score_max=3)


def test_qwk_counts_conventions_and_errors() -> None:
    prompt = Prompt(id="p", task="content", score_min=0, score_max=3)
    assert Clean(pairs={(2.0, 2.0): 5}).qwk(prompt) == 1.0  # two constant raters agreeing
    assert math.isnan(Clean(pairs={(2.0, 2.0): 1}).qwk(prompt))  # fewer than two pairs
    with pytest.raises(ValueError, match="gold score 7 of prompt p is outside the scale 0..3"):
        Clean(pairs={(7.0, 2.0): 1, (1.0, 1.0): 1}).qwk(prompt)


def scoring_tables(seed: int, n: int = 240) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Prompt]]:
    """Two prompts on different scales, two targets, two attack configurations, failures on both sides."""
    rng = np.random.default_rng(seed)
    prompts = {"p1": Prompt(id="p1", task="content", score_min=0, score_max=3),
               "p2": Prompt(id="p2", task="content", score_min=0, score_max=2)}
    orig, ex = [], []
    for t in ("t1", "t2"):
        for i in range(n):
            pid = "p1" if i % 3 else "p2"
            hi = prompts[pid].score_max
            gold = float(rng.integers(0, hi + 1))
            score = None if rng.random() < 0.05 else float(np.clip(gold + rng.normal(0, 0.8), 0, hi))
            chunk = i // 50
            orig.append({"source_id": f"r{i}", "prompt_id": pid, "target": t, "gold": gold, "score": score,
                         "error": "E" if score is None else None, "chunk": chunk})
            for attack, params in (("Shuffle", "{}"), ("Shuffle", '{"k":1}'), ("DelRand", "{}")):
                adv = None if rng.random() < 0.05 else float(rng.integers(0, hi + 1))
                ex.append({"example_id": f"r{i}-{attack}{params}", "source_id": f"r{i}", "prompt_id": pid,
                           "target": t, "attack": attack, "params": params, "orig_score": score, "adv_score": adv,
                           "orig_error": "E" if score is None else None, "adv_error": "E" if adv is None else None,
                           "queries": int(rng.integers(0, 3)) if attack == "DelRand" else 0, "chunk": chunk})
    return pd.DataFrame(ex), pd.DataFrame(orig), prompts


def rows_close(got: list[dict], want: list[dict]) -> None:
    assert [(r["target"], r["attack"], r["params"], r["prompt"]) for r in got] == \
        [(r["target"], r["attack"], r["params"], r["prompt"]) for r in want]
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        for k, v in w.items():
            if isinstance(v, float):
                assert close(g[k], v), (w["attack"], w["prompt"], k)
            else:
                assert g[k] == v, (w["attack"], w["prompt"], k)


@pytest.mark.parametrize("seed", range(3))
def test_accumulator_fed_by_chunk_equals_one_pass(seed: int) -> None:
    ex, orig, prompts = scoring_tables(seed)
    whole = compute_metrics(ex, orig, prompts, "content")
    acc = ScoringAccumulator(prompts, "content", pair_arr=True)
    expect = {a: get_attack(a).expect for a in set(ex["attack"])}
    judge, tallies = Judge("content", expect, prompts), verdict_tallies("content", expect)
    for _, o in orig.groupby("chunk"):
        acc.add_originals(o)
    for _, x in ex.groupby("chunk"):
        acc.add_examples(x)
        tallies.add(x.assign(verdict=judge.frame(x)))  # the verdicts streamed chunk by chunk too

    rows_close(accumulated_metrics(acc, {"t1", "t2"}, (), expect, tallies), whole)
    # and the pure per-prompt numbers really are the metric functions' on all rows at once
    g = ex[(ex["target"] == "t1") & (ex["attack"] == "DelRand") & (ex["prompt_id"] == "p1")]
    row = next(r for r in whole if (r["target"], r["attack"], r["prompt"]) == ("t1", "DelRand", "p1"))
    want = M.overstability(g["orig_score"].to_numpy(float), g["adv_score"].to_numpy(float), 0, 3)
    assert close(row["mean_diff_pct"], want["mean_diff_pct"]) and row["n"] == want["n"]
    assert close(row["arr"], M.arr(g["adv_score"].to_numpy(float), 0))
    assert close(row["queries_mean"], g["queries"].mean())


def test_stream_from_parts_equals_merged_tables(tmp_path: Path) -> None:
    from callbluff.engine.store import EXAMPLE_COLUMNS, ORIGINAL_COLUMNS

    ex, orig, prompts = scoring_tables(11)
    run = RunDir(tmp_path / "run")
    run.create()
    for chunk in sorted(orig["chunk"].unique()):
        o = orig[orig["chunk"] == chunk].reindex(columns=ORIGINAL_COLUMNS).astype(object)
        x = ex[ex["chunk"] == chunk].reindex(columns=EXAMPLE_COLUMNS).astype(object)
        run.write_chunk(int(chunk), o.where(o.notna(), None).to_dict("records"),
                        x.where(x.notna(), None).to_dict("records"), {})
    assert run.write_merged("examples", run.examples) == len(ex)
    merged = pq.ParquetFile(run.examples)
    assert merged.metadata.num_row_groups == orig["chunk"].nunique()  # one part at a time, in chunk order
    table = merged.read().to_pandas()
    assert list(table["example_id"]) == list(ex.sort_values("chunk", kind="stable")["example_id"])
    streamed = stream_metrics(run, prompts, "content")
    rows_close(streamed, compute_metrics(table, run.merge("originals").to_pandas(), prompts, "content"))
    assert any(r["prompt"] == "all" for r in streamed) and {r["target"] for r in streamed} == {"t1", "t2"}


def test_stream_metrics_of_an_empty_run(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    run.create()
    assert stream_metrics(run, {}, "content") == [] == stream_metrics(run, {}, "reading")
    assert run.write_merged("originals", run.originals) == 0 and pq.read_table(run.originals).num_rows == 0


def test_overstability_agrees_with_numpy_and_scipy_directly() -> None:
    """The one implementation (DiffStats) against the statistics computed independently, on random pairs."""
    from scipy import stats as sst

    rng = np.random.default_rng(11)
    o = rng.integers(0, 4, 300).astype(float)
    a = np.clip(o + rng.normal(-0.3, 0.8, 300).round(), 0, 3)
    got = M.overstability(o, a, 0, 3)
    d = a - o
    assert got["n"] == 300 and got["neg_pct"] == pytest.approx(100 * np.mean(d < -1e-9))
    assert got["mean_diff_pct"] == pytest.approx(100 * d.mean() / 3, abs=1e-12)
    assert got["std_diff_pct"] == pytest.approx(100 * d.std() / 3, abs=1e-12)
    assert got["mean_neg_diff_pct"] == pytest.approx(100 * d[d < 0].mean() / 3, abs=1e-12)
    assert got["ttest_p"] == pytest.approx(float(sst.ttest_rel(a, o).pvalue), rel=1e-9)


def test_diffstats_merge_equals_one_pass() -> None:
    rng = np.random.default_rng(5)
    o, a = rng.normal(size=200), rng.normal(size=200)
    a[::13] = np.nan
    left, right, whole = DiffStats(), DiffStats(), DiffStats()
    left.update(o[:70], a[:70])
    right.update(o[70:], a[70:])
    whole.update(o, a)
    left.merge(right)
    for k, v in whole.result(-3, 3).items():
        assert left.result(-3, 3)[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
