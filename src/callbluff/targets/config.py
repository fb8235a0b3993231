"""Target settings and the target registry: the base every adapter's settings model extends, and the one place
a ``[[target]]`` table is checked.

Each adapter's settings model lives beside the adapter (``HttpConfig`` in :mod:`~callbluff.targets.http_target`,
``OpenAIConfig`` in :mod:`~callbluff.targets.openai_target`, ``CallableConfig`` in
:mod:`~callbluff.targets.callables`, ``SklearnConfig`` in :mod:`~callbluff.targets.sklearn_target`,
``CommandConfig`` in :mod:`~callbluff.targets.command`, ``HFConfig`` in :mod:`~callbluff.targets.hf`; the chat keys
shared by ``openai`` and ``hf`` in :class:`callbluff.targets.chat.ChatReading`), registered with its type. A suite's
``[[target]]`` table is validated once, by the settings model its ``type`` is registered with (errors name the key
and say what is allowed), and the adapter takes that validated model itself (``HttpTarget(HttpConfig(...))``);
Python users' keyword arguments (``HttpTarget(url, concurrency=8)``) go through the same model. Every table has
``type``, an optional ``name``, an optional ``fingerprint`` (override the adapter's default identity), an optional
``version`` (added to the identity: bump it after a redeploy), ``max_consecutive_failures`` (the circuit breaker:
20 failed predictions in a row stop the target; 0 never), ``output`` (what the target returns: ``score``,
``answer``, ``both`` or ``auto`` = what the task needs), ``out_of_range`` (``error`` or ``clip``) and ``filter``
(:class:`TargetSettings`), plus the keys of its type's settings model.

**The target registry.** A target type is ``register_target(type, config_cls, factory)``: its settings model (a
:class:`TargetSettings` subclass) and ``factory(config, base_dir) -> Target``. The list of types is the registry
(:func:`target_types`); nothing else spells it. The built-in types register themselves in their adapter modules,
which are loaded on the first lookup (:data:`BUILTIN_MODULES`, like the entry points below): ``callable``
(:mod:`~callbluff.targets.callables`), ``sklearn`` (:mod:`~callbluff.targets.sklearn_target`), ``http``
(:mod:`~callbluff.targets.http_target`), ``openai`` (:mod:`~callbluff.targets.openai_type`: the chat target, with
its grader defences), ``command`` (:mod:`~callbluff.targets.command`), ``hf`` (:mod:`~callbluff.targets.hf`);
``model`` (a saved callbluff reference model) is registered by :mod:`callbluff.engine.target_factory`, above the
models it loads. Third-party types register at import or through the ``callbluff.targets`` entry point group.

:func:`callbluff.engine.target_factory.from_config` builds the target a table describes (the type's factory; a
``filter`` wraps it, since filters sit above this package). Relative paths are resolved against ``base_dir`` (the
suite file's directory) by the factories: ``path``, ``per_prompt`` files, ``model_dir`` and, for commands, ``cwd``
(which defaults to ``base_dir``). A ``callable`` whose module is not importable is looked for in ``base_dir`` too.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from callbluff.targets.base import OutputKind
from callbluff.targets.validate import OutOfRange

if TYPE_CHECKING:
    from callbluff.targets.base import Target

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_RETRIES = 20  # an HTTP target's ``retries`` (beyond this a failing server is hammered, not waited for)
MIN_BACKOFF = 0.01  # seconds: the least ``backoff`` when ``retries > 0``
DEFAULT_MAX_RESPONSE_BYTES = 10 * 2**20  # an HTTP reply's cap, counted after decoding (gzip, deflate, br)


class RetryBounds(BaseModel):
    """The bounds on ``retries`` and ``backoff`` that every target speaking HTTP shares (``type = "http"`` and
    ``"openai"``, which declare the fields): at most :data:`MAX_RETRIES` retries, and at least :data:`MIN_BACKOFF`
    seconds between them when there are any. A mixin of validators only (no fields, so a config's field order and
    identity do not change)."""

    @field_validator("retries", check_fields=False)
    @classmethod
    def _retries(cls, v: int) -> int:
        if v > MAX_RETRIES:
            raise ValueError(f"must be at most {MAX_RETRIES}: every retry is one more request for each failed input "
                             "(a failing server would be asked this many times over)")
        return v

    @model_validator(mode="after")
    def _backoff(self) -> Self:
        retries, backoff = getattr(self, "retries", 0), getattr(self, "backoff", MIN_BACKOFF)
        if retries > 0 and backoff < MIN_BACKOFF:
            raise ValueError(f"key 'backoff': must be at least {MIN_BACKOFF:g} seconds when retries > 0 (got "
                             f"{backoff!r}): retries without a pause hammer a failing server")
        return self


def placeholders(obj: Any) -> set[str]:
    """The ``${NAME}`` names used in a string, or anywhere in a dict (keys and values) or list."""
    if isinstance(obj, str):
        return set(_PLACEHOLDER.findall(obj))
    if isinstance(obj, dict):
        return set().union(*(placeholders(k) | placeholders(v) for k, v in obj.items())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(placeholders(v) for v in obj)) if obj else set()
    return set()


class TargetSettings(BaseModel):
    """Settings every adapter has. ``output`` declares what the target returns: ``score``, ``answer``, ``both``,
    or ``auto`` (what the task needs: a score for essay/content, an answer for reading/questions); every output
    is validated against it (:mod:`callbluff.targets.validate`). ``out_of_range`` says what happens to a score
    outside the prompt's scale: ``error`` (the default: an error row naming the score and the scale) or
    ``clip`` (moved to the nearest end of the scale; only when asked for explicitly)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    ENV_KEYS: ClassVar[tuple[str, ...]] = ()  # keys whose ``${VAR}`` references are read from the environment
    type: str = Field("", description="the registered target type (register_target); a built-in settings model "
                      "declares its own as a Literal")
    name: str | None = None
    fingerprint: str | None = Field(None, description="the target's identity, replacing the computed one (the "
                                    "prediction cache's key): change it whenever the system behind it changes")
    version: str | None = Field(None, description="a version label added to the target's identity (computed or "
                                "declared): bump it when the system behind a URL or a command is redeployed, and "
                                "its predictions are asked again instead of read from the cache")
    max_consecutive_failures: int = Field(20, ge=0, description="stop asking this target after this many failed "
                                          "predictions in a row (the rest of its inputs become error rows "
                                          "naming the cause); 0: never stop")
    output: OutputKind = "auto"
    out_of_range: OutOfRange = "error"
    filter: str | None = Field(None, description="directory of an adversarial-answer filter (`callbluff filter "
                               "fit`); answers it flags get the prompt's minimum score (callbluff.defenses.filtered)")


    def identity(self, computed: str | Callable[[], str]) -> str:
        """The target's fingerprint: the declared ``fingerprint``, else ``computed`` (a string, or a function
        called only when needed: content hashes are not computed for a declared identity), with ``|version=V``
        appended when ``version`` is set. Every adapter sets ``fingerprint`` through this."""
        base = self.fingerprint or (computed() if callable(computed) else computed)
        return f"{base}|version={self.version}" if self.version else base


