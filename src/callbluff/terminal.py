"""Progress and short summaries for long CLI commands (rich), on stderr so stdout stays for tables and data.

:class:`RunProgress` turns the engine's ``progress(stage, done, total)`` callbacks into rich bars with counts
and an ETA. The engine reports record chunks without a total (it streams); the total is counted from the
dataset on a background thread (or taken from ``--limit``) and set on the bar when known, so the run never
waits for the count. :func:`elapsed` shows a spinner with the elapsed time for steps that report nothing
(``callbluff train``: the models have no progress hook). When stderr is not a terminal (CI logs) rich prints
nothing live; the final summary lines still appear.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def _progress(console: Console) -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=console, transient=False)


class RunProgress:
    """Bars for a run: records (chunks x chunk size, capped at the record count) and generator answers."""

    def __init__(self, console: Console, chunk_size: int, count_records: Callable[[], int] | None,
                 limit: int | None = None) -> None:
        self.console = console
        self.chunk_size = chunk_size
        self.progress = _progress(console)
        self.total: int | None = limit
        self.tasks: dict[str, TaskID] = {}
        self._count = count_records if limit is None else None

    def __enter__(self) -> RunProgress:
        self.progress.start()
        self.tasks["records"] = self.progress.add_task("records", total=self.total)
        if self._count is not None:
            threading.Thread(target=self._set_total, daemon=True, name="callbluff-count").start()
        return self

    def _set_total(self) -> None:
        try:
            n = self._count() if self._count else None
        except Exception:  # noqa: BLE001 - the bar stays without a total; the run itself reports any data error
            return
        if n is not None:
            self.total = n if self.total is None else min(self.total, n)
            self.progress.update(self.tasks["records"], total=self.total)

    def __exit__(self, *exc: Any) -> None:
        for task in self.progress.tasks:  # bars without a total end as complete, not pulsing
            if task.total is None:
                self.progress.update(task.id, total=task.completed)
        self.progress.stop()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if stage == "chunk":
            n = done * self.chunk_size
            self.progress.update(self.tasks["records"], completed=min(n, self.total) if self.total else n)
        elif stage == "generator chunk":
            if "generators" not in self.tasks:
                self.tasks["generators"] = self.progress.add_task("generator pieces", total=total)
            self.progress.update(self.tasks["generators"], completed=done, total=total)
        elif stage == "fit":
            if "fit" not in self.tasks:
                self.tasks["fit"] = self.progress.add_task("fitted (attack, prompt)", total=None)
            self.progress.update(self.tasks["fit"], completed=done)


def chunks_for(n_records: int, chunk_size: int) -> int:
    return math.ceil(n_records / chunk_size) if n_records else 0


@contextmanager
def counted(console: Console, description: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """A bar for a loop that knows its count (e.g. ``callbluff generate``): yields ``advance(n)``."""
    progress = _progress(console)
    task = progress.add_task(description, total=total)
    with progress:
        yield lambda n: progress.update(task, advance=n)


@contextmanager
def elapsed(console: Console, description: str) -> Iterator[None]:
    """A spinner with the elapsed time, for a step that reports no progress of its own."""
    progress = Progress(SpinnerColumn(), TextColumn(description), TimeElapsedColumn(), console=console,
                        transient=True)
    progress.add_task(description, total=None)
    with progress:
        yield


def training_summary(kind: str, out_dir: str, summary: Mapping[str, Any]) -> list[str]:
    """A few lines instead of the whole model.json: time, prompts, and the clean figures per prompt/split."""
    lines = [f"trained {kind} in {summary.get('train_seconds', '?')} s -> {out_dir} (details in "
             f"{out_dir}/model.json)"]
    metrics = summary.get("metrics") or {}
    if isinstance(metrics, Mapping):
        for key, value in list(metrics.items())[:12]:
            if isinstance(value, Mapping):
                figures = ", ".join(f"{k} {_short(v)}" for k, v in value.items()
                                    if isinstance(v, int | float) and not isinstance(v, bool))
                lines.append(f"  {key}: {figures}")
            elif isinstance(value, int | float):
                lines.append(f"  {key}: {_short(value)}")
        if len(metrics) > 12:
            lines.append(f"  ... and {len(metrics) - 12} more in model.json")
    return lines


def _short(v: float) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
