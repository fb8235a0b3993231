"""``callbluff generate``, ``run`` and ``evaluate``: the commands that generate adversarial examples and ask the
targets.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the engine, the datasets and pandas are imported
inside the commands."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from callbluff.cli.common import EXIT_CODES, JUNIT_HELP, parse_params, target_from_spec
from callbluff.cli.summary import finish_run
from callbluff.console import console, fail, say
from callbluff.terminal import RunProgress, counted

commands = typer.Typer()


@commands.command()
def generate(
    attack: Annotated[str, typer.Option(help="attack name (see `callbluff list`)")],
    data: Annotated[str, typer.Option(help="dataset spec, e.g. asap-aes:training_set_rel3.tsv.gz")],
    out_file: Annotated[Path, typer.Option("--out", help="output JSON-lines file")],
    param: Annotated[list[str] | None, typer.Option(help="attack parameter key=value (repeatable)")] = None,
    seed: Annotated[int, typer.Option(help="seed; each record derives its own generator from it")] = 0,
    limit: Annotated[int | None, typer.Option(help="only N records, taken across the prompts (the first of each)")] = None,
    workers: Annotated[int, typer.Option(help="worker processes (local) or Ray CPUs of a local Ray runtime")] = 1,
    executor: Annotated[str, typer.Option(help="local (worker processes) or ray (Ray tasks; docs/scale-out.md)")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="with --executor ray: join this Ray cluster (e.g. auto)")] = None,
) -> None:
    """Generate the adversarial set only (no target): one JSON line per example, traced to its source id."""
    from callbluff.attacks.base import get_attack
    from callbluff.datasets import DataError, load
    from callbluff.engine.executor import make_executor
    from callbluff.engine.generate import AttackSpec, MissingResources
    from callbluff.engine.generate import generate as generate_chunks

    params = parse_params(param)
    try:
        cls = get_attack(attack)
        spec = AttackSpec.make(cls.name, params)
        cls(**params)  # the parameters are checked before the data is read
    except (KeyError, ValueError) as e:
        fail(str(e.args[0]))
        raise
    try:
        ds = load(data)
    except (DataError, FileNotFoundError) as e:
        fail(str(e))
        raise
    if not cls.serves(ds.task):
        fail(f"attack {cls.name} is for task {' or '.join(map(repr, cls.served()))} but {data} is {ds.task!r}")
    try:
        pool = make_executor(executor, workers, ray_address)
    except ValueError as e:
        fail(str(e))
        raise
    out_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_file.with_name(out_file.name + ".tmp")
    n_ex = n_err = n_rec = 0
    with pool as ex:
        try:
            chunks = generate_chunks([spec], ds, ds.prompts, seed=seed, executor=ex, limit=limit)
        except (MissingResources, ValueError) as e:  # missing resources, a search attack: before any work
            fail(str(e))
            raise
        with open(tmp, "w", encoding="utf-8") as fh, counted(console, f"{cls.name}: records", limit) as advance:
            for chunk in chunks:
                n_rec += len(chunk.records)
                advance(len(chunk.records))
                for p in chunk.examples:
                    fh.write(json.dumps(p.to_dict(), sort_keys=True, ensure_ascii=False) + "\n")
                    n_ex += 1
                for err in chunk.errors:
                    say((f"record {err['source_id']}: {err['cause']}", "yellow"))
                    n_err += 1
    os.replace(tmp, out_file)
    console.print(f"{n_ex} adversarial examples from {n_rec} records -> {out_file}"
                  + (f" ({n_err} records failed, listed above)" if n_err else ""))


def _run_progress(suite: Any, limit: int | None, quiet: bool = False) -> Any:
    """Rich bars (records, generator pieces; counts, elapsed, ETA) for a run; a no-op context when quiet."""
    import contextlib

    from callbluff.datasets import load

    if quiet:
        return contextlib.nullcontext(None)

    def count() -> int:
        return sum(1 for _ in load(suite.dataset_spec(), **suite.dataset.options))

    return RunProgress(console, suite.output.chunk_size, count, limit if limit is not None else suite.limit)


@commands.command(epilog=EXIT_CODES)
def run(
    suite_file: Annotated[Path, typer.Argument(help="suite TOML file", metavar="SUITE.toml")],
    out_dir: Annotated[Path, typer.Option("--out", help="run directory (re-running into it resumes)")],
    workers: Annotated[int, typer.Option(help="worker processes for generation (local) or Ray CPUs")] = 1,
    executor: Annotated[str, typer.Option(help="local (worker processes) or ray (Ray tasks; docs/scale-out.md)")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="with --executor ray: join this Ray cluster (e.g. auto)")] = None,
    limit: Annotated[int | None, typer.Option(help="only N records, taken across the prompts (overrides the suite)")] = None,
    quiet: Annotated[bool, typer.Option(help="no progress lines")] = False,
    retry_errors: Annotated[bool, typer.Option(
        "--retry-errors/--no-retry-errors",
        help="on resume, ask again the predictions that failed last time (default) or keep their errors")] = True,
    restart: Annotated[bool, typer.Option(
        help="start over in --out (removes its run files; a readable prediction cache is kept and reused)")] = False,
    max_error_rate: Annotated[float, typer.Option(
        min=0.0, max=1.0, help="exit 1 when a target's share of failed predictions exceeds this")] = 0.5,
    junit: Annotated[Path | None, typer.Option(help=JUNIT_HELP)] = None,
) -> None:
    """Run a suite: generate adversarial examples, query the targets, compute metrics, write a run directory."""
    from callbluff.datasets import DataError
    from callbluff.api import run_suite
    from callbluff.engine.run import TargetUnavailable
    from callbluff.engine.store import RunDirError, local_io_error
    from callbluff.engine.suite import SuiteError, load_suite
    suite = None
    try:
        suite = load_suite(suite_file)
        with _run_progress(suite, limit, quiet) as progress:
            result = run_suite(suite, out_dir, workers=workers, limit=limit, progress=progress,
                               retry_errors=retry_errors, restart=restart, executor=executor,
                               ray_address=ray_address)
    except TargetUnavailable as e:  # the pre-flight: a target failure (exit 1), before any chunk
        fail(str(e), code=1)
        raise
    except (SuiteError, DataError, RunDirError, FileNotFoundError, ValueError) as e:
        fail(str(e) + (_suite_path_note(suite, suite_file) if isinstance(e, DataError) and "not found" in str(e) else ""))
        raise
    except OSError as e:  # the machine's own I/O (the engine names the file where it knows it)
        fail(str(local_io_error(e, out_dir)))
        raise
    finish_run(result, out_dir, max_error_rate, f"{suite.name}: metrics", junit, suite.name)


def _suite_path_note(suite: Any, suite_file: Path) -> str:
    """For a data error of a suite whose dataset path is relative: where that path was resolved (the suite's
    folder, not the current directory), so the user fixes the right thing."""
    from callbluff.datasets.base import parse_spec

    if suite is None:
        return ""
    try:
        _, path, _ = parse_spec(suite.dataset.spec)
    except ValueError:
        return ""
    if not path or Path(path).expanduser().is_absolute():
        return ""
    return (f" (the suite {suite_file} gives the relative path {path}: a suite's relative paths are resolved "
            f"against the suite's folder {Path(suite.base_dir).resolve()}, not the current directory)")


@commands.command(epilog=EXIT_CODES)
def evaluate(
    target: Annotated[str, typer.Option(help="TYPE:VALUE, e.g. model:DIR, hf:DIR, http://127.0.0.1:8000/score")],
    data: Annotated[str, typer.Option(help="dataset spec")],
    target_option: Annotated[list[str] | None, typer.Option(help="target setting key=value (repeatable)")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="keep the run directory here (with report.html); "
                                                        "default: a temporary one, removed at the end")] = None,
    keep: Annotated[bool, typer.Option(help="keep the temporary run directory (its path and report are printed)")]
    = False,
    limit: Annotated[int | None, typer.Option(help="only N records, taken across the prompts (the first of each)")] = None,
    max_error_rate: Annotated[float, typer.Option(
        min=0.0, max=1.0, help="exit 1 when the share of failed predictions exceeds this")] = 0.5,
) -> None:
    """Clean-data figures of a target on a dataset, the task's own: QWK and ARR for scorers (ARR alone for a set
    of bluffs, every gold at the minimum), EM/F1 for readers, top-1 / MRR for open questions."""
    import shutil
    import tempfile

    from callbluff.datasets import DataError
    from callbluff.api import run_suite
    from callbluff.engine.run import TargetUnavailable
    from callbluff.engine.store import RunDirError
    from callbluff.engine.suite import SuiteError, parse_suite
    cfg = target_from_spec(target, target_option)
    kept = out_dir is not None or keep
    run_dir = out_dir if out_dir is not None else Path(tempfile.mkdtemp(prefix="callbluff-evaluate-"))
    try:
        try:
            suite = parse_suite({"name": "evaluate", "dataset": {"spec": data}, "target": [cfg],
                                 "output": {"report": kept}}, source="evaluate", base_dir=Path.cwd())
            with _run_progress(suite, limit) as progress:
                result = run_suite(suite, run_dir, limit=limit, progress=progress)
        except TargetUnavailable as e:
            fail(str(e), code=1)
            raise
        except (SuiteError, DataError, RunDirError, FileNotFoundError) as e:
            fail(str(e))
            raise
        finish_run(result, run_dir if kept else None, max_error_rate, f"clean metrics on {data}",
                    headline=_headline_figures(result, suite))
    finally:
        if not kept:  # nothing is printed that points into it
            shutil.rmtree(run_dir, ignore_errors=True)


def _headline_figures(result: Any, suite: Any) -> list[str]:
    """One line per target: its task's headline figures on the clean data (:meth:`Task.headline_figures`)."""
    import pandas as pd

    from callbluff.datasets import load
    from callbluff.tasks import get_task

    originals = result.run_dir / "originals.parquet"
    if not result.metrics or not originals.exists():
        return []
    task = get_task(result.metrics[0]["task"])
    prompts = load(suite.dataset_spec(), **suite.dataset.options).prompts
    table = pd.read_parquet(originals, columns=["target", "prompt_id", "gold", "score", "error"])
    lines = []
    for name, rows in table.groupby("target", sort=True):
        clean = [r for r in result.metrics if r["target"] == name and r["attack"] == "clean"]
        figures = task.headline_figures(clean, rows, prompts)
        lines.append(f"{name}: " + "; ".join(f"{label} {value}" for label, value in figures))
    return lines
