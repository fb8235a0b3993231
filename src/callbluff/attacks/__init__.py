"""Attacks, one module per paper family; importing this package registers the built-in ones."""

from callbluff.attacks import content, essay, llm, questions, reading  # noqa: F401  (registration side effect)
from callbluff.attacks.base import (
    EXPECTATIONS,
    Attack,
    AttackParams,
    Expectation,
    GeneratorParams,
    PromptGenerator,
    SearchAttack,
    SearchParams,
    StaticAttack,
    attack_classes,
    attack_names,
    get_attack,
    make_attack,
    register,
    registered,
    state_hash,
    unregister,
)
from callbluff.attacks.edits import Edit, Position, SizeCriterion, SizePositionParams, Unit, apply, select, units
from callbluff.attacks.oracle import Oracle

__all__ = [
    "EXPECTATIONS", "Attack", "AttackParams", "Edit", "Expectation", "GeneratorParams", "Oracle", "Position",
    "PromptGenerator", "SearchAttack", "SearchParams", "SizeCriterion", "SizePositionParams", "StaticAttack",
    "Unit", "apply", "attack_classes", "attack_names", "get_attack", "make_attack", "register", "registered",
    "select", "state_hash", "units", "unregister",
]
