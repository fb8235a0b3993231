"""``callbluff compare``: is v2 better? Verdicts per target and attack, then every figure's difference.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the comparison (SciPy, pandas) is imported inside
the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from callbluff.console import console, fail, out, say

REGRESSION_EXIT = 4
"""``callbluff compare --fail-on-regression``'s exit code when a compared column is worse on an attack."""

commands = typer.Typer()


@commands.command()
def compare(
    run_dirs: Annotated[list[Path], typer.Argument(help="two or more run directories (or one with two targets); "
                                                   "the first is the baseline", metavar="RUN_A RUN_B...")],
    out_file: Annotated[Path | None, typer.Option("--out", help="the comparison as HTML (default: compare.html in "
                                                                "the first run directory, the baseline's)")] = None,
    top: Annotated[int, typer.Option(help="difference rows printed on the terminal")] = 25,
    fail_on_regression: Annotated[bool, typer.Option(
        "--fail-on-regression", help=f"exit {REGRESSION_EXIT} when a run is worse than the baseline on an attack "
                                     "(beyond noise: the verdicts' test) or its clean QWK dropped beyond its "
                                     "bootstrap interval")] = False,
    json_file: Annotated[Path | None, typer.Option("--json", help="also write the verdicts and differences as "
                                                                  "JSON")] = None,
    csv_file: Annotated[Path | None, typer.Option("--csv", help="also write the verdicts and differences as "
                                                                "one CSV table")] = None,
    alpha: Annotated[float, typer.Option(help="significance level of the verdicts (Holm-adjusted)")] = 0.05,
) -> None:
    """Is v2 better? Per target and attack: better / worse / unchanged beyond noise (McNemar's exact test on the
    paired per-example verdicts), then every figure with its signed difference to the baseline."""
    from callbluff.compare import (as_csv, as_json, clean_line, compare_runs, difference_columns, row_differences,
                                   rows_for_display, signed, summary_lines, test_sentence, value, verdict_counts,
                                   verdict_line, write_compare_html, write_text)
    from callbluff.report.load import ReportError

    try:
        c = compare_runs(run_dirs, alpha=alpha)
    except (ReportError, ValueError) as e:
        fail(str(e))
        raise
    colour = {"better": "green", "worse": "bold red", "unchanged": "dim", "n/a": "yellow", "": ""}
    vt = Table(title=f"verdicts per attack (baseline: {', '.join(sorted({v.baseline for v in c.verdicts}))})")
    for col in ("target", "attack", "params", "failure % base", "failure %", "difference", "pairs",
                "newly fooled", "no longer fooled", "p (Holm)", "verdict"):
        vt.add_column(col, overflow="fold")
    shown = [v for v in c.verdicts if v.verdict != "unchanged"][:max(top, 0)]
    for v in shown:
        vt.add_row(v.column, v.attack, c.label(v.attack, v.params), value(v.baseline_failure_pct),
                   value(v.failure_pct), Text(signed(v.difference), style=colour[v.verdict]), str(v.n_pairs),
                   str(v.fooled_only_column), str(v.fooled_only_baseline),
                   "–" if v.p_adjusted is None else f"{v.p_adjusted:.3g}", Text(v.verdict, style=colour[v.verdict]))
    if shown:
        out.print(vt)
    table = Table(title="differences, largest first (signed: column - baseline)")
    for col in ["attack", "params", "prompt", "metric", *c.columns, *difference_columns(c)]:
        table.add_column(col, overflow="fold")
    for row, d in zip(rows_for_display(c, top), c.differences):
        dirs = [cls for _, cls in row_differences(c, d)]
        n_diff = len(dirs)
        table.add_row(*row[:len(row) - n_diff],
                      *[Text(cell, style={"better": "green", "worse": "red"}.get(cls, "")) for cell, cls in
                        zip(row[len(row) - n_diff:], dirs)])
    out.print(table)
    for line in summary_lines(c):
        console.print(f"  {line}", highlight=False, markup=False)
    for note in c.notes:
        say(("note:", "yellow"), f" {note}")
    if out_file is not None:
        path = write_compare_html(c, out_file)
    else:
        try:
            path = write_compare_html(c, run_dirs[0] / "compare.html")
        except OSError as e:  # a read-only baseline directory: here instead, and say why
            path = write_compare_html(c, Path("compare.html"))
            say(("note:", "yellow"), f" could not write into {run_dirs[0]} ({e.strerror or e}); wrote {path.resolve()}")
    if json_file is not None:
        write_text(as_json(c), json_file)
    if csv_file is not None:
        write_text(as_csv(c), csv_file)
    for v in c.clean:
        say(("clean quality:", {"worse": "bold red", "better": "green"}.get(v.verdict, "")), f" {clean_line(v)}")
    counts = verdict_counts(c)
    say(("worse: " + str(counts["worse"]), "bold red" if counts["worse"] else ""), " · ",
        ("better: " + str(counts["better"]), "green" if counts["better"] else ""),
        f" · unchanged: {counts['unchanged']}" + (f" · not testable: {counts['n/a']}" if counts["n/a"] else "")
        + f" ({test_sentence(c)})")
    for v in c.regressions:
        say(("regression:", "bold red"), " ", verdict_line(c, v))
    console.print(f"{len(c.differences)} aligned figures, {sum(1 for d in c.differences if d.spread)} differ; "
                  f"comparison: {path}" + "".join(f"; {f}" for f in (json_file, csv_file) if f is not None),
                  highlight=False)
    if fail_on_regression and (c.regressions or c.clean_regressions):
        found = ([f"{v.column}: {v.attack} ({c.label(v.attack, v.params)})" for v in c.regressions]
                 + [f"{v.column}: clean QWK {signed(v.difference, 'qwk')} (interval {signed(v.low, 'qwk')} to "
                    f"{signed(v.high, 'qwk')})" for v in c.clean_regressions])
        say(("error:", "bold red"), f" {len(found)} regression(s) beyond noise (--fail-on-regression): "
            + "; ".join(found))
        raise typer.Exit(REGRESSION_EXIT)
    if fail_on_regression and c.untestable:  # a gate that could not test is not a pass
        fail(f"--fail-on-regression: {len(c.untestable)} attack configuration(s) could not be tested: "
             + "; ".join(f"{v.column}: {v.attack} ({c.label(v.attack, v.params)}): {v.untestable}"
                         for v in c.untestable[:5]) + ("; ..." if len(c.untestable) > 5 else ""))
