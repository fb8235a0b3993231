"""``callbluff list``: the attack catalogue (name, task, family, description, paper) and one attack's card.

The registry is read without loading what the attacks run on: an attack module imports spaCy, torch and the like
inside the functions that use them, so listing the attacks stays under a second (the lazy-import rule of
:mod:`callbluff.cli`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from callbluff.console import fail, out

commands = typer.Typer()


@commands.command("list")
def list_attacks(
    attack: Annotated[str | None, typer.Argument(help="an attack name: show its parameters, defaults and "
                                                      "citation")] = None,
    task: Annotated[str | None, typer.Option(help="only attacks for this task")] = None,
) -> None:
    """List the attacks (name, task, family, one-line description, paper), or one attack's parameters."""
    from callbluff.attacks.base import attack_classes, get_attack

    if attack is not None:
        try:
            cls = get_attack(attack)
        except KeyError as e:
            fail(str(e.args[0]))
            raise
        _describe_attack(cls)
        return
    if task is not None:
        from callbluff.tasks import task_names  # the tasks' metric code (pandas): only when --task is given

        if task not in task_names():
            fail(f"--task {task!r} is not a task; the tasks are: {', '.join(task_names())}")
    table = Table(title="callbluff attacks")
    for col in ("name", "task", "family", "description", "paper", "kind"):
        table.add_column(col)
    for cls in attack_classes():
        if task and not cls.serves(task):
            continue
        table.add_row(cls.name, ", ".join(cls.served()), cls.family, cls.description, cls.paper,
                      "model-in-the-loop" if cls.model_in_the_loop else "static")
    out.print(table)


def _describe_attack(cls: Any) -> None:
    """One attack's card: what it is, its citation, kind, expectation, requirements and every parameter with its
    type, default and description (the docstring's first paragraph says what the paper leaves open)."""
    import inspect

    from pydantic import BaseModel

    doc = inspect.getdoc(cls) or ""
    out.print(f"{cls.name} ({', '.join(cls.served())}, family {cls.family}, {cls.kind}): {cls.description}")
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
