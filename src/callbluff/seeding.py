"""Per-record randomness (DESIGN.md "Randomness").

Every random choice derives from ``(seed, record id, attack name, params)`` through a stable hash, never
from global state, so outputs do not depend on order, chunking, number of workers or executor: the same
seed gives the same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from callbluff.records import canonical_json


def derive_seed(seed: int, *parts: Any) -> int:
    """A 128-bit integer derived from ``seed`` and ``parts`` (ids, names, param dicts) by SHA-256."""
    text = canonical_json([int(seed), *[dict(p) if isinstance(p, Mapping) else p for p in parts]])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")


def record_rng(seed: int, record_id: str, attack: str, params: Mapping[str, Any]) -> np.random.Generator:
    """The generator for one (seed, record, attack, params): the only source of randomness of an attack."""
    return np.random.default_rng(derive_seed(seed, record_id, attack, dict(params)))


def prompt_rng(seed: int, prompt_id: str, attack: str, params: Mapping[str, Any], i: int) -> np.random.Generator:
    """The generator for answer ``i`` of a prompt-level generator (Ding et al. 2020 Sec. 2.2 random / n-gram /
    burst answers, Kumar et al. 2020 Sec. 3.4 BabelGen): derived from (seed, prompt, attack, params, i) only,
    so splitting a prompt's ``count`` answers across chunks or workers gives the same bytes. The ``"prompt"``
    marker keeps these streams apart from :func:`record_rng`'s even when a record id equals a prompt id."""
    return np.random.default_rng(derive_seed(seed, "prompt", prompt_id, attack, dict(params), int(i)))
