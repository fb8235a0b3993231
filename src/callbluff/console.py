"""The command line's two consoles and its one way to stop with an error, shared by :mod:`callbluff.cli` and
the sub-commands other packages contribute (``callbluff filter``, :mod:`callbluff.filter_cli`), so that those
never import the command that mounts them."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

console = Console(stderr=True, soft_wrap=True)  # never wrap paths or error messages
out = Console(width=None if sys.stdout.isatty() else 200)


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` on stderr and exit with ``code`` (2: usage or input error)."""
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)
