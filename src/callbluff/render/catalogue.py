"""What the tables and the report know of an attack: its family, its paper and its parameter defaults.

A run records them for each of its attacks in run.json (``attacks[i]``: ``family``, ``paper``, ``defaults``;
:meth:`callbluff.attacks.base.Attack.describe`), so a report renders the run as it was made: on a machine
without the plugin that registered an attack, or after an attack's defaults changed, its rows keep their family,
paper and short parameter labels. :func:`reading_runs` puts the runs' records in force while a report is rendered
(:func:`callbluff.report.html.render_report`); outside it, and for an attack a run does not describe (runs made
before the record existed), :func:`attack_meta` asks the registry of this process, and ``None`` means the attack
is known to neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

_RUNS: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar("callbluff_run_attacks", default=None)


@contextmanager
def reading_runs(metas: Iterable[Mapping[str, Any]]) -> Iterator[None]:
    """While the block runs, :func:`attack_meta` reads the attacks described in these run.json objects first (the
    first run that describes an attack wins)."""
    table: dict[str, dict[str, Any]] = {}
    for meta in metas:
        for a in meta.get("attacks") or []:
            if isinstance(a, Mapping) and a.get("name") and "family" in a:
                table.setdefault(str(a["name"]), {"family": a.get("family"), "paper": a.get("paper"),
                                                  "defaults": dict(a.get("defaults") or {})})
    token = _RUNS.set(table)
    try:
        yield
    finally:
        _RUNS.reset(token)


@lru_cache(maxsize=512)
def _registered(name: str) -> dict[str, Any] | None:
    from callbluff.attacks.base import get_attack  # attack metadata only: the report does not load a run's attacks

    try:
        return get_attack(name).describe()
    except KeyError:
        return None


def attack_meta(name: str) -> dict[str, Any] | None:
    """``{"family", "paper", "defaults"}`` of attack ``name``: from the runs being rendered, else from the
    registry, else None."""
    run = _RUNS.get()
    if run and name in run:
        return run[name]
    return _registered(name)
