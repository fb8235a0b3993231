"""Suites: a TOML file saying which data, which targets, which attacks (with parameter grids), which seed.

Example (see ``examples/*.toml``)::

    name = "content-shuffle"
    seed = 7
    limit = 500                       # optional: N records, taken across the prompts

    [dataset]
    spec = "asap-sas:../data/train.tsv.gz?prompts=1,2"   # paths are relative to this file

    [[target]]
    name = "shallow"
    type = "model"                    # a registered type: callbluff.targets.target_types()
    path = "../models/content-scorer"

    [[attack]]
    name = "Shuffle"
    params = { tokenizer = "spacy" }  # fixed parameters
    grid = { min_score = [2, 3] }     # each grid point is one configuration

    [output]
    chunk_size = 1000

    [[expect]]                        # a CI gate (callbluff.gates): checked by `callbluff run` and `report`
    attack = "Shuffle"
    metric = "arr"
    min = 80                          # and/or max; optional: target = "shallow", prompt = "1"

Validation errors name the key and say what is allowed.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, field_validator

from callbluff.datasets.base import parse_spec
from callbluff.gates import ExpectConfig
from callbluff.metrics.fields import metric_field
from callbluff.records import canonical_json
from callbluff.resources.local_llm import identity_of
from callbluff.engine.target_factory import validate_target_config  # registers `model` beside the adapters' types
from callbluff.targets.config import TargetSettings
from callbluff.tasks import all_tasks


class SuiteError(ValueError):
    """A suite that cannot run: the message names the file, the key and the fix."""


class DatasetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    spec: str = Field(description="dataset spec NAME:PATH[?options], e.g. asap-sas:train.tsv.gz")
    options: dict[str, Any] = Field(default_factory=dict)


class AttackConfig(BaseModel):
    """One ``[[attack]]`` table: a registered attack, fixed ``params``, a ``grid`` (each point one configuration).

    ``query_budget`` (model-in-the-loop attacks only) is a shortcut for ``params.query_budget``: queries one record
    may cost. ``fit_on`` (attacks that fit, e.g. prompt-level generators) is a dataset spec whose records, per
    prompt, the attack learns from (e.g. a train split); default: the run's own records of that prompt.
    """

    model_config = ConfigDict(extra="forbid")
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    query_budget: int | None = Field(None, ge=1, description="queries a model-in-the-loop attack may spend per record")
    fit_on: str | None = Field(None, description="dataset spec the attack fits on (per prompt)")

    def expand(self) -> list[dict[str, Any]]:
        """One parameter dict per grid point (the cartesian product of ``grid`` over ``params``)."""
        base = dict(self.params)
        if self.query_budget is not None:
            base.setdefault("query_budget", self.query_budget)
        if not self.grid:
            return [base]
        keys = sorted(self.grid)
        points = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            points.append({**base, **dict(zip(keys, values))})
        return points


class OutputConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_size: int = Field(1000, ge=1, description="records per chunk (the unit of streaming and resume)")
    batch_size: int = Field(64, ge=1, description="inputs per target call")
    search_concurrency: int = Field(8, ge=1, description="model-in-the-loop searches run at once (threads sharing "
                                                         "the cached target; the target's own concurrency still "
                                                         "bounds the calls in flight)")
    cache: str | None = Field(None, description="prediction cache path shared across runs "
                                                "(default: predictions.sqlite in the run directory)")
    report: bool = True
    preflight: bool = Field(True, description="before the first chunk, each target answers one of the run's first "
                                              "inputs or the run stops with the cause (exit 1)")
    examples_in_report: int = Field(200, ge=0, strict=True,
                                    description="examples per attack configuration embedded in report.html's "
                                                "example browser (a deterministic sample; 0: none)")


IDENTITY_KEYS = ("fingerprint", "version", "max_consecutive_failures")
"""Keys of a ``[[target]]`` table left out of :meth:`Suite.fingerprint` (``fingerprint`` is kept as None, so a
suite that declares none has the fingerprint it had before these keys existed)."""


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "suite"
    seed: int = 0
    limit: int | None = Field(None, ge=1)
    dataset: DatasetConfig
    target: list[SerializeAsAny[TargetSettings]] = Field(
        default_factory=list, description="systems under test; each table is validated by the settings model its "
        "type is registered with (callbluff.targets.config.register_target)")
    attack: list[AttackConfig] = Field(default_factory=list)
    output: OutputConfig = Field(default_factory=OutputConfig)
    expect: list[ExpectConfig] = Field(default_factory=list, description="CI gates on metric rows")
    base_dir: str = Field(".", description="directory relative paths resolve against (set by load_suite)")

    @field_validator("target", mode="before")
    @classmethod
    def _target_tables(cls, v: Any) -> Any:
        """Each table by its registered type's settings model (parse_suite has checked them with their index)."""
        if isinstance(v, list):
            return [validate_target_config(t, f"target[{i}]") if isinstance(t, dict) else t for i, t in enumerate(v)]
        return v

    def resolve(self, path: str) -> str:
        """``path`` made absolute against the suite file's directory (absolute paths pass through)."""
        p = Path(path).expanduser()
        return str(p if p.is_absolute() else (Path(self.base_dir) / p).resolve())

    def resolve_spec(self, spec: str) -> str:
        """A dataset spec with its path resolved against the suite file (built-in ``demo:...`` unchanged)."""
        name, path, _ = parse_spec(spec)
        if name == "demo" or not path:
            return spec
        return f"{name}:{self.resolve(path)}{spec.split(':', 1)[1][len(path):]}"

    def dataset_spec(self) -> str:
        """The run's dataset spec with its path resolved (see :meth:`resolve_spec`)."""
        return self.resolve_spec(self.dataset.spec)

    def fingerprint(self) -> str:
        """What must match for a run directory to be resumed (everything that changes the results), except the
        targets' identity keys (``IDENTITY_KEYS``): a target whose identity changed is the same suite asked again
        (the engine recomputes its chunks, and the prediction cache, keyed by the identity, has nothing for it),
        and the circuit breaker's bound, which changes no valid prediction."""
        d = self.model_dump(exclude={"base_dir", "output", "expect"})  # gates do not change results
        for t in d["target"]:  # a target's identity is not the suite: a new version is asked again, not refused
            t.update(fingerprint=None)
            if t.get("type") == "openai" and isinstance(t.get("base_url"), str):
                # a LocalLLMServer restarted on another port is the same server (model file + settings)
                t["base_url"] = identity_of(t["base_url"]) or t["base_url"]
            for key in IDENTITY_KEYS[1:]:
                t.pop(key, None)
        d["dataset_spec"] = self.dataset_spec()
        d["chunk_size"] = self.output.chunk_size
        return hashlib.sha256(canonical_json(d).encode()).hexdigest()[:16]