class TargetConfigError(ValueError):
    """A ``[[target]]`` table that cannot be used; the message names the key and what is allowed."""


def _explain(err: ValidationError, cls: type[TargetSettings], kind: str, where: str) -> str:
    allowed = ", ".join(k for k in cls.model_fields)
    lines = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"])
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            lines.append(f"{where}: unknown key {key!r} (allowed for type {kind!r}: {allowed})")
        elif e["type"] == "missing":
            lines.append(f"{where}: missing required key {key!r}")
        elif not key:
            lines.append(f"{where}: {msg}")
        else:
            lines.append(f"{where}: key {key!r}: {msg} (got {e.get('input')!r})")
    return "\n".join(lines)


S = TypeVar("S", bound=TargetSettings)


def settings(cls: type[S], given: S | None, values: dict[str, Any], where: str) -> S:
    """The adapter's validated settings: ``given`` as is, or ``values`` validated by ``cls`` (one place for every
    check, whether the settings come from a suite file or from Python keyword arguments)."""
    if given is not None:
        if not isinstance(given, cls):
            raise TypeError(f"{where}: config must be a {cls.__name__}, got {type(given).__name__}")
        return given
    try:
        return cls.model_validate(values)
    except ValidationError as err:
        kind = str(cls.model_fields["type"].default) if "type" in cls.model_fields else where
        raise TargetConfigError(_explain(err, cls, kind, where)) from None


