"""Adversarial training data (Kumar et al. 2020, Sec. 4.2): adversarial essays scored original - penalty.

"The target scores of adversarial samples was set as the original score minus the mean difference of scores
between original and human annotated scores. For example [...] for the ModGrammar case, the mean difference
was 2 points below the original score, so all the samples were scored as original scores minus 2 points."

:func:`augment_rows` makes the examples of chosen attack configurations through the engine's one generation path
(:func:`callbluff.engine.generate.generate`, so the bytes do not depend on the number of workers) and gives each a
training ``score``:

- ``lower`` attacks (Add/Del/Mod): the source's gold score minus the attack's penalty, clipped to the
  prompt's scale; the penalty is in score ``points`` (the paper's unit) or ``percent`` of the prompt's range
  (comparable across prompts whose scales differ, e.g. ASAP-AES 2-12 and 0-60);
- ``bottom`` generators (BabelGen): the prompt's scale minimum (a robust scorer's answer, Sec. 3.4);
- any other expectation (benign changes): the original score.

Where the paper is silent: penalties come per attack name from a mapping (a TOML/JSON file or flags), with
an optional default; an attack without one is an error naming it. Each row keeps its provenance (source id,
attack, params, original score, penalty). ``with_originals`` adds the unmodified records (the paper's train
data "consisted of an equal number of original samples and adversarial samples").
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from callbluff.attacks.base import Attack, SearchAttack, get_attack
from callbluff.datasets.base import Dataset
from callbluff.engine.executor import LocalExecutor
from callbluff.engine.generate import AttackSpec, MissingResources, generate
from callbluff.engine.limit import limited
from callbluff.engine.suite import load_suite
from callbluff.records import Perturbed, Prompt, ScoredResponse, canonical_json
from callbluff.tasks import get_task

Unit = Literal["points", "percent"]


@dataclass(frozen=True)
class Penalties:
    """Score penalty per attack name (case-insensitive), ``default`` for the others, in ``unit``."""

    by_attack: Mapping[str, float]
    default: float | None = None
    unit: Unit = "points"

    def of(self, attack: str) -> float:
        for k, v in self.by_attack.items():
            if k.lower() == attack.lower():
                return float(v)
        if self.default is None:
            raise ValueError(f"no penalty for attack {attack}: give one (`--penalty {attack}=2`, or a line "
                             f"`{attack} = 2` in the penalties file) or a default (`--default-penalty 2`)")
        return float(self.default)

    def points(self, attack: str, prompt: Prompt) -> float:
        """The penalty of ``attack`` in score points of ``prompt``'s scale."""
        p = self.of(attack)
        return p * prompt.score_range / 100.0 if self.unit == "percent" else p


