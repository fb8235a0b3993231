"""``callbluff report``: (re)build report.html from run directories, print their metrics and check their gates.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the report and its tables are imported inside the
command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from callbluff.cli.common import EXIT_CODES, JUNIT_HELP
from callbluff.cli.summary import (GATE_FAILED, METRIC_ROWS, REPORT_ROWS_PER_RUN, check_and_print_gates, print_metrics,
                                   print_provenance)
from callbluff.console import console, fail, out, say
from callbluff.terminal import StageProgress, progress_interval

commands = typer.Typer()


@commands.command(epilog=EXIT_CODES)
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="one run directory, or several for one combined report "
                                                        "(with --out)", metavar="RUN_DIR...")],
    tables: Annotated[str | None, typer.Option(
        help="also print paper-shaped tables: 'kumar' (Kumar et al. Tables 4-5, Markdown; writes "
             "kumar_tables.md and kumar_tables.csv in the run directory)")] = None,
    out_file: Annotated[Path | None, typer.Option(
        "--out", help="where to write the HTML (default: RUN_DIR/report.html; required for several runs)")] = None,
    open_browser: Annotated[bool, typer.Option("--open", help="open the report in a browser, where one exists")
                            ] = False,
    junit: Annotated[Path | None, typer.Option(help=JUNIT_HELP)] = None,
) -> None:
    """(Re)build report.html from run directories, print their metrics and check their \\[\\[expect]] gates."""
    from callbluff.report.html import ReportError, write_report

    for run_dir in run_dirs:
        if not (run_dir / "run.json").exists():
            fail(f"{run_dir}: not a run directory (no run.json); run `callbluff run SUITE.toml --out {run_dir}` "
                 "first")
    if len(run_dirs) > 1 and out_file is None:
        fail("several run directories make one combined report: give --out FILE.html")
    if tables is not None and tables != "kumar":
        fail(f"--tables {tables!r}: unknown table style; allowed: kumar")
    try:
        with StageProgress(console, interval=progress_interval()) as progress:  # a log: timestamped lines
            path = write_report(run_dirs if len(run_dirs) > 1 else run_dirs[0], out=out_file, progress=progress)
    except ReportError as e:
        fail(str(e))
        raise
    except OSError as e:  # a read-only run directory (an archived CI artefact), a full disk: exit 2 with the path
        fail(_report_io_error(e, out_file or run_dirs[0] / "report.html"))
        raise
    gates_ok = True
    for run_dir in run_dirs:
        if (run_dir / "metrics.json").exists():
            meta = json.loads((run_dir / "run.json").read_text())
            print_metrics(json.loads((run_dir / "metrics.json").read_text()), title=f"{meta.get('name')}: metrics",
                          max_rows=METRIC_ROWS if len(run_dirs) == 1 else REPORT_ROWS_PER_RUN)
            print_provenance(meta)
            gates_ok &= check_and_print_gates(run_dir, junit if len(run_dirs) == 1 else None,
                                              str(meta.get("name", "suite")))
        if tables == "kumar":
            from callbluff.render.tables import kumar_csv, kumar_tables

            try:
                md = kumar_tables(run_dir)
            except (FileNotFoundError, ValueError) as e:
                fail(str(e))
                raise
            (run_dir / "kumar_tables.md").write_text(md, encoding="utf-8")
            (run_dir / "kumar_tables.csv").write_text(kumar_csv(run_dir), encoding="utf-8")
            out.print(md, markup=False, highlight=False)
            console.print(f"tables: {run_dir / 'kumar_tables.md'}, {run_dir / 'kumar_tables.csv'}")
    if junit is not None and len(run_dirs) > 1:
        _junit_many(run_dirs, junit)
    console.print(f"report: {path}")
    if open_browser:
        _open_in_browser(path)
    if not gates_ok:
        raise typer.Exit(GATE_FAILED)


def _report_io_error(e: OSError, where: Path) -> str:
    """The message for a report that cannot be written: the path, the cause and the fix (``--out``)."""
    path = e.filename if getattr(e, "filename", None) else where
    cause = e.strerror or str(e) or type(e).__name__
    return (f"{path}: {cause}. The report cannot be written there (a read-only run directory, e.g. an archived CI "
            "artefact, or a full disk); write it elsewhere with --out FILE.html (the run directory is only read)")


def _junit_many(run_dirs: list[Path], junit: Path) -> None:
    """One JUnit XML file with a test suite per run directory (its ``[[expect]]`` gates)."""
    from callbluff.gates import check_gates, gates_of_run, junit_xml_suites
    from callbluff.render.tables import load_metrics

    suites = []
    for run_dir in run_dirs:
        meta = json.loads((run_dir / "run.json").read_text())
        gates = gates_of_run(run_dir)
        suites.append((str(meta.get("name", run_dir.name)), check_gates(gates, load_metrics(run_dir))))
    junit.parent.mkdir(parents=True, exist_ok=True)
    junit.write_text(junit_xml_suites(suites), encoding="utf-8")
    console.print(f"JUnit XML: {junit}", highlight=False)


def _open_in_browser(path: Path) -> None:
    """Open ``path`` in a browser where there is one; otherwise say where the file is."""
    import webbrowser

    try:
        opened = webbrowser.open(path.resolve().as_uri())
    except webbrowser.Error:
        opened = False
    if not opened:
        say((f"no browser found here; open {path.resolve()} yourself", "yellow"))
