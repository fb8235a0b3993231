"""``callbluff augment`` and ``train``: adversarial training rows and the reference systems to attack.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the models, the attacks' generators and the data are
imported inside the commands."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from callbluff.cli.common import parse_params
from callbluff.console import console, fail, say
from callbluff.terminal import StageProgress, training_summary

commands = typer.Typer()


@commands.command()
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
    from callbluff.countermeasures.augment import Penalties, augment_rows, configs_from, read_penalties
    from callbluff.datasets import DataError, load
    from callbluff.engine.suite import SuiteError

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


@commands.command()
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
                                  progress=progress, **parse_params(param))
    except (ValueError, FileNotFoundError, TypeError) as e:
        fail(str(e))
        raise
    for line in training_summary(kind, str(out_dir), summary):
        console.print(line, highlight=False, markup=False)
