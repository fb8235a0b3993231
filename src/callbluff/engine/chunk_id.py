"""Chunk ids: record chunks and prompt-level generator pieces, each kind numbered from 0 in its own id space.

A run's work comes in two kinds of chunk (docs/design.md "Data flow"): record chunks (``output.chunk_size``
records with their static examples and searches) and generator pieces (up to ``chunk_size`` answers of one
prompt-level generator for one prompt). A :class:`ChunkId` is ``(kind, n)``; its parts in ``RUN/parts/`` are named
by :attr:`ChunkId.stem`: ``NNNNNN`` for record chunk ``n`` (as before), ``gNNNNNN`` for generator piece ``n``.

Run directories written before generator pieces had their own id space numbered them as chunks from 900,000
(:data:`LEGACY_GENERATOR0`); :func:`legacy_generator_stem` reads such a name so that the store can rename the
parts (``RunDir.adopt_legacy_parts``) and the run resumes as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ChunkKind = Literal["records", "generator"]

LEGACY_GENERATOR0 = 900_000
"""Where run directories of callbluff up to this change numbered generator pieces in the record chunks' space."""

_STEM = re.compile(r"(g?)(\d{6,})")


@dataclass(frozen=True)
class ChunkId:
    """One chunk of a run: ``kind`` (``records`` | ``generator``) and its number ``n`` within that kind."""

    kind: ChunkKind
    n: int

    @classmethod
    def records(cls, n: int) -> ChunkId:
        return cls("records", n)

    @classmethod
    def generator(cls, n: int) -> ChunkId:
        return cls("generator", n)

    @classmethod
    def of(cls, chunk: ChunkId | int) -> ChunkId:
        """``chunk`` as a chunk id; a plain number is a record chunk."""
        return chunk if isinstance(chunk, ChunkId) else cls.records(int(chunk))

    @classmethod
    def parse(cls, stem: str) -> ChunkId | None:
        """The chunk named by a part's file-name stem (``000007``, ``g000003``), or None."""
        m = _STEM.fullmatch(stem)
        if m is None:
            return None
        return cls("generator" if m.group(1) else "records", int(m.group(2)))

    @property
    def is_generator(self) -> bool:
        return self.kind == "generator"

    @property
    def stem(self) -> str:
        """The file-name stem of the chunk's parts."""
        return f"{'g' if self.is_generator else ''}{self.n:06d}"

    def sort_key(self) -> tuple[int, int]:
        """Record chunks first, then generator pieces, each in number order (the order a run makes them)."""
        return (self.is_generator, self.n)

    def __str__(self) -> str:
        return f"{'generator piece' if self.is_generator else 'chunk'} {self.n}"


def legacy_generator_stem(stem: str) -> ChunkId | None:
    """The generator piece a part named in the old shared numbering stands for (``900003`` -> generator piece 3),
    or None for any other name."""
    m = _STEM.fullmatch(stem)
    if m is None or m.group(1) or int(m.group(2)) < LEGACY_GENERATOR0:
        return None
    return ChunkId.generator(int(m.group(2)) - LEGACY_GENERATOR0)
