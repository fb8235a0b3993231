"""``callbluff suite kumar2020|llm-grader``: write a paper's whole protocol as an editable suite TOML.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): ``callbluff suite --help`` loads no suite writer and
no engine; they are imported inside the commands."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from callbluff.cli.common import target_from_spec
from callbluff.console import console, fail

if TYPE_CHECKING:
    from callbluff.engine.suite import Suite

suite_app = typer.Typer(help="Write a paper's whole protocol as an editable suite TOML.", no_args_is_help=True)


@suite_app.command("kumar2020")
def suite_kumar2020(
    out_file: Annotated[Path, typer.Option("--out", help="suite TOML file to write")],
    data: Annotated[str | None, typer.Option(
        help="dataset spec, e.g. asap-aes:training_set_rel3.tsv.gz (default: an ASAP-AES placeholder)")] = None,
    target: Annotated[list[str] | None, typer.Option(
        help="TYPE:VALUE, e.g. model:DIR or http://127.0.0.1:8000/score (repeatable; default: a placeholder)")] = None,
    target_option: Annotated[list[str] | None, typer.Option(help="setting key=value for every --target")] = None,
    seed: Annotated[int, typer.Option(help="the suite's seed")] = 0,
) -> None:
    """Kumar et al. 2020 "Calling Out Bluff": all 16 essay adversaries with the paper's size x position grid."""
    from callbluff.suites.kumar2020 import write_kumar2020_suite

    targets = []
    for spec in target or []:
        cfg = target_from_spec(spec, target_option)
        for key in ("path", "model_dir"):  # suites resolve paths against their own directory
            if isinstance(cfg.get(key), str) and Path(cfg[key]).exists() and not Path(cfg[key]).is_absolute():
                cfg[key] = os.path.relpath(Path(cfg[key]).resolve(), out_file.parent.resolve())
        names = {t["name"] for t in targets}
        base, k = cfg["name"], 2
        while cfg["name"] in names:
            cfg["name"], k = f"{base}-{k}", k + 1
        targets.append(cfg)
    path = write_kumar2020_suite(out_file, data, targets, seed=seed)
    _written_suite(path, "kumar2020")


def _written_suite(path: Path, run_name: str, extra: Callable[[Suite], str] = lambda suite: "") -> None:
    """Load a suite file ``callbluff suite`` just wrote (exit 2 if it does not) and say what it holds."""
    from callbluff.engine.suite import SuiteError, load_suite

    try:
        suite = load_suite(path)
    except SuiteError as e:
        fail(f"wrote {path}, but it does not load: {e}")
        raise
    n = sum(len(a.expand()) for a in suite.attack)
    console.print(f"wrote {path}: {len({a.name for a in suite.attack})} attacks, {n} configurations{extra(suite)}; "
                  f"edit it, then `callbluff run {path} --out runs/{suite.name or run_name}` (as its header says)")


@suite_app.command("llm-grader")
def suite_llm_grader(
    out_file: Annotated[Path, typer.Option("--out", help="suite TOML file to write")],
    data: Annotated[str | None, typer.Option(
        help="dataset spec, e.g. mohler:../shared/data/mohler-unt-sag (default: a Mohler placeholder)")] = None,
    task: Annotated[str, typer.Option(help="content (short answers) | essay")] = "content",
    base_url: Annotated[str, typer.Option(help="the grader's OpenAI-compatible API root")] = "http://127.0.0.1:8080/v1",
    model: Annotated[str, typer.Option(help="the model name the endpoint serves")] = "my-grader",
    api_key_env: Annotated[str | None, typer.Option(help="environment variable holding the API key (its value is "
                                                         "never written)")] = None,
    response_format: Annotated[str, typer.Option(help="json_schema (OpenAI) | json_object (llama.cpp) | "
                                                      "structured_outputs (vLLM) | none")] = "json_schema",
    variants: Annotated[bool, typer.Option(help="add a second target with the answer first and the rubric before "
                                                "the reference (spread across prompt variants)")] = False,
    samples: Annotated[int, typer.Option("--n", help="samples per input (the score is their mean; spread kept)")] = 1,
    count: Annotated[int, typer.Option(help="answers per prompt of each seed generator")] = 20,
    search_budget: Annotated[int, typer.Option(help="queries per answer of the universal-phrase search")] = 216,
    seed: Annotated[int, typer.Option(help="the suite's seed")] = 0,
    defences: Annotated[bool, typer.Option(help="add the same grader behind each of its own defences (spotlighting, "
                                                "sandwich, known-answer detection, erase-and-rescore, all of them)")]
    = False,
    filter_dir: Annotated[Path | None, typer.Option("--filter", help="an injection pre-filter directory (`callbluff "
                                                    "filter fit --kind injection`): add the grader behind it and, with "
                                                    "--defences, behind it and the full defence (layered)")] = None,
) -> None:
    """An LLM grader behind a chat endpoint: the seed bluffs of the task and the LLM-grader family."""
    from callbluff.suites.llm_grader import write_llm_grader_suite

    try:
        path = write_llm_grader_suite(out_file, task=task, data=data, base_url=base_url, model=model,
                                      api_key_env=api_key_env, response_format=response_format, variants=variants,
                                      n=samples, count=count, search_budget=search_budget, seed=seed,
                                      defences=defences,
                                      filter_dir=str(filter_dir.resolve()) if filter_dir is not None else None)
    except ValueError as e:
        fail(str(e))
        raise
    _written_suite(path, "llm-grader", lambda suite: f", {len(suite.target)} chat target(s)")
