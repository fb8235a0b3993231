"""``limit`` takes records across the prompts (ASAP files are sorted by prompt: the first N rows were all one
prompt's), says what it took per prompt, and reads the same records for the fit step and the chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.engine.limit import Limited, shares
from callbluff.records import ScoredResponse


def _answers(path: Path, per_prompt: dict[str, int]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for pid, n in per_prompt.items():  # sorted by prompt, as the ASAP files are
            for i in range(n):
                fh.write(json.dumps({"id": f"{pid}-{i}", "prompt_id": pid, "score": i % 3,
                                     "text": f"answer {i} to prompt {pid}: heat moves by conduction"}) + "\n")
    return path


def test_shares_are_as_even_as_the_prompts_allow() -> None:
    assert shares({"1": 500, "2": 500}, 300) == {"1": 150, "2": 150}
    assert shares({"1": 500, "2": 20, "10": 500}, 300) == {"1": 140, "2": 20, "10": 140}  # 2 gives its rest
    assert shares({"1": 5, "2": 5}, 300) == {"1": 5, "2": 5}
    assert shares({"2": 10, "10": 10, "1": 10}, 4) == {"1": 2, "2": 1, "10": 1}  # the remainder: natural order


def test_limited_view_is_in_file_order_and_re_iterable() -> None:
    recs = [ScoredResponse(f"{p}-{i}", p, "x", (0.0,)) for p in ("1", "2") for i in range(4)]
    view = Limited(recs, 4)
    first = [r.id for r in view]
    assert first == ["1-0", "1-1", "2-0", "2-1"] and [r.id for r in view] == first
    assert view.describe() == "--limit took 4 records across the prompts: 2 of prompt 1, 2 of prompt 2"


def test_a_run_with_limit_attacks_both_prompts_and_says_so(tmp_path: Path) -> None:
    data = _answers(tmp_path / "answers.jsonl", {"1": 30, "2": 30})
    suite = tmp_path / "suite.toml"
    suite.write_text(f'''name = "limit"
seed = 1
limit = 20
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=2"
[[target]]
name = "len"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[output]
report = false
''')
    res = CliRunner().invoke(app, ["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "10 of prompt 1, 10 of prompt 2" in res.output
    orig = pd.read_parquet(tmp_path / "run" / "originals.parquet")
    assert orig.groupby("prompt_id")["source_id"].nunique().to_dict() == {"1": 10, "2": 10}
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert any("10 of prompt 1, 10 of prompt 2" in n for n in meta["notes"])


@pytest.mark.parametrize("limit", [7, 1])
def test_the_fit_step_reads_the_limited_records(limit: int) -> None:
    from callbluff.engine.generate import AttackSpec, generate

    recs = [ScoredResponse(f"{p}-{i}", p, f"the heat {i} moves along the spoon", (2.0,)) for p in ("1", "2")
            for i in range(6)]
    from callbluff.records import Prompt

    prompts = {p: Prompt(p, "content", score_min=0, score_max=2) for p in ("1", "2")}
    chunks = list(generate([AttackSpec.make("Shuffle", {"tokenizer": "whitespace"})], recs, prompts, seed=0,
                           limit=limit))
    seen = [r.id for c in chunks for r in c.records]
    assert len(seen) == limit and {s.split("-")[0] for s in seen} == ({"1", "2"} if limit > 1 else {"1"})


def test_the_limit_note_fits_a_line_with_many_prompts() -> None:
    """Issue 40, item 10: a --limit over many prompts names the prompts it took from (at most eight), not every
    prompt with "0 of prompt ..."."""
    from callbluff.engine.limit import DESCRIBE_PROMPTS, Limited

    view = Limited([], 20)
    view.total = 20
    view.per_prompt = {str(p): (4 if p <= 5 else 0) for p in range(1, 81)}
    text = view.describe()
    assert text == ("--limit took 20 records across the prompts: 4 of prompt 1, 4 of prompt 2, 4 of prompt 3, "
                    "4 of prompt 4, 4 of prompt 5 (none of the other 75 prompts)")
    view.per_prompt = {str(p): 1 for p in range(1, 21)}
    assert view.describe().endswith(f"and {20 - DESCRIBE_PROMPTS} more prompts") and "0 of" not in view.describe()


def test_notes_count_chunks_without_internal_numbers() -> None:
    from callbluff.engine.chunk_id import ChunkId
    from callbluff.engine.resume import chunk_count

    pieces = [ChunkId.records(0), ChunkId.generator(0), ChunkId.generator(1)]
    assert chunk_count(pieces) == "1 record chunk and 2 generator pieces"
    assert chunk_count([ChunkId.records(3)]) == "chunk 3"
    assert chunk_count([ChunkId.generator(2)]) == "generator piece 2"
