"""``callbluff annotate export|import``: human evaluation (annotation sheets out, Kumar Table 6, DPAEG
comprehension and AddSent verification in).

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the annotation and report modules are imported
inside the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from callbluff.console import console, fail, out

annotate_app = typer.Typer(help="Human evaluation: annotation sheets out, Kumar Table 6 / DPAEG comprehension / "
                                "AddSent verification in.",
                           no_args_is_help=True)


@annotate_app.command("export")
def annotate_export(
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    kind: Annotated[str, typer.Option(help="scoring (score original and adversarial, Kumar et al.), "
                                           "comprehension (is the adversarial question understood, DPAEG) or "
                                           "addsent (is the added sentence grammatical, does it answer the "
                                           "question: Jia & Liang's verification)")],
    n: Annotated[int, typer.Option("--n", help="examples on the sheet")],
    out_file: Annotated[Path, typer.Option("--out", help="the sheet as CSV (a printable HTML form is written beside "
                                                         "it)")],
    seed: Annotated[int, typer.Option(help="seed of the sample and of the A/B order")] = 0,
) -> None:
    """Write an annotation sheet (CSV + printable HTML; pairs in random order, keys kept in the run directory)."""
    from callbluff.annotate import AnnotationError, export_sheet

    try:
        ex = export_sheet(run_dir, kind, n, out_file, seed=seed)
    except AnnotationError as e:
        fail(str(e))
        raise
    console.print(f"sheet {ex.sheet}: {ex.covers or f'{ex.n} items'}", highlight=False)
    console.print(f"sheet {ex.sheet}: {ex.n} items -> {ex.csv} and {ex.html}; key kept in {ex.key}. Send the CSV "
                  f"(or the printed form) to each annotator, then `callbluff annotate import {run_dir} FILLED.csv...`",
                  highlight=False)


@annotate_app.command("import")
def annotate_import(
    run_dir: Annotated[Path, typer.Argument(help="the run directory the sheets were exported from")],
    files: Annotated[list[Path], typer.Argument(help="filled sheets (CSV), all at once", metavar="FILES...")],
) -> None:
    """Read filled sheets: Kumar et al. Table 6 (scoring) and the DPAEG comprehension rate; updates report.html."""
    from callbluff.annotate import AnnotationError, import_sheets
    from callbluff.report.html import ReportError, write_report
    from callbluff.render.text import fmt as fmt_value

    try:
        summary = import_sheets(run_dir, files)
    except AnnotationError as e:
        fail(str(e))
        raise
    for view in summary["views"]:
        table = Table(title=view["title"])
        for h in view["header"]:
            table.add_column(h)
        for row in view["rows"]:
            table.add_row(*[fmt_value(v) for v in row])
        out.print(table)
    try:
        path = write_report(run_dir)
    except ReportError as e:
        fail(str(e))
        raise
    console.print(f"results: {run_dir / 'annotations' / 'results.json'}; report: {path}", highlight=False)