# -- the target registry ------------------------------------------------------------------------------------

Factory = Callable[[Any, "Path | None"], "Target"]
"""``factory(config, base_dir)``: the target a validated config describes; ``base_dir`` (the suite file's
directory, or None) is what its relative paths resolve against."""


@dataclass(frozen=True)
class TargetType:
    """A registered target type: its ``[[target]]`` ``type`` name, settings model and factory. ``spec_key``: the
    key ``--target NAME:VALUE`` sets (None: the type cannot be given on the command line); ``spec_path``: VALUE is
    a ``"file"`` or a ``"dir"``, after which the target is named (a file by its stem), None: the target is named
    after its type."""

    name: str
    config: type[TargetSettings]
    factory: Factory
    spec_key: str | None = None
    spec_path: Literal["file", "dir"] | None = None


BUILTIN_MODULES: tuple[str, ...] = (
    "callbluff.targets.callables", "callbluff.targets.sklearn_target", "callbluff.targets.http_target",
    "callbluff.targets.openai_type", "callbluff.targets.command", "callbluff.targets.hf")
"""The adapter modules that register the built-in types at import, loaded on the first lookup (as the entry
points are): the adapters import this module, so it imports them only when a type is looked up."""
_TYPES: dict[str, TargetType] = {}
_LOADED = False


