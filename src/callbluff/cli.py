"""The ``callbluff`` command (Typer + rich)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.table import Table
from rich.text import Text

from callbluff.compare import compare_runs, rows_for_display, summary_lines, write_compare_html
from callbluff.console import console, fail, out, say
from callbluff.datasets import DataError, load
from callbluff.filter_cli import filter_app
from callbluff.engine.suite import Suite, SuiteError, load_suite, parse_suite
from callbluff.gates import check_gates, gates_of_run, junit_xml, junit_xml_suites
from callbluff.report.load import ReportError
from callbluff.suites.kumar2020 import write_kumar2020_suite
from callbluff.terminal import RunProgress, StageProgress, counted, progress_interval, training_summary

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


@app.command("list")
def list_attacks(
    attack: Annotated[str | None, typer.Argument(help="an attack name: show its parameters, defaults and "
                                                      "citation")] = None,
    task: Annotated[str | None, typer.Option(help="only attacks for this task")] = None,
) -> None:
    """List the attacks (name, task, family, one-line description, paper), or one attack's parameters."""
    from callbluff.attacks.base import attack_classes, get_attack
    from callbluff.tasks import task_names

    if attack is not None:
        try:
            cls = get_attack(attack)
        except KeyError as e:
            fail(str(e.args[0]))
            raise
        _describe_attack(cls)
        return
    if task is not None and task not in task_names():
        fail(f"--task {task!r} is not a task; the tasks are: {', '.join(task_names())}")
    table = Table(title="callbluff attacks")
    for col in ("name", "task", "family", "description", "paper", "kind"):
        table.add_column(col)
    for cls in attack_classes():
        if task and cls.task != task:
            continue
        table.add_row(cls.name, cls.task, cls.family, cls.description, cls.paper,
                      "model-in-the-loop" if cls.model_in_the_loop else "static")
    out.print(table)


def _describe_attack(cls: Any) -> None:
    """One attack's card: what it is, its citation, kind, expectation, requirements and every parameter with its
    type, default and description (the docstring's first paragraph says what the paper leaves open)."""
    import inspect

    doc = inspect.getdoc(cls) or ""
    out.print(f"{cls.name} ({cls.task}, family {cls.family}, {cls.kind}): {cls.description}")
    out.print(f"paper: {cls.paper}")
    out.print(f"expect: {cls.expect} (what a robust system does; failure_pct counts the examples that fool it)")
    if cls.requires:
        out.print(f"requires: {', '.join(cls.requires)}")
    fields = cls.Params.model_fields
    described = any(f.description for f in fields.values())
    table = Table(title=f"{cls.name} parameters (--param key=value, or params = {{ ... }} in a suite)")
    for col in ("parameter", "type", "default", *(("description",) if described else ())):
        table.add_column(col)
    for name, f in fields.items():
        default = f.get_default(call_default_factory=True)
        table.add_row(name, _type_name(f.annotation), repr(getattr(default, "value", default)),
                      *((f.description or "",) if described else ()))
    out.print(table)
    params_doc = inspect.getdoc(cls.Params)
    if params_doc and params_doc != inspect.getdoc(BaseModel):
        out.print(params_doc)
    if doc:
        out.print(doc.split("\n\n")[0])


def _type_name(annotation: Any) -> str:
    """A parameter's type as a user writes it: ``float``, ``str | None``, one of the allowed values."""
    import enum
    import typing

    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(repr(m.value) for m in annotation)
    if args:
        return " | ".join(_type_name(a) for a in args)
    return "None" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def _parse_params(items: list[str] | None) -> dict[str, Any]:
    from callbluff.attacks.base import parse_params

    try:
        return parse_params(items or [])
    except ValueError as e:
        fail(str(e))
        raise


@app.command()
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
    from callbluff.engine.executor import make_executor
    from callbluff.engine.generate import AttackSpec, MissingResources
    from callbluff.engine.generate import generate as generate_chunks

    params = _parse_params(param)
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
    if ds.task != cls.task:
        fail(f"attack {cls.name} is for task {cls.task!r} but {data} is {ds.task!r}")
    try:
        pool = make_executor(executor, workers, ray_address)
    except ValueError as e:
        fail(str(e))
        raise
    out_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_file.with_name(out_file.name + ".tmp")
    n_ex = n_err = n_rec = 0
    with pool as ex:  # type: ignore[attr-defined]
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


    if quiet:
        return contextlib.nullcontext(None)

    def count() -> int:
        return sum(1 for _ in load(suite.dataset_spec(), **suite.dataset.options))

    return RunProgress(console, suite.output.chunk_size, count, limit if limit is not None else suite.limit)


