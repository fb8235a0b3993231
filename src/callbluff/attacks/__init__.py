"""Attacks, one module per paper family; importing this package registers the built-in ones."""

from callbluff.attacks import content, essay  # noqa: F401  (registration side effect)
from callbluff.attacks.base import (
    Attack,
    AttackParams,
    Budget,
    Position,
    QueryBudget,
    SearchAttack,
    StaticAttack,
    attack_classes,
    attack_names,
    get_attack,
    make_attack,
    register,
)

__all__ = [
    "Attack", "AttackParams", "Budget", "Position", "QueryBudget", "SearchAttack", "StaticAttack",
    "attack_classes", "attack_names", "get_attack", "make_attack", "register",
]
