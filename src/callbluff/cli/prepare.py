"""``callbluff prepare`` and ``demo``: set up what the attacks need once, and the main job on built-in data.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the resources and the demo are imported inside the
commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from callbluff.cli.summary import print_metrics
from callbluff.console import console, fail, say

commands = typer.Typer()


@commands.command()
def prepare(
    step: Annotated[list[str] | None, typer.Argument(help="cache steps to build (default: all): reading-lexicon, "
                                                          "dpaeg-dictionary, generic-ngrams")] = None,
    llm: Annotated[bool, typer.Option("--llm", help="also the local LLM grader: the SmolLM2-135M model and "
                                      "llama-cpp-python compiled for any x86-64 CPU (minutes, once per machine)")]
    = False,
) -> None:
    """Fetch and build what the attacks need once (WordNet, SQuAD, the typo corpus, the AddSent lexicon, DPAEG's
    dictionary, the generic n-gram tables): what `make setup` does after installing the packages; idempotent."""
    from callbluff.prepare import fetch_resources
    from callbluff.prepare import prepare as build_caches

    def log(msg: str) -> None:
        console.print(msg, highlight=False, markup=False)

    fetched = fetch_resources(llm=llm, log=log) if not step else []
    try:
        built = build_caches(step or None, log=log)
    except ValueError as e:
        fail(str(e))
        raise
    missing = [r for r in fetched + built if r.status in ("skipped", "failed")]
    for r in missing:
        say((f"{r.name}: {r.status}: {r.detail}", "yellow"))
    if any(r.status == "failed" for r in built):
        fail("prepare: a step failed (see above)", code=1)
    console.print("ready" + (f" ({len(missing)} step(s) left out: what needs them says so when used)"
                             if missing else ""), highlight=False, markup=False)


@commands.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="where the demo writes its models and run directories")] = Path(
        "demo-run"),
    workers: Annotated[int, typer.Option(help="worker processes")] = 1,
    suite: Annotated[list[str] | None, typer.Option(help="only this suite (repeatable): essay, content, reading, "
                                                         "questions")] = None,
    limit: Annotated[int | None, typer.Option(help="attack only N records of each suite, across its prompts (quicker)")] = None,
) -> None:
    """The main job on built-in data: train reference systems, run the four paper suites through the engine,
    write one report per suite."""
    from callbluff.demo import run_demo

    try:
        run_demo(out_dir, workers=workers, show=print_metrics, suites=suite or None,
                 log=lambda m: console.print(m, markup=False, highlight=False),
                 limit=limit)
    except Exception as e:  # noqa: BLE001 - the demo must say what went wrong
        fail(f"demo failed: {type(e).__name__}: {e}", code=1)
