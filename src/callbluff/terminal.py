"""Progress and short summaries for long commands (rich), on stderr so stdout stays for tables and data.

:class:`RunProgress` turns the engine's ``progress(stage, done, total)`` callbacks (:mod:`callbluff.progress`)
into rich bars with counts and an ETA. The engine reports record chunks without a total (it streams); the
total is counted from the dataset on a background thread (or taken from ``--limit``) and set on the bar when
known, so the run never waits for the count. :class:`StageProgress` shows any other hook's stages
(``callbluff train``: prompts, then each prompt's steps; the findings scripts: their outer loops): rich bars
on a terminal, and timestamped plain lines with counts and an ETA when the output is a log file.
:func:`elapsed` shows a spinner with the elapsed time for steps that report nothing. When stderr is not a
terminal (CI logs, ``2> log``) :class:`RunProgress` prints timestamped lines as the run goes, as
:class:`StageProgress` does: each stage's first and last report and at most one line per
``$CALLBLUFF_PROGRESS_INTERVAL`` seconds (default 30) in between, each with counts, elapsed time and an ETA.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
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
    # markup off: a stage's description may hold user text (attack, prompt or target names), shown verbatim
    return Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                    TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=console, transient=False)


DEFAULT_INTERVAL = 30.0
"""Seconds between two progress lines of one stage in a log (``$CALLBLUFF_PROGRESS_INTERVAL`` overrides)."""


def progress_interval() -> float:
    """``$CALLBLUFF_PROGRESS_INTERVAL`` (seconds, >= 0) or :data:`DEFAULT_INTERVAL`."""
    try:
        return max(0.0, float(os.environ.get("CALLBLUFF_PROGRESS_INTERVAL", DEFAULT_INTERVAL)))
    except ValueError:
        return DEFAULT_INTERVAL


START_LINE_AFTER = 2.0
"""Seconds into a run (in a log) before its first line, ``records: 0/N``: a run that stops at once on a wrong path
or setting prints its error alone."""


class RunProgress:
    """Bars for a run: records (chunks x chunk size, capped at the record count) and generator answers; when
    ``plain`` (default: the console is not a terminal, e.g. a CI log) timestamped lines instead
    (:class:`StageProgress`'s plain form), so a log shows the run going, not only its end."""

    def __init__(self, console: Console, chunk_size: int, count_records: Callable[[], int] | None,
                 limit: int | None = None, *, plain: bool | None = None, interval: float | None = None) -> None:
        self.console = console
        self.chunk_size = chunk_size
        self.plain = (not console.is_terminal) if plain is None else plain
        self.lines = StageProgress(console, plain=True, interval=progress_interval() if interval is None
                                   else interval) if self.plain else None
        self.progress = _progress(console)
        self.total: int | None = limit
        self.tasks: dict[str, TaskID] = {}
        self._count = count_records if limit is None else None
        self._records = 0
        self._start_line: threading.Timer | None = None
        self._done = threading.Event()

    def __enter__(self) -> RunProgress:
        if self.lines is None:
            self.progress.start()
            self.tasks["records"] = self.progress.add_task("records", total=self.total)
        if self._count is not None:
            threading.Thread(target=self._set_total, daemon=True, name="callbluff-count").start()
        if self.lines is not None:  # the first line once the run is under way (an early error prints none)
            self._start_line = threading.Timer(START_LINE_AFTER, self._first_line)
            self._start_line.daemon = True
            self._start_line.start()
            threading.Thread(target=self._heartbeat, daemon=True, name="callbluff-progress").start()
        return self

    def _heartbeat(self) -> None:
        """In a log: while a chunk is being worked on (a chunk can take minutes), one line per interval saying the
        run is still going, with its counts and elapsed time, so a CI log never sits silent."""
        assert self.lines is not None
        interval = max(self.lines.interval, 0.05)
        while not self._done.wait(interval):
            if "records" in self.lines.seen:
                self.lines.still("records")

    def _first_line(self) -> None:
        if self.lines is not None and "records" not in self.lines.seen:
            self.lines("records", 0, self.total)

    def _set_total(self) -> None:
        try:
            n = self._count() if self._count else None
        except Exception:  # noqa: BLE001 - the bar stays without a total; the run itself reports any data error
            return
        if n is not None:
            self.total = n if self.total is None else min(self.total, n)
            if self.lines is None:
                self.progress.update(self.tasks["records"], total=self.total)

    def __exit__(self, *exc: Any) -> None:
        if self.lines is not None:
            self._done.set()
            if self._start_line is not None:
                self._start_line.cancel()
            return
        if exc and exc[0] is not None and not self._records:  # stopped before any record: no "records 0/300" line
            self.progress.live.transient = True
        for bar in self.progress.tasks:  # bars without a total end as complete, not pulsing
            if bar.total is None:
                self.progress.update(bar.id, total=bar.completed)
        self.progress.stop()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if stage == "chunk":
            self._records = n = min(done * self.chunk_size, self.total) if self.total else done * self.chunk_size
        if self.lines is not None:
            label = {"chunk": "records", "generator chunk": "generator pieces", "fit": "fitted (attack, prompt)"}
            self._first_line()
            if stage == "chunk":
                self.lines("records", n, self.total)
            elif stage in label:
                self.lines(label[stage], done, total)
            return
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


class StageProgress:
    """Shows a ``progress(stage, done, total)`` hook (:mod:`callbluff.progress`) with counts and an ETA.

    ``overall`` stages (by default ``prompts``) get a bar of their own that stays; every other stage shares one
    "current step" bar, reset (count, total, clock, ETA) when the stage changes, so a ten-prompt training
    shows two lines, not thirty. ``plain`` (default: when the console is not a terminal, e.g. ``> log``)
    prints timestamped lines instead: a stage's first report, its last (``done == total``), and in between
    at most one line per ``interval`` seconds, each with ``done/total``, the elapsed time and the ETA
    (remaining items at the stage's mean rate so far). ``seen`` keeps every stage's last (done, total).
    """

    def __init__(self, console: Console, *, overall: Iterable[str] = ("prompts",), plain: bool | None = None,
                 interval: float = 30.0) -> None:
        self.console = console
        self.overall = set(overall)
        self.plain = (not console.is_terminal) if plain is None else plain
        self.interval = interval
        self.progress = _progress(console)
        self.tasks: dict[str, TaskID] = {}
        self.current: str | None = None
        self.seen: dict[str, tuple[int, int | None]] = {}
        self._started: dict[str, float] = {}
        self._printed: dict[str, float] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> StageProgress:
        if not self.plain:
            self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.plain:
            for bar in self.progress.tasks:
                if bar.total is None:
                    self.progress.update(bar.id, total=bar.completed)
            self.progress.stop()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        with self._lock:
            first = stage not in self._started
            if first:
                self._started[stage] = time.monotonic()
            self.seen[stage] = (done, total)
            if self.plain:
                self._line(stage, done, total, first)
            elif stage in self.overall:
                if stage not in self.tasks:
                    self.tasks[stage] = self.progress.add_task(stage, total=total)
                self.progress.update(self.tasks[stage], completed=done, total=total)
            else:
                if "step" not in self.tasks:
                    self.tasks["step"] = self.progress.add_task(stage, total=total)
                if stage != self.current:  # a new step: its own count, clock and ETA
                    self.progress.reset(self.tasks["step"], total=total, completed=0, description=stage)
                    self.current = stage
                self.progress.update(self.tasks["step"], completed=done, total=total)

    def still(self, stage: str) -> None:
        """A plain line for ``stage`` when none was printed in the last ``interval`` seconds: its last counts, the
        elapsed time and "still running" (the heartbeat of a long step that reports nothing in between)."""
        with self._lock:
            if stage not in self.seen or time.monotonic() - self._printed.get(stage, 0.0) < self.interval:
                return
            done, total = self.seen[stage]
            if total is not None and done >= total:
                return
            self._printed[stage] = now = time.monotonic()
            count = f"{done:,}/{total:,}" if total is not None else f"{done:,}"
            self.console.print(f"[{time.strftime('%H:%M:%S')}] {stage}: {count}, elapsed "
                               f"{_clock(now - self._started[stage])}, still running", highlight=False, markup=False,
                               soft_wrap=True)

    def _line(self, stage: str, done: int, total: int | None, first: bool) -> None:
        now = time.monotonic()
        last = total is not None and done >= total
        if not (first or last or now - self._printed.get(stage, 0.0) >= self.interval):
            return
        self._printed[stage] = now
        spent = now - self._started[stage]
        count = f"{done:,}/{total:,}" if total is not None else f"{done:,}"
        if total:
            count += f" ({100 * done / total:.0f} %)"
        eta = ""
        if total is not None and 0 < done < total and spent >= 1.0:  # a rate from under a second says nothing
            eta = f", ETA {_clock((total - done) * spent / done)}"
        self.console.print(f"[{time.strftime('%H:%M:%S')}] {stage}: {count}, elapsed {_clock(spent)}{eta}",
                           highlight=False, markup=False, soft_wrap=True)

    def track(self, items: Iterable[Any], stage: str, total: int | None = None) -> Iterator[Any]:
        """Yield ``items`` and report ``stage`` after each one (``done`` counts the items finished)."""
        items = list(items) if total is None else items
        n = len(items) if total is None and isinstance(items, list) else total
        self(stage, 0, n)
        for k, item in enumerate(items, 1):
            yield item
            self(stage, k, n)


def findings_progress(overall: Iterable[str] = (), interval: float = 60.0) -> StageProgress:
    """Progress for the findings scripts (``scripts/findings/*.py``), on stdout beside their log lines: rich
    bars on a terminal, timestamped lines with counts and an ETA when stdout is a file (``> log``), at most one
    per stage each ``interval`` seconds besides each stage's first and last. ``overall`` names the stages that
    keep a bar of their own (the outer loops: runs, prompts x stages)."""
    return StageProgress(Console(soft_wrap=True, markup=False), overall=overall, interval=interval)


def engine_stages(progress: Callable[[str, int, int | None], None], label: str, chunk_size: int,
                  n_records: int | None) -> Callable[[str, int, int | None], None]:
    """The engine's hook (:func:`callbluff.engine.run.run_suite` ``progress``) shown as ``label: records``
    (chunks x ``chunk_size``, capped at ``n_records``, the run's record count when known), ``label: generator
    pieces`` and ``label: fitted (attack, prompt)``. Reports ``label: records`` at 0 at once: make it just
    before the run, so the records' clock starts with the run."""

    def hook(stage: str, done: int, total: int | None) -> None:
        if stage == "chunk":
            n = done * chunk_size
            progress(f"{label}: records", min(n, n_records) if n_records is not None else n, n_records)
        elif stage == "generator chunk":
            progress(f"{label}: generator pieces", done, total)
        elif stage == "fit":
            progress(f"{label}: fitted (attack, prompt)", done, total)

    progress(f"{label}: records", 0, n_records)
    return hook


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


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
    progress = Progress(SpinnerColumn(), TextColumn(description, markup=False), TimeElapsedColumn(), console=console,
                        transient=True)
    progress.add_task(description, total=None)
    with progress:
        yield


PROMPT_FIGURES: tuple[tuple[str, str], ...] = (
    ("n_train", "trained on"), ("cv_qwk", "CV QWK"), ("dev_qwk", "dev QWK"), ("eval_qwk", "held-out QWK"),
    ("eval_n", "held-out n"))
"""The per-prompt figures of model.json's ``metrics`` the training summary shows, with their labels."""
CLEAN_FIGURES = ("qwk", "f1", "em", "success_rate", "recall_at_5", "mrr", "map", "n")
"""The clean-data figures of an evaluation's metric rows the training summary shows (whichever exist)."""


def training_summary(kind: str, out_dir: str, summary: Mapping[str, Any], max_prompts: int = 12) -> list[str]:
    """A few lines instead of the whole model.json: what was trained (kind, data, prompts, time), the clean
    figures per prompt (training CV / dev QWK, held-out QWK when ``--eval`` measured it), the held-out
    figures of readers and retrievers (F1 / EM, success, Recall@5...), and where the files are."""
    data = summary.get("data")
    metrics = summary.get("metrics") or {}
    metrics = metrics if isinstance(metrics, Mapping) else {}
    prompts = [k for k, v in metrics.items() if isinstance(v, Mapping) and any(f in v for f, _ in PROMPT_FIGURES)]
    what = f"trained {kind}" + (f" on {data}" if data else "")
    if prompts:
        what += f" ({len(prompts)} prompt{'s' if len(prompts) != 1 else ''})"
    elif isinstance(summary.get("n_documents"), int):
        what += f" ({summary['n_documents']:,} documents indexed)"
    lines = [f"{what} in {summary.get('train_seconds', '?')} s"]
    for pid in prompts[:max_prompts]:
        m = metrics[pid]
        figures = ", ".join(f"{label} {_short(m[f])}" for f, label in PROMPT_FIGURES if m.get(f) is not None)
        lines.append(f"  prompt {pid}: {figures}")
    if len(prompts) > max_prompts:
        lines.append(f"  ... and {len(prompts) - max_prompts} more prompts in model.json")
    if metrics.get("eval_mean_qwk") is not None:
        lines.append(f"  mean held-out QWK {_short(metrics['eval_mean_qwk'])} on {metrics.get('eval_data')}")
    elif metrics.get("eval_rows"):
        clean = [r for r in metrics["eval_rows"] if isinstance(r, Mapping) and r.get("attack") in ("clean", None)]
        for r in clean[:max_prompts]:
            figures = ", ".join(f"{f} {_short(r[f])}" for f in CLEAN_FIGURES if isinstance(r.get(f), int | float))
            where = f"{r['target']}, " if r.get("target") and len(clean) > 1 else ""
            lines.append(f"  held-out ({where}{metrics.get('eval_data')}): {figures}")
    lines.append(f"files: {out_dir} (model.json holds the parameters, versions and every figure)")
    return lines


def _short(v: float) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _utc(t: float, day: bool = True) -> str:
    import datetime as _dt

    d = _dt.datetime.fromtimestamp(t, _dt.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M") if day else d.strftime("%H:%M")


def reuse_sentence(name: str | None, p: Mapping[str, Any]) -> str:
    """One line saying where a run's predictions for one target came from (run.json ``predictions``: ``reused``,
    ``reused_first`` / ``reused_last`` in seconds since the epoch, ``asked``, ``stopped``), e.g. ``reused 1,234
    predictions cached 2026-11-24 10:02-10:15 UTC; asked 56 new``: reused answers were made by an earlier run
    (read from the prediction cache, or kept in the finished chunks of this directory), not asked now."""
    who = f"{name}: " if name else ""
    asked = int(p.get("asked") or 0)
    reused = int(p.get("reused") or 0)
    first, last = p.get("reused_first"), p.get("reused_last")
    if reused and first is not None and last is not None:
        same_day = _utc(first)[:10] == _utc(last)[:10]
        when = f"{_utc(first)}-{_utc(last, day=not same_day)} UTC" if _utc(first) != _utc(last) else f"{_utc(first)} UTC"
        text = f"reused {reused:,} predictions cached {when}; asked {asked:,} new"
    elif reused:
        text = f"reused {reused:,} predictions made by an earlier run; asked {asked:,} new"
    else:
        text = f"asked {asked:,} new predictions (none reused)"
    if p.get("stopped"):
        text += f"; stopped: {p['stopped']}"
    return who + text