def register_target(type: str, config_cls: type[TargetSettings], factory: Factory, *, spec_key: str | None = None,
                    spec_path: Literal["file", "dir"] | None = None) -> TargetType:
    """Make ``[[target]] type = TYPE`` mean ``config_cls`` (a :class:`TargetSettings` subclass: the table's keys,
    validated there) built by ``factory(config, base_dir)``. The config class need not declare ``type`` (the
    table's ``type`` is kept in the base's field); when it does (``type: Literal["x"] = "x"``), its default must be
    ``type``. Registering the same type again with the
    same settings model replaces it (module reloads); another model under a taken type is an error."""
    who = f"target type {type!r}"
    if not isinstance(type, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", type):
        raise ValueError(f"{who}: a type is a name (letters, digits, '_', '-', '.')")
    if not (isinstance(config_cls, builtins_type) and issubclass(config_cls, TargetSettings)):
        raise TypeError(f"{who}: config_cls must subclass callbluff.targets.config.TargetSettings, got {config_cls!r}")
    declared = config_cls.model_fields["type"]
    if declared.default not in ("", type):
        raise TypeError(f"{who}: {config_cls.__name__}.type defaults to {declared.default!r}")
    if not callable(factory):
        raise TypeError(f"{who}: factory must be callable as factory(config, base_dir)")
    if spec_key is not None and spec_key not in config_cls.model_fields:
        raise TypeError(f"{who}: spec_key {spec_key!r} is not a key of {config_cls.__name__}")
    old = _TYPES.get(type)
    if old is not None and old.config.__qualname__ != config_cls.__qualname__:
        raise ValueError(f"{who} is registered twice ({old.config.__name__}, {config_cls.__name__})")
    entry = TargetType(type, config_cls, factory, spec_key, spec_path)
    _TYPES[type] = entry
    return entry


builtins_type = type  # ``type`` is register_target's parameter name (the table's key)


def unregister_target(type: str) -> TargetType | None:
    """Remove a target type (for tests); returns what was registered, if anything."""
    return _TYPES.pop(type, None)


def _load() -> None:
    """Import the built-in adapter modules and the ``callbluff.targets`` entry points, once."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for module in BUILTIN_MODULES:
            importlib.import_module(module)
        for ep in entry_points(group="callbluff.targets"):
            ep.load()


def target_types() -> tuple[str, ...]:
    """The registered target types, sorted."""
    _load()
    return tuple(sorted(_TYPES))


def get_target_type(type: str) -> TargetType:
    """The registered target type ``type``; a :class:`TargetConfigError` listing the registered ones otherwise."""
    _load()
    try:
        return _TYPES[type]
    except (KeyError, TypeError):
        raise TargetConfigError(f"unknown target type {type!r}; registered: {', '.join(target_types())}") from None


def type_of(config: TargetSettings) -> str:
    """The registered type whose settings model ``config`` is (its ``type`` key when it declares one)."""
    declared = getattr(config, "type", None)
    if isinstance(declared, str) and declared:
        return declared
    _load()
    for t in _TYPES.values():
        if t.config is builtins_type(config):
            return t.name
    raise TargetConfigError(f"{builtins_type(config).__name__} is not the settings model of a registered target type")


def validate_target_config(cfg: dict[str, Any], where: str = "[[target]]") -> TargetSettings:
    """Validate one ``[[target]]`` table by its type's settings model; raises :class:`TargetConfigError` naming
    the key and the fix (an unknown ``type`` lists the registered ones)."""
    if not isinstance(cfg, dict):
        raise TargetConfigError(f"{where}: expected a table, got {builtins_type(cfg).__name__}")
    kind = cfg.get("type")
    _load()
    if not isinstance(kind, str) or kind not in _TYPES:
        raise TargetConfigError(f"{where}: key 'type' must be one of {', '.join(target_types())}, got {kind!r}")
    cls = _TYPES[kind].config
    try:
        return cls.model_validate(cfg)
    except ValidationError as err:
        raise TargetConfigError(_explain(err, cls, kind, where)) from None


def check_environment(cfg: TargetSettings, where: str = "[[target]]") -> None:
    """Refuse a target whose settings reference an environment variable (``${VAR}`` in a key of its
    ``ENV_KEYS``: an HTTP target's ``url`` and ``headers``, a command's ``env``) that is not set, naming the key
    and the variable: called when the target is built, so a run stops before any work (exit 2) instead of
    turning every input into an error row."""
    missing = [(key, name) for key in cfg.ENV_KEYS
               for name in sorted(placeholders(getattr(cfg, key))) if name not in os.environ]
    key_env = getattr(cfg, "api_key_env", None)  # a chat target's key, named rather than ${...}
    if key_env is not None and not os.environ.get(key_env):
        missing.append(("api_key_env", key_env))
    if missing:
        raise TargetConfigError("\n".join(
            f"{where}: key {key!r} uses ${{{name}}} but environment variable {name} is not set; export it "
            "before running" for key, name in missing))


def resolve_path(path: str | None, base_dir: Path | None) -> str | None:
    if path is None:
        return None
    p = Path(os.path.expanduser(path))
    if not p.is_absolute() and base_dir is not None:
        p = base_dir / p
    return str(p)


def import_function(spec: str, base_dir: Path | None = None) -> Any:
    """``"package.module:attr.sub"`` -> the object; looks in ``base_dir`` when the module is not importable."""
    mod_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        top = mod_name.split(".")[0]
        if exc.name != top or base_dir is None or not (
                (base_dir / f"{top}.py").is_file() or (base_dir / top / "__init__.py").is_file()):
            raise TargetConfigError(f"function {spec!r}: cannot import module {mod_name!r} ({exc}); install it or "
                                    "put it beside the suite file") from None
        if str(base_dir) not in sys.path:
            sys.path.append(str(base_dir))
        module = importlib.import_module(mod_name)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetConfigError(f"function {spec!r}: module {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetConfigError(f"function {spec!r} is a {type(obj).__name__}, not a callable")
    return obj
