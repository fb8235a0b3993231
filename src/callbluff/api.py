"""The Python entry point of a run with its report: :func:`run_suite` runs a suite through the engine
(:func:`callbluff.engine.run.run_suite`) and writes ``report.html`` once the run is finished, when the suite's
``output.report`` asks for it (default), as ``callbluff run`` does. The engine itself writes no report: it sits
above it in the layers neither way (docs/design.md "Layering"), so the caller that wants one passes it in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from callbluff.engine.run import RunResult
from callbluff.engine.run import run_suite as run_engine
from callbluff.engine.suite import Suite, load_suite, parse_suite
from callbluff.report.html import write_report
from callbluff.targets.base import Target

__all__ = ["RunResult", "report_writer", "run_suite"]


def report_writer(suite: Suite) -> Callable[[Path], None] | None:
    """What writes the run's report once it is finished: :func:`~callbluff.report.html.write_report`, or None when
    the suite turns the report off (``output.report = false``)."""
    if not suite.output.report:
        return None

    def write(run_dir: Path) -> None:
        write_report(run_dir)

    return write


def run_suite(suite: Suite | Mapping[str, Any] | str | Path, out_dir: str | Path, *, workers: int = 1,
              limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
              retry_errors: bool = True, restart: bool = False, executor: str = "local",
              ray_address: str | None = None,
              targets: Mapping[str, Target | Callable[..., Any]] | None = None) -> RunResult:
    """:func:`callbluff.engine.run.run_suite` (same arguments: a suite, its file or its tables as a dict; targets
    given from Python by name) with the run's ``report.html`` written at the end unless the suite turns it off,
    e.g. ``run_suite(suite, "runs/mine", targets={"mine": f})``."""
    if isinstance(suite, (str, Path)):
        suite = load_suite(suite)
    elif isinstance(suite, Mapping):
        suite = parse_suite(dict(suite), source="run_suite", base_dir=Path.cwd())
    return run_engine(suite, out_dir, workers=workers, limit=limit, progress=progress, retry_errors=retry_errors,
                      restart=restart, executor=executor, ray_address=ray_address, targets=targets,
                      on_finished=report_writer(suite))
