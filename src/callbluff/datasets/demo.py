"""``demo:NAME[?split=train|test]``: the original data that ships with callbluff (see ``callbluff/data``).

Names: ``content`` (two short-answer prompts, demo-1 on a 0-2 scale and demo-2 on 0-3), ``essay`` (one
essay prompt on 1-6), ``squad`` (a SQuAD v1.1-format reading set; ``?task=questions`` reads its questions as
open questions, for the Q&A-bot suite). Prompts and their scales come from
``demo_prompts.json``, so each prompt keeps its own scale. Used by ``callbluff demo`` and by users trying
callbluff before pointing it at their own data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from callbluff.datasets._io import build_dataset
from callbluff.datasets.base import Dataset, DataError, load, register_loader
from callbluff.records import Prompt, Record, ScoredResponse

FILES = {"content": "demo_content.jsonl", "essay": "demo_essays.jsonl", "squad": "demo_squad.json"}
SPLITS = ("train", "test", "all")


def data_path(name: str) -> Path:
    """Filesystem path of a packaged data file."""
    return Path(str(resources.files("callbluff") / "data" / name))


def demo_prompts() -> dict[str, Prompt]:
    rows = json.loads(data_path("demo_prompts.json").read_text(encoding="utf-8"))
    return {r["id"]: Prompt(id=r["id"], task=r["task"], text=r["text"], source=r.get("source"),
                            score_min=float(r["score_min"]), score_max=float(r["score_max"]),
                            meta={"rubric": r.get("rubric", "")}) for r in rows}


@register_loader("demo")
def load_demo(name: str, split: str = "all", **options: Any) -> Dataset:
    if name not in FILES:
        raise DataError(f"demo:{name}: unknown demo dataset; available: {', '.join('demo:' + n for n in FILES)}")
    if split not in SPLITS:
        raise DataError(f"demo:{name}: split={split!r} is not one of {', '.join(SPLITS)}")
    task = options.pop("task", None) if name == "squad" else None
    if options:
        allowed = "split, task" if name == "squad" else "split"
        raise DataError(f"demo:{name}: unknown option(s) {', '.join(sorted(options))}; allowed: {allowed}")
    if name == "squad":
        return load(f"squad:{data_path(FILES[name])}" + (f"?task={task}" if task else ""))
    task = name  # demo:essay and demo:content are named after their tasks
    by_task: dict[str, dict[str, Prompt]] = {}
    for k, p in demo_prompts().items():
        by_task.setdefault(p.task, {})[k] = p
    prompts = by_task.get(task, {})
    path = data_path(FILES[name])

    def records() -> Iterator[Record]:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if split != "all" and row["split"] != split:
                continue
            yield ScoredResponse(id=row["id"], prompt_id=row["prompt_id"], text=row["text"],
                                 scores=(float(row["score"]),), meta={"split": row["split"]})

    return build_dataset(f"demo:{name}?split={split}", task, prompts, records)
