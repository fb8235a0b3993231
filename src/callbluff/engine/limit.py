"""``limit``: a run on part of a dataset takes its records across the dataset's prompts, not the first rows of
the file (ASAP files are sorted by prompt, so the first 300 rows of prompts 1 and 2 are all prompt 1's).

:func:`limited` reads the records' prompt ids once, shares ``limit`` out over the prompts as evenly as their
sizes allow (water-filling: a prompt with fewer records than its share gives the rest to the others; the
remainder of an uneven split goes to the prompts first in their natural order), and takes each prompt's share
from the start of that prompt's records in file order (deterministic, no random choice: the same records for the
same data and limit, as before for a dataset of one prompt). The result is a re-iterable view in file order, so
the engine's fit step and its chunks read the same records. Records without a prompt (reading, questions) are
one group: the first ``limit`` records, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from callbluff.records import Record


def _natural(pid: str | None) -> tuple[int, int | str]:
    s = "" if pid is None else str(pid)
    return (0, int(s)) if s.isdigit() else (1, s)


def shares(sizes: dict[str | None, int], limit: int) -> dict[str | None, int]:
    """How many records each prompt gives to a ``limit``: as even as the prompts' ``sizes`` allow."""
    out = {p: 0 for p in sizes}
    left = min(limit, sum(sizes.values()))
    open_ = sorted((p for p in sizes if sizes[p] > 0), key=_natural)
    while left > 0 and open_:
        each, extra = divmod(left, len(open_))
        for i, p in enumerate(open_):
            take = min(each + (1 if i < extra else 0), sizes[p] - out[p])
            out[p] += take
            left -= take
        open_ = [p for p in open_ if out[p] < sizes[p]]
    return out


class Limited:
    """The records a ``limit`` takes (see the module docstring), re-iterable in file order; ``per_prompt`` says
    how many each prompt gave."""

    def __init__(self, records: Iterable[Record], limit: int) -> None:
        self.records = records
        sizes: dict[str | None, int] = {}
        for r in records:
            pid = getattr(r, "prompt_id", None)
            sizes[pid] = sizes.get(pid, 0) + 1
        self.per_prompt = shares(sizes, limit)
        self.total = sum(self.per_prompt.values())

    def __iter__(self) -> Iterator[Record]:
        left = dict(self.per_prompt)
        remaining = self.total
        for r in self.records:
            if remaining == 0:
                return
            pid = getattr(r, "prompt_id", None)
            if left.get(pid, 0) > 0:
                left[pid] -= 1
                remaining -= 1
                yield r

    def describe(self) -> str:
        """What the limit took, per prompt (for the terminal and run.json's notes)."""
        named = [(p, n) for p, n in sorted(self.per_prompt.items(), key=lambda kv: _natural(kv[0])) if p is not None]
        if not named:
            return f"--limit took the first {self.total} records"
        taken = [f"{n} of prompt {p}" for p, n in named if n]
        shown = taken[:DESCRIBE_PROMPTS] + ([f"and {len(taken) - DESCRIBE_PROMPTS} more prompts"]
                                            if len(taken) > DESCRIBE_PROMPTS else [])
        none = len(named) - len(taken)
        return (f"--limit took {self.total} records across the prompts: " + ", ".join(shown)
                + (f" (none of the other {none} prompt{'s' if none != 1 else ''})" if none else ""))


DESCRIBE_PROMPTS = 8
"""Prompts :meth:`Limited.describe` names one by one (a note that fits a line; the rest are counted)."""


def limited(records: Iterable[Record], limit: int | None) -> Iterable[Record]:
    """``records`` under ``limit`` (None: all of them): the first ``limit`` records of a dataset that declares at
    most one prompt (no counting pass needed), else a :class:`Limited` view."""
    if limit is None:
        return records
    prompts = getattr(records, "prompts", None)
    if prompts is not None and len(prompts) <= 1:
        return _First(records, limit)
    return Limited(records, limit)


class _First:
    """The first ``limit`` records, re-iterable."""

    def __init__(self, records: Iterable[Record], limit: int) -> None:
        self.records, self.limit = records, limit

    def __iter__(self) -> Iterator[Record]:
        return islice(iter(self.records), self.limit)
