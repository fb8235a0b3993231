"""The target registry (issue 38): a type is ``register_target(type, config_cls, factory)``; the registry is the
one list of types (validation messages, the factory, ``--target TYPE:VALUE``); third-party types come from the
``callbluff.targets`` entry point group; a suite's fingerprint is what it was before the registry."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import callbluff.targets.config as registry
from callbluff.engine.suite import parse_suite
from callbluff.engine.target_factory import from_config
from callbluff.targets import CallableTarget, Input
from callbluff.targets.config import (
    TargetConfigError,
    TargetSettings,
    get_target_type,
    register_target,
    target_types,
    unregister_target,
    validate_target_config,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "callbluff"


class EchoConfig(TargetSettings):
    reply: float = 1.0


def _echo(config: EchoConfig, base_dir: Path | None) -> CallableTarget:
    return CallableTarget(lambda text: config.reply, name=config.name or "echo", output="score")


@pytest.fixture
def echo() -> Any:
    register_target("echo", EchoConfig, _echo, spec_key="reply")
    try:
        yield
    finally:
        unregister_target("echo")


def test_builtin_types_are_registered_by_their_modules() -> None:
    assert target_types() == ("callable", "command", "hf", "http", "model", "openai", "sklearn")
    # each settings model lives beside its adapter, which registers it
    for kind, module in (("http", "http_target"), ("openai", "openai_target"), ("callable", "callables"),
                         ("sklearn", "sklearn_target"), ("command", "command"), ("hf", "hf")):
        assert get_target_type(kind).config.__module__ == f"callbluff.targets.{module}"
    assert get_target_type("model").factory.__module__ == "callbluff.engine.target_factory"
    with pytest.raises(TargetConfigError, match="unknown target type 'grpc'; registered: callable, command"):
        get_target_type("grpc")


def test_a_registered_type_is_validated_built_and_listed(echo: None) -> None:
    cfg = validate_target_config({"type": "echo", "name": "e", "reply": 2})
    assert isinstance(cfg, EchoConfig) and cfg.type == "echo" and cfg.reply == 2.0
    assert from_config({"type": "echo", "reply": 3}).predict([Input("essay", "x")])[0].score == 3.0
    with pytest.raises(TargetConfigError, match=r"\[\[target\]\]: unknown key 'rply' \(allowed for type 'echo': "):
        validate_target_config({"type": "echo", "rply": 2})
    with pytest.raises(TargetConfigError, match="key 'type' must be one of callable, command, echo, hf, http, model"):
        validate_target_config({"type": "ecko"})
    suite = parse_suite({"dataset": {"spec": "demo:essays"}, "target": [{"name": "e", "type": "echo"}]}, source="s")
    assert isinstance(suite.target[0], EchoConfig) and suite.model_dump()["target"][0]["reply"] == 1.0


def test_registration_is_checked(echo: None) -> None:
    class Other(TargetSettings):
        pass

    with pytest.raises(ValueError, match="'echo' is registered twice"):
        register_target("echo", Other, _echo)
    with pytest.raises(TypeError, match="must subclass callbluff.targets.config.TargetSettings"):
        register_target("x", dict, _echo)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="HttpConfig.type defaults to 'http'"):
        register_target("x", get_target_type("http").config, _echo)
    with pytest.raises(TypeError, match="spec_key 'nope' is not a key"):
        register_target("x", Other, _echo, spec_key="nope")
    assert "x" not in target_types()


def test_the_cli_spec_reads_the_registry(echo: None) -> None:
    from callbluff.cli.common import target_from_spec

    assert target_from_spec("echo:4", None) == {"name": "echo", "type": "echo", "reply": "4"}
    assert target_from_spec("sklearn:models/clf.joblib", None)["name"] == "clf"
    assert target_from_spec("hf:models/bert.v2/", None) == {"name": "bert.v2", "type": "hf",
                                                            "model_dir": "models/bert.v2/"}
    assert target_from_spec("https://h/score", None)["url"] == "https://h/score"


def test_entry_point_types_load_on_the_first_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[str] = []

    class EntryPoint:
        def load(self) -> None:
            loaded.append("echo")
            register_target("echo", EchoConfig, _echo)

    monkeypatch.setattr(registry, "_LOADED", False)
    monkeypatch.setattr(registry, "entry_points", lambda group: [EntryPoint()] if group == "callbluff.targets" else [])
    try:
        assert "echo" in target_types() and loaded == ["echo"]
        assert get_target_type("echo").config is EchoConfig and loaded == ["echo"]  # once
    finally:
        unregister_target("echo")


def test_the_type_list_is_spelled_once() -> None:
    """No tuple, dict or union of the built-in type names outside their registrations."""
    names = re.compile(r'"(callable|sklearn|http|openai|command|hf|model)"')
    union = re.compile(r"[A-Z][A-Za-z]*Config \| [A-Z][A-Za-z]*Config")
    hits = [f"{p.relative_to(SRC)}:{n}" for p in sorted(SRC.rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if len(set(names.findall(line))) >= 3 or union.search(line)]
    assert hits == []


def test_a_suite_fingerprint_is_what_it_was() -> None:
    """Pinned before the registry (commit 667854f): the tables dump as they did, so runs resume."""
    d = {"name": "s", "seed": 1, "dataset": {"spec": "demo:essays"},
         "target": [{"name": "h", "type": "http", "url": "http://h/x", "headers": {"a": "b"}},
                    {"name": "c", "type": "callable", "function": "os.path:basename"},
                    {"name": "o", "type": "openai", "base_url": "http://h/v1", "model": "m",
                     "defence": {"sandwich": True}},
                    {"name": "m", "type": "model", "path": "x"},
                    {"name": "k", "type": "command", "argv": "python x.py"}],
         "attack": [{"name": "DelRand"}]}
    assert parse_suite(d, source="t").fingerprint() == "88c96c6398446d01"
