"""The ``callbluff`` command (Typer + rich): ``app``, the console script's entry point, mounts one module per
command group.

=================  ==================================================================
module             commands
=================  ==================================================================
``attacks``        ``list`` (the attack catalogue, one attack's card)
``run``            ``generate``, ``run``, ``evaluate``
``report``         ``report``
``compare``        ``compare``
``train``          ``augment``, ``train``
``prepare``        ``prepare``, ``demo``
``annotate``       ``annotate export|import``
``suite``          ``suite kumar2020|llm-grader``
``filter``         ``filter fit|apply``
``summary``        what the terminal shows of a finished run (metrics, provenance, errors, gates)
``common``         ``--param`` / ``--target`` parsing, the exit-code and ``--junit`` help texts
=================  ==================================================================

**The lazy-import rule.** Importing this package (which ``callbluff --version``, ``--help``, ``suite --help`` and
``list`` do) loads only Typer, rich, pydantic, numpy and callbluff's light modules. Whatever pulls in spaCy,
torch, scikit-learn, SciPy, pandas, pyarrow, transformers, Ray, matplotlib or llama.cpp (the engine, the report,
the comparison, the datasets, the tasks, the models, the filters) is imported inside the command that uses it;
an attack module imports its heavy libraries inside its functions. tests/test_cli_startup.py checks it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from callbluff.cli import attacks, compare, prepare, report, run, train
from callbluff.cli.annotate import annotate_app
from callbluff.cli.filter import filter_app
from callbluff.cli.suite import suite_app
from callbluff.console import out

app = typer.Typer(
    help="callbluff: call the bluff of NLP systems that grade or answer. "
    "Generate adversarial inputs from the papers, run them against your system, measure what the papers measure.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback(invoke_without_command=True)
def _main(version: Annotated[bool, typer.Option("--version", help="print the version and exit")] = False) -> None:
    """callbluff: call the bluff of NLP systems that grade or answer."""
    if version:
        from callbluff import __version__

        out.print(f"callbluff {__version__}")
        raise typer.Exit(0)


# the commands in the order `callbluff --help` lists them, then the groups
for _group in (attacks, run, report, compare, train, prepare):
    app.add_typer(_group.commands)
app.add_typer(annotate_app, name="annotate")
app.add_typer(suite_app, name="suite")
app.add_typer(filter_app, name="filter")

__all__ = ["app"]