REPORT_ROWS_PER_RUN = 10
"""Metric rows per run when ``callbluff report`` combines several (the whole summary fits about two screens)."""
METRIC_ROWS = 20
"""Metric rows the terminal prints per run (a summary that fits a screen; every row is in metrics.json and
report.html)."""


def summary_rows(rows: list[dict[str, Any]], max_rows: int = METRIC_ROWS) -> tuple[list[dict[str, Any]], int]:
    """The rows a terminal summary shows: each target's clean rows, then each attack configuration's pooled row
    (prompt ``all``, or its only prompt), worst failure share first (a share on fewer than the report's minimum
    of judged cases after the measured ones), at most ``max_rows`` in all; and how many rows of metrics.json are
    not shown."""
    from callbluff.render.text import num, pooled_rows
    from callbluff.report.scorecard import too_few

    clean = [r for r in rows if r.get("attack") == "clean"]
    if len(clean) > max(2, max_rows // 3):  # many prompts: the pooled clean rows, else the first few
        clean = [r for r in clean if r.get("prompt") == "all"] or clean[:max(2, max_rows // 3)]
    attacks = sorted(pooled_rows(rows), key=lambda r: (num(r.get("failure_pct")) is None, too_few(r),
                                                       -(num(r.get("failure_pct")) or 0.0), str(r["attack"]),
                                                       str(r["params"]), str(r["target"])))
    shown = (clean + attacks)[:max_rows]
    return shown, len(rows) - len(shown)


def print_metrics(rows: list[dict[str, Any]], title: str = "metrics", max_rows: int = METRIC_ROWS) -> None:
    """A compact metrics table: the clean rows and each attack configuration's pooled row, worst first, at most
    ``max_rows`` (:func:`summary_rows`); the rest are counted and named by file (all fields are in metrics.json
    and report.html)."""
    from callbluff.report.html import _fmt, short_params
    from callbluff.tasks import get_task

    if not rows:
        out.print("(no metric rows)")
        return
    shown, hidden = summary_rows(rows, max_rows)
    present = {k for r in shown for k, v in r.items() if v is not None}
    fields = [f for f in get_task(rows[0]["task"]).terminal_fields if f in present]
    table = Table(title=title)
    for col in ["attack", "params", "prompt", "target", *fields]:
        table.add_column(col, overflow="fold")
    for r in shown:
        table.add_row(str(r["attack"]), short_params(r["params"], str(r["attack"])), str(r["prompt"]), str(r["target"]),
                      *[_fmt(r.get(f)) for f in fields])
    out.print(table)
    if hidden:
        out.print(f"... and {hidden} more metric rows (per prompt, every field): metrics.json and report.html",
                  highlight=False)


EXIT_CODES = """Exit codes: 0 success; 1 a target failed: it answered none of its first inputs (the pre-flight stops
the run before any chunk, naming the cause), or the run finished but all of its predictions failed, or more
than --max-error-rate of them (the run directory is complete; see errors.jsonl); 2 bad input (suite, data,
options, a damaged run directory, a run that would measure nothing, a run directory in use by another run,
a local I/O error: the message names the file and the fix or cause); 3 a gate failed: a suite
\\[\\[expect]] table whose metric is outside its bounds (each gate is printed as PASS/FAIL; --junit FILE writes them
as JUnit XML)."""

GATE_FAILED = 3


def check_and_print_gates(run_dir: Path, junit: Path | None, suite_name: str) -> bool:
    """Print each ``[[expect]]`` gate of the run as PASS/FAIL (and write JUnit XML); True when all passed."""
    from callbluff.render.tables import load_metrics

    try:
        gates = gates_of_run(run_dir)
        results = check_gates(gates, load_metrics(run_dir)) if gates else []
    except (ValueError, FileNotFoundError) as e:
        fail(str(e))
        raise
    for r in results:
        tag = ("PASS", "bold green") if r.passed else ("FAIL", "bold red")
        say("gate ", tag, f" {r.name}" + ("" if r.passed else f": {r.message}"))
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(junit_xml(results, suite_name), encoding="utf-8")
        console.print(f"JUnit XML: {junit} ({len(results)} gates)", highlight=False)
    return all(r.passed for r in results)


JUNIT_HELP = "write the suite's \\[\\[expect]] gates as JUnit XML to this file (for CI)"  # escaped: rich markup


def print_provenance(result: Any) -> None:
    """One line per target: how many predictions were reused from an earlier run (and from when), how many asked
    now; a reused answer is never presented as fresh (``result``: a RunResult, or run.json as a dict)."""
    from callbluff.terminal import reuse_sentence

    preds = (result.get("predictions") if isinstance(result, dict) else getattr(result, "predictions", None)) or {}
    for name, p in preds.items():
        say(("predictions:", "cyan" if not p.get("reused") else "bold yellow"),
            f" {reuse_sentence(name if len(preds) > 1 else None, p)}")


def print_error_causes(result: Any) -> None:
    """The first distinct causes of failure with their counts, and how many other causes there are (errors.jsonl
    has every one)."""
    causes = result.counts.get("error_causes") or []
    if not causes:
        return
    total = result.counts.get("errors", sum(c["n"] for c in causes))
    say(("errors:", "bold red"), f" {total:,} in all; the most frequent causes:")
    for c in causes:
        who = f"{c['target']}: " if c.get("target") else ""
        console.print(f"  {c['n']:,} x {who}{c['cause']}", highlight=False, markup=False)
    distinct = _distinct_causes(getattr(result, "run_dir", None))
    shown = sum(c["n"] for c in causes)
    if distinct is not None and distinct > len(causes):
        console.print(f"  ... and {distinct - len(causes)} more distinct causes ({total - shown:,} errors): "
                      "errors.jsonl", highlight=False, markup=False)
    elif total > shown:
        console.print(f"  ... and {total - shown:,} more errors: errors.jsonl", highlight=False, markup=False)


def _distinct_causes(run_dir: Path | None) -> int | None:
    """Distinct (target, cause) pairs in a run's errors.jsonl (attack failures by attack and cause); None when
    there is no file to read."""
    path = Path(run_dir) / "errors.jsonl" if run_dir is not None else None
    if path is None or not path.exists():
        return None
    seen: set[tuple[str, str]] = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict):
                seen.add((str(e.get("target") or e.get("attack")), str(e.get("cause") or e.get("error"))))
    return len(seen)


def _finish_run(result: Any, out_dir: Path | None, max_error_rate: float, title: str, junit: Path | None = None,
                suite_name: str = "suite", report: bool = True, headline: list[str] | None = None) -> None:
    """Print a finished run's metrics (and ``headline`` lines), counts, provenance, notes, error causes, run
    directory (``out_dir``: None when the directory is not kept) and gates; exit 1 for a failed target, 3 for a
    failed gate."""
    print_metrics(result.metrics, title=title)
    for line in headline or ():
        say(("headline:", "bold"), f" {line}")
    c = result.counts
    console.print(f"counts: {c['records']} records, {c['examples']} adversarial examples, {c['predictions']} "
                  f"predictions; errors: {c['n_errors_original']} original, {c['n_errors_adversarial']} "
                  f"adversarial, {c['n_errors_generate']} attack failures", highlight=False)
    print_provenance(result)
    for note in result.notes:
        say(("note:", "yellow"), f" {note}")
    print_error_causes(result)
    if out_dir is not None:
        written = out_dir / "report.html"
        say("run directory: ", (str(out_dir), "bold"),
            f" (report: {written})" if report and written.exists() else " (no report: callbluff report DIR writes one)")
    gates_ok = check_and_print_gates(out_dir, junit, suite_name) if out_dir is not None else True
    problems = result.failed_targets(max_error_rate)
    if problems:
        for p in problems:
            if out_dir is None:  # no errors.jsonl to point at: the causes are printed above
                p = p.replace(" (see errors.jsonl)", "").replace("; see errors.jsonl", "")
            say(("failed:", "bold red"), f" {p}")
        raise typer.Exit(1)
    if not gates_ok:
        raise typer.Exit(GATE_FAILED)


@app.command(epilog=EXIT_CODES)
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
    from callbluff.engine.run import TargetUnavailable, run_suite
    from callbluff.engine.store import RunDirError, local_io_error
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
    _finish_run(result, out_dir, max_error_rate, f"{suite.name}: metrics", junit, suite.name)


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


def target_name(kind: str, value: str) -> str:
    """A target's name from ``--target TYPE:VALUE``: a saved model, model directory or file is named after it
    (``model:models/aes`` -> ``aes``, ``sklearn:clf.joblib`` -> ``clf``); other targets by their type."""
    if kind in ("model", "hf", "sklearn"):
        p = Path(value.rstrip("/\\"))
        return (p.stem if kind == "sklearn" else p.name) or kind
    return kind


def target_from_spec(spec: str, options: list[str] | None) -> dict[str, Any]:
    """``TYPE:VALUE`` (model:DIR, sklearn:FILE, hf:DIR, http:URL, openai:BASE_URL, command:"argv",
    callable:mod:attr)."""
    if ":" not in spec:
        fail(f"--target {spec!r}: expected TYPE:VALUE, e.g. model:models/content-scorer or http://host/score")
    kind, value = spec.split(":", 1)
    if kind in ("http", "https"):
        kind, value = "http", spec
    key = {"model": "path", "sklearn": "path", "hf": "model_dir", "http": "url", "openai": "base_url",
           "command": "argv", "callable": "function"}.get(kind)
    if key is None:
        fail(f"--target {spec!r}: unknown type {kind!r}; allowed: model, sklearn, hf, http(s), openai, command, "
             "callable")
    cfg: dict[str, Any] = {"name": target_name(kind, value), "type": kind, key: value}
    if kind == "command":
        import shlex

        cfg["argv"] = shlex.split(value)
    cfg.update(_parse_params(options))
    return cfg


@app.command(epilog=EXIT_CODES)
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

    from callbluff.engine.run import TargetUnavailable, run_suite
    from callbluff.engine.store import RunDirError
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
        _finish_run(result, run_dir if kept else None, max_error_rate, f"clean metrics on {data}",
                    headline=_headline_figures(result, suite))
    finally:
        if not kept:  # nothing is printed that points into it
            shutil.rmtree(run_dir, ignore_errors=True)


def _headline_figures(result: Any, suite: Any) -> list[str]:
    """One line per target: its task's headline figures on the clean data (:meth:`Task.headline_figures`)."""
    import pandas as pd

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


@app.command(epilog=EXIT_CODES)
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
    import webbrowser

    try:
        opened = webbrowser.open(path.resolve().as_uri())
    except webbrowser.Error:
        opened = False
    if not opened:
        say((f"no browser found here; open {path.resolve()} yourself", "yellow"))


REGRESSION_EXIT = 4
"""``callbluff compare --fail-on-regression``'s exit code when a compared column is worse on an attack."""


@app.command()
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
    from callbluff.compare import (as_csv, as_json, clean_line, difference_columns, row_differences, signed,
                                   test_sentence, value, verdict_counts, verdict_line, write_text)

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


annotate_app = typer.Typer(help="Human evaluation: annotation sheets out, Kumar Table 6 / DPAEG comprehension / "
                                "AddSent verification in.",
                           no_args_is_help=True)
app.add_typer(annotate_app, name="annotate")


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


suite_app = typer.Typer(help="Write a paper's whole protocol as an editable suite TOML.", no_args_is_help=True)
app.add_typer(suite_app, name="suite")

app.add_typer(filter_app, name="filter")


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
) -> None:
    """An LLM grader behind a chat endpoint: the seed bluffs of the task and the LLM-grader family."""
    from callbluff.suites.llm_grader import write_llm_grader_suite

    try:
        path = write_llm_grader_suite(out_file, task=task, data=data, base_url=base_url, model=model,
                                      api_key_env=api_key_env, response_format=response_format, variants=variants,
                                      n=samples, count=count, search_budget=search_budget, seed=seed,
                                      defences=defences)
    except ValueError as e:
        fail(str(e))
        raise
    _written_suite(path, "llm-grader", lambda suite: f", {len(suite.target)} chat target(s)")


@app.command()
def augment(
    source: Annotated[str, typer.Argument(help="a suite TOML (its attack grid) or attack names, e.g. "
                                               "AddSong,DelRand", metavar="SUITE_OR_ATTACKS")],
    data: Annotated[str, typer.Option(help="dataset spec of the essays to perturb (with gold scores)")],
    out_file: Annotated[Path, typer.Option("--out", help="output JSON-lines file of training rows")],
    penalty: Annotated[list[str] | None, typer.Option(help="ATTACK=PENALTY (repeatable), e.g. ModGrammar=2")] = None,
    penalties: Annotated[Path | None, typer.Option(help="TOML/JSON file: attack -> penalty")] = None,
    default_penalty: Annotated[float | None, typer.Option(help="penalty for attacks not named otherwise")] = None,
    unit: Annotated[str, typer.Option(help="penalty unit: points (of the prompt's scale, the paper's) or "
                                           "percent (of the prompt's score range)")] = "points",
    with_originals: Annotated[bool, typer.Option(help="also write the unmodified essays (attack 'original')")] = False,
    seed: Annotated[int, typer.Option(help="seed; each record derives its own generator from it")] = 0,
    limit: Annotated[int | None, typer.Option(help="only N records, taken across the prompts (the first of each)")] = None,
    workers: Annotated[int, typer.Option(help="worker processes")] = 1,
) -> None:
    """Adversarial training rows (Kumar et al. Sec. 4.2): target score = original score - penalty, clipped."""
    from callbluff.augment import Penalties, augment_rows, configs_from, read_penalties
    if unit not in ("points", "percent"):
        fail(f"--unit {unit!r}: allowed: points, percent")
    try:
        by_attack = read_penalties(penalties) if penalties else {}
        for item in penalty or []:
            if "=" not in item:
                fail(f"--penalty {item!r}: expected ATTACK=PENALTY, e.g. ModGrammar=2")
            k, v = item.split("=", 1)
            by_attack[k.strip()] = float(v)
        configs = configs_from(source)
        ds = load(data)
        errors: list[dict[str, Any]] = []
        out_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_file.with_name(out_file.name + ".tmp")
        n = 0
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in augment_rows(ds, configs, Penalties(by_attack, default_penalty, unit),  # type: ignore[arg-type]
                                    seed=seed, workers=workers, limit=limit, with_originals=with_originals,
                                    errors=errors):
                fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
                n += 1
        os.replace(tmp, out_file)
    except (SuiteError, DataError, FileNotFoundError, KeyError, ValueError) as e:
        fail(str(e.args[0]) if isinstance(e, KeyError) else str(e))
        raise
    for err in errors[:20]:
        say((f"{err['source_id']} {err['attack']}: {err['cause']}", "yellow"))
    console.print(f"{n} training rows -> {out_file}" + (f" ({len(errors)} attack failures)" if errors else ""))


TRAINABLE = ("content-scorer", "essay-scorer", "neural-scorer", "retriever", "sliding-window-qa")


@app.command()
def train(
    kind: Annotated[str, typer.Argument(help=f"one of {', '.join(TRAINABLE)}")],
    data: Annotated[str, typer.Option(help="training data spec (retriever: a SQuAD JSON spec or a text corpus)")],
    out_dir: Annotated[Path, typer.Option("--out", help="directory to save the model (with model.json metadata)")],
    prompt: Annotated[list[str] | None, typer.Option(help="only these prompt ids (repeatable)")] = None,
    param: Annotated[list[str] | None, typer.Option(help="model setting key=value (repeatable)")] = None,
    eval_data: Annotated[str | None, typer.Option(
        "--eval", help="held-out dataset spec: measure the saved model on it and store the figures in model.json")
    ] = None,
) -> None:
    """Train a reference system to attack (saved with its metadata and clean metrics)."""
    from callbluff.train import train_model

    if kind not in TRAINABLE:
        fail(f"unknown model kind {kind!r}; allowed: {', '.join(TRAINABLE)}")
    console.print(f"training {kind} on {data}" + (f", then measuring it on {eval_data}" if eval_data else ""),
                  highlight=False, markup=False)
    try:
        with StageProgress(console) as progress:
            summary = train_model(kind, data, out_dir, prompts=prompt or None, eval_spec=eval_data,
                                  progress=progress, **_parse_params(param))
    except (ValueError, FileNotFoundError, TypeError) as e:
        fail(str(e))
        raise
    for line in training_summary(kind, str(out_dir), summary):
        console.print(line, highlight=False, markup=False)


@app.command()
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


@app.command()
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


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