def _format_validation(path: str, e: ValidationError) -> str:
    lines = []
    for err in e.errors():
        loc = ".".join(str(x) if not isinstance(x, int) else f"[{x}]" for x in err["loc"]).replace(".[", "[")
        lines.append(f"  key `{loc or '(top level)'}`: {err['msg']}")
    allowed = ", ".join(sorted(Suite.model_fields))
    return f"{path}: invalid suite:\n" + "\n".join(lines) + f"\n(top-level keys allowed: {allowed})"


def parse_suite(data: dict[str, Any], *, source: str = "<suite>", base_dir: str | Path = ".") -> Suite:
    all_tasks()  # the tasks (entry points too) first: their input slots are template fields of the targets
    targets = data.get("target", [])
    if isinstance(targets, list):  # each [[target]] table first, by its adapter's model: errors name the key
        for i, t in enumerate(targets):
            try:
                validate_target_config(t, f"target[{i}]")
            except ValueError as e:
                raise SuiteError(f"{source}: {e}") from None
            if isinstance(t, dict) and not t.get("name"):
                raise SuiteError(f"{source}: key `target[{i}].name`: every target needs a name (it labels its rows "
                                 "in metrics.json and the report), e.g. name = \"my-scorer\"")
    try:
        suite = Suite(**{**data, "base_dir": str(Path(base_dir).resolve())})
    except ValidationError as e:
        raise SuiteError(_format_validation(source, e)) from None
    _check_attacks(suite, source)
    _check_expectations(suite, source)
    return suite


def _check_attacks(suite: Suite, source: str) -> None:
    from callbluff.attacks.base import get_attack

    for i, a in enumerate(suite.attack):
        try:
            cls = get_attack(a.name)
        except KeyError as e:
            raise SuiteError(f"{source}: key `attack[{i}].name`: {e.args[0]}") from None
        if a.query_budget is not None and cls.kind != "search":
            raise SuiteError(f"{source}: key `attack[{i}].query_budget`: {cls.name} is not model-in-the-loop "
                             "(it never queries the target); remove the key")
        for point in a.expand():
            try:
                cls(**point)
            except ValueError as e:
                raise SuiteError(f"{source}: key `attack[{i}]` ({a.name}): {e}") from None
        for key, values in sorted(a.grid.items()):
            if not values:  # the cartesian product is empty: the attack would silently make nothing
                raise SuiteError(f"{source}: key `attack[{i}].grid.{key}` ({a.name}): an empty list, so the grid has "
                                 "no point and the attack would measure nothing; give it at least one value or "
                                 "remove the key")
    names = [t.name for t in suite.target]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SuiteError(f"{source}: key `target[].name`: names must be unique, repeated: {', '.join(sorted(dup))}")


def _check_expectations(suite: Suite, source: str) -> None:
    """``[[expect]]`` names an attack of the suite (or ``clean``), a known metric field and at least one bound."""
    attacks = sorted({a.name for a in suite.attack})
    metrics = sorted({f for spec in all_tasks() for f in (*spec.fields, *spec.clean_fields)
                      if (fld := metric_field(f)) is None or fld.unit != "label"})
    targets = [t.name for t in suite.target]
    for i, e in enumerate(suite.expect):
        if e.attack != "clean" and e.attack not in attacks:
            raise SuiteError(f"{source}: key `expect[{i}].attack`: {e.attack!r} is not an attack of this suite; "
                             f"allowed: {', '.join(['clean', *attacks])}")
        if e.metric not in metrics:
            close = difflib.get_close_matches(e.metric, metrics, n=1)
            raise SuiteError(f"{source}: key `expect[{i}].metric`: unknown metric {e.metric!r}"
                             + (f" (did you mean {close[0]!r}?)" if close else "")
                             + f"; allowed: {', '.join(metrics)}")
        if e.min is None and e.max is None:
            raise SuiteError(f"{source}: key `expect[{i}]`: give `min`, `max` or both, e.g. max = 20")
        if e.min is not None and e.max is not None and e.min > e.max:
            raise SuiteError(f"{source}: key `expect[{i}]`: min {e.min:g} is above max {e.max:g}")
        if e.target is not None and targets and e.target not in targets:
            raise SuiteError(f"{source}: key `expect[{i}].target`: no target named {e.target!r}; allowed: "
                             f"{', '.join(targets)}")


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite TOML file."""
    p = Path(path)
    if not p.exists():
        raise SuiteError(f"{p}: suite file not found")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SuiteError(f"{p}: not valid TOML: {e}") from None
    return parse_suite(data, source=str(p), base_dir=p.parent)
