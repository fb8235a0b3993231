"""The command line's two consoles and its one way to stop with an error, shared by the command modules of
:mod:`callbluff.cli` (a light module of a low layer: a command module never imports the package that mounts it).

User text (file paths, suite, target, prompt and attack names, data values, error causes) is never rich
markup: both consoles have markup off, so a string printed on them, a table cell or a table title shows as
written (``model[large]`` stays ``model[large]``; ``[/]`` is no closing tag). Colour comes only from
:func:`say`'s ``(text, style)`` parts, never from text."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.text import Text

console = Console(stderr=True, soft_wrap=True, markup=False)  # never wrap paths or error messages
out = Console(width=None if sys.stdout.isatty() else 200, markup=False)

Part = str | tuple[str, str]


def styled(*parts: Part) -> Text:
    """A line from ``parts``: a ``str`` is plain text shown verbatim, a ``(text, style)`` pair is styled."""
    return Text.assemble(*parts)


def say(*parts: Part, to: Console | None = None) -> None:
    """Print one line made of ``parts`` (see :func:`styled`) on ``to`` (default: stderr), no highlighting."""
    (console if to is None else to).print(styled(*parts), highlight=False)


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` on stderr (the message verbatim) and exit with ``code`` (2: usage or input
    error)."""
    say(("error:", "bold red"), " ", message)
    raise typer.Exit(code)
