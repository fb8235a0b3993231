"""Every code block of docs/writing-attacks.md runs as written: the three example attacks register, pass the
conformance kit, and make the examples the guide says they make."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from callbluff.attacks.base import get_attack, unregister
from callbluff.attacks.oracle import Oracle
from callbluff.resources.context import default_resources
from callbluff.testing import COMMON_CHECKS, DeterministicTarget, default_records

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-attacks.md"
NAMES = ("GuideDropWords", "GuideRandomWords", "GuideAppendWord")


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)


@pytest.fixture()
def guide() -> dict:
    """The guide's blocks executed in order in one namespace (as a reader pasting them would)."""
    module = types.ModuleType("writing_attacks_guide")  # a real module, so its classes pickle (the kit checks)
    sys.modules[module.__name__] = module
    try:
        for code in blocks():
            exec(compile(code, str(GUIDE), "exec"), module.__dict__)  # noqa: S102 - the point of the test
        yield module.__dict__
    finally:
        for name in NAMES:
            unregister(name)
        del sys.modules[module.__name__]


def test_guide_has_the_three_kinds_and_the_kit_blocks() -> None:
    text = "\n".join(blocks())
    for needle in ("(StaticAttack)", "(PromptGenerator)", "(SearchAttack)", "check_attack(", "parametrize_attack_checks"):
        assert needle in text


def test_guide_examples_register_and_pass_the_kit(guide: dict) -> None:
    # the "Test it" block already ran check_attack on all three; they are registered under their names
    assert [get_attack(n).kind for n in NAMES] == ["static", "generator", "search"]
    marks = guide["test_my_attacks"].pytestmark
    ids = marks[0].kwargs["ids"]
    common = [f"GuideDropWords-{c.__name__}" for c in COMMON_CHECKS]
    assert ids[:len(common)] == common  # static, no fit: the common checks only
    assert ids[len(common):] == [i.replace("GuideDropWords", "GuideRandomWords") for i in common] + [
        "GuideRandomWords-check_fit_state", "GuideRandomWords-check_generator_count"] + [
        i.replace("GuideDropWords", "GuideAppendWord") for i in common] + ["GuideAppendWord-check_search_budget"]


def test_static_example_deletes_in_the_requested_third(guide: dict) -> None:
    records, prompts = default_records("essay")
    rec = records[0]
    attack = guide["GuideDropWords"](percent=10, position="end")
    [ex] = attack.examples(rec, np.random.default_rng(1), default_resources(), prompts[rec.prompt_id])
    assert all(e["op"] == "delete" and e["source_span"][0] >= 2 * len(rec.text) // 3 - 40 for e in ex.meta["edits"])
    assert len(ex.text) < len(rec.text) and rec.text.startswith(ex.text[:100])


def test_generator_example_uses_only_the_prompts_vocabulary(guide: dict) -> None:
    records, prompts = default_records("content")
    gen = guide["GuideRandomWords"](count=5, length=6)
    state = gen.fit(records, prompts["kit-content"], default_resources())
    out = gen.examples_for(prompts["kit-content"], state, 0, default_resources())
    assert len(out) == 5 and all(set(e.text.split()) <= set(state) and len(e.text.split()) == 6 for e in out)


def test_search_example_stays_within_its_budget(guide: dict) -> None:
    records, prompts = default_records("content")
    target = DeterministicTarget(prompts)
    from callbluff.engine.inputs import adversarial_input

    attack = guide["GuideAppendWord"](query_budget=4, rounds=3)
    oracle = Oracle(target, lambda t: adversarial_input(attack.perturbed(records[0], t), records[0], "content"), 4)
    [ex] = attack.examples(records[0], oracle, np.random.default_rng(0), default_resources(), prompts["kit-content"])
    assert target.inputs == 4 and oracle.exhausted and ex.text.startswith(records[0].text.rstrip())
