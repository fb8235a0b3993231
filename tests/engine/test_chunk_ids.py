"""Record chunks and generator pieces in their own id spaces (engine/chunk_id.py), and run directories written
when generator pieces were numbered among the record chunks from 900,000: they still resume, nothing asked
again, the same metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from callbluff.engine.chunk_id import LEGACY_GENERATOR0, ChunkId, legacy_generator_stem
from callbluff.engine.run import run_suite
from callbluff.engine.store import RunDir
from callbluff.engine.suite import load_suite

from helpers.data import write_answers

SUITE = """
name = "chunk-ids"
seed = 3
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "kw"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[[attack]]
name = "RandomChars"
params = {{ count = 9 }}
[output]
chunk_size = 4
report = false
"""


def test_chunk_ids_name_their_parts_and_sort_records_first() -> None:
    assert ChunkId.records(7).stem == "000007" and ChunkId.generator(3).stem == "g000003"
    assert ChunkId.parse("000007") == ChunkId.records(7) and ChunkId.parse("g000003") == ChunkId.generator(3)
    assert ChunkId.parse("notes") is None and ChunkId.of(5) == ChunkId.records(5)
    ids = [ChunkId.generator(0), ChunkId.records(10), ChunkId.records(2)]
    assert sorted(ids, key=ChunkId.sort_key) == [ChunkId.records(2), ChunkId.records(10), ChunkId.generator(0)]
    assert legacy_generator_stem(f"{LEGACY_GENERATOR0 + 4}") == ChunkId.generator(4)
    assert legacy_generator_stem("000004") is None and legacy_generator_stem("g000004") is None


def _metrics(run: Path) -> list[dict[str, object]]:
    return json.loads((run / "metrics.json").read_text())


def test_a_run_directory_of_the_shared_numbering_resumes_without_asking_again(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=24)
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(SUITE.format(data=data))
    run = tmp_path / "run"
    first = run_suite(load_suite(suite_file), run)
    parts = run / "parts"
    pieces = sorted(p.name for p in parts.glob("g*.examples.parquet"))
    assert pieces == ["g000000.examples.parquet", "g000001.examples.parquet", "g000002.examples.parquet",
                      "g000003.examples.parquet", "g000004.examples.parquet", "g000005.examples.parquet"]
    records = sorted(p.name for p in parts.glob("0*.examples.parquet"))
    assert records == [f"{n:06d}.examples.parquet" for n in range(6)]  # 24 records, 4 a chunk
    # the directory as the earlier versions wrote it: generator pieces numbered from 900,000 among the chunks
    for p in parts.glob("g*"):
        stem, _, rest = p.name.partition(".")
        p.rename(parts / f"{LEGACY_GENERATOR0 + int(stem[1:])}.{rest}")
    for name in ("examples.parquet", "originals.parquet", "metrics.json", "errors.jsonl"):
        (run / name).unlink()
    assert not list(parts.glob("g*")) and (parts / "900005.examples.parquet").exists()

    again = run_suite(load_suite(suite_file), run)
    meta = json.loads((run / "run.json").read_text())
    assert meta["chunks_resumed"] == 12 and meta["chunks_retried"] == 0  # every chunk and piece skipped
    assert again.predictions["kw"]["asked"] == 0
    assert sorted(p.name for p in parts.glob("g*.examples.parquet")) == pieces and not list(parts.glob("9*"))
    assert [c for c in RunDir(run).done_chunks() if c.is_generator] == [ChunkId.generator(n) for n in range(6)]
    assert _metrics(run) == first.metrics
    generated = pd.read_parquet(run / "examples.parquet")
    assert (generated["source_id"].str.startswith("prompt:")).sum() == 18  # 9 answers x 2 prompts