def read_penalties(path: Path | str) -> dict[str, float]:
    """Attack -> penalty from a TOML or JSON file holding a flat mapping (``ModGrammar = 2``), or a table
    ``[penalty]`` of one."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: penalties file not found")
    text = p.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'TOML'}: {e}") from None
    if isinstance(data, dict) and isinstance(data.get("penalty"), dict):
        data = data["penalty"]
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a mapping attack -> penalty, e.g. ModGrammar = 2")
    out = {}
    for k, v in data.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError(f"{p}: key {k!r}: penalty must be a number, got {v!r}")
        out[str(k)] = float(v)
    return out


def training_score(attack: Attack, original: float | None, prompt: Prompt, penalties: Penalties) -> float | None:
    """The training target of one example of ``attack`` (see the module docstring); None without a gold score."""
    if attack.expect == "bottom":
        return float(prompt.score_min)
    if original is None:
        return None
    if attack.expect != "lower":
        return float(original)
    score = float(original) - penalties.points(attack.name, prompt)
    return min(max(score, float(prompt.score_min)), float(prompt.score_max))


def _row(ex: Perturbed, score: float, original: float | None, penalty: float | None) -> dict[str, Any]:
    return {"id": ex.id, "prompt_id": ex.prompt_id, "text": ex.text, "score": score, "source_id": ex.source_id,
            "attack": ex.attack, "params": dict(ex.params), "original_score": original, "penalty": penalty}


def augment_rows(ds: Dataset, configs: Sequence[tuple[str, Mapping[str, Any]]], penalties: Penalties, *,
                 seed: int = 0, workers: int = 1, limit: int | None = None, with_originals: bool = False,
                 chunk_size: int = 256, errors: list[dict[str, Any]] | None = None) -> Iterator[dict[str, Any]]:
    """Training rows for attack configurations ``configs`` ((name, params) pairs) on ``ds``.

    Static attacks run over record chunks, prompt-level generators over their ``count`` answers per prompt;
    attacks that fit learn once per prompt on the records read (like ``callbluff generate``). Attack failures
    are appended to ``errors`` (never a crash). Raises ValueError for search attacks (they need a target), a
    task other than essay/content scoring, or an attack without a penalty (checked before any work)."""
    if not get_task(ds.task).scoring:
        raise ValueError(f"augment writes scored training rows: {ds.spec} is task {ds.task!r}, not essay/content")
    specs: list[AttackSpec] = []
    instances: dict[AttackSpec, Attack] = {}
    for name, params in configs:
        cls = get_attack(name)
        inst = cls(**dict(params))
        if isinstance(inst, SearchAttack):
            raise ValueError(f"{cls.name} is model-in-the-loop: it needs a target; augment takes static attacks "
                             "and prompt-level generators")
        if not cls.serves(ds.task):
            raise ValueError(f"attack {cls.name} is for task {' or '.join(map(repr, cls.served()))} but {ds.spec} "
                             f"is {ds.task!r}")
        if inst.expect == "lower":
            penalties.of(cls.name)
        spec = AttackSpec.make(cls.name, params)
        specs.append(spec)
        instances[spec] = inst
    records = list(limited(ds, limit))  # across the prompts (callbluff.engine.limit)
    gold = {r.id: (r.gold if isinstance(r, ScoredResponse) else None) for r in records}
    with_records = {r.prompt_id for r in records}
    by_params = {(i.name, canonical_json(i.params_dict)): i for i in instances.values()}

    def rows_of(examples: Sequence[Perturbed]) -> Iterator[dict[str, Any]]:
        for ex in examples:
            inst = by_params[(ex.attack, canonical_json(dict(ex.params)))]
            prompt = ds.prompts[str(ex.prompt_id)]
            original = gold.get(ex.source_id)
            score = training_score(inst, original, prompt, penalties)
            if score is None:
                continue
            pen = penalties.points(inst.name, prompt) if inst.expect == "lower" else None
            yield _row(ex, score, original, pen)

    with LocalExecutor(workers) as ex:
        try:  # resources are checked and every configuration fitted before the first row
            chunks = generate(specs, records, ds.prompts, seed=seed, executor=ex, chunk_size=chunk_size,
                              prompt_ids=with_records, ahead=False)
        except MissingResources as e:
            raise ValueError(str(e)) from None
        if with_originals:
            for r in records:
                if r.gold is not None:
                    yield {"id": r.id, "prompt_id": r.prompt_id, "text": r.text, "score": float(r.gold),
                           "source_id": r.id, "attack": "original", "params": {}, "original_score": float(r.gold),
                           "penalty": None}
        for chunk in chunks:
            if errors is not None:
                errors.extend(chunk.errors)
            yield from rows_of(chunk.examples)


def configs_from(source: str) -> list[tuple[str, dict[str, Any]]]:
    """Attack configurations from a suite TOML (every grid point of every ``[[attack]]``) or a comma-separated
    list of attack names (default parameters)."""
    p = Path(source)
    if p.suffix.lower() == ".toml" or p.exists():
        suite = load_suite(p)
        return [(a.name, point) for a in suite.attack for point in a.expand()]
    names = [n.strip() for n in source.split(",") if n.strip()]
    if not names:
        raise ValueError(f"{source!r}: expected a suite TOML file or attack names, e.g. AddSong,DelRand")
    return [(n, {}) for n in names]
