"""Inputs of several texts (issue 38): a task declares its input slots; ``Input.extra`` carries the slots beyond
text and context; the cache key, the HTTP body template, the chat templates and a command's JSON line follow them;
and the key of an input without extra slots is what it was before (a run's cached predictions stay valid)."""

from __future__ import annotations

import pytest

from callbluff.targets.base import Input, input_slots, register_slots
from callbluff.targets.config import TargetConfigError, validate_target_config

# Input.key() of these inputs as computed before extra slots existed (commit 667854f): pinned, not recomputed.
PINNED = {
    Input("essay", "hello", "1"): "6e4423f970c37ee05053d3a1e42011e213d968d409d8a03c674a3dea6bca80f5",
    Input("reading", "q", None, "ctx"): "d70a867169a5c0af021f57cc404a53992e8c2445eae29399e37ac895a8ffa3d9",
}


def test_existing_cache_keys_do_not_change() -> None:
    for inp, key in PINNED.items():
        assert inp.key() == key
        assert inp.to_dict() == {k: v for k, v in {"task": inp.task, "text": inp.text, "prompt_id": inp.prompt_id,
                                                   "context": inp.context}.items() if v is not None}


def test_extra_slots_are_part_of_the_input_and_its_key() -> None:
    base = Input("pairwise", "answer A", None, "the instruction")
    a = base.with_slot("text_b", "answer B")
    assert a.extra == (("text_b", "answer B"),) and a.slot("text_b") == "answer B" and base.slot("text_b") is None
    assert a.key() != base.key() and a.key() != base.with_slot("text_b", "answer C").key()
    assert Input("t", "x", extra={"b": "2", "a": "1"}) == Input("t", "x", extra=(("a", "1"), ("b", "2")))
    assert Input("t", "x", extra={"b": "2", "a": "1"}).key() == Input("t", "x", extra={"a": "1", "b": "2"}).key()
    # a slot's name is hashed with its text: moving a text to another slot is another input
    assert Input("t", "x", extra={"a": "1"}).key() != Input("t", "x", extra={"b": "1"}).key()
    assert a.to_dict() == {"task": "pairwise", "text": "answer A", "context": "the instruction", "text_b": "answer B"}
    assert a.slots() == {"text": "answer A", "context": "the instruction", "text_b": "answer B"}
    assert a.with_slot("text", "A2").text == "A2" and a.with_slot("context", "c2").context == "c2"
    with pytest.raises(ValueError, match="not an extra slot"):
        Input("t", "x", extra={"context": "no"})
    with pytest.raises(ValueError, match="an identifier other than task, prompt_id, extra"):
        register_slots(["prompt_id"])


def test_templates_accept_the_declared_slots_only() -> None:
    register_slots(["test_slot_b"])  # what registering a task declaring it does
    assert "test_slot_b" in input_slots()
    http = {"type": "http", "url": "http://h/x", "body_template": {"a": "${text}", "b": "${test_slot_b}"}}
    validate_target_config(http)
    with pytest.raises(TargetConfigError, match=r"\$\{test_slot_c\}, which is not allowed in single mode"):
        validate_target_config({**http, "body_template": {"b": "${test_slot_c}"}})
    chat = {"type": "openai", "base_url": "http://h/v1", "model": "m", "user": "A: ${text}\nB: ${test_slot_b}"}
    validate_target_config(chat)
    with pytest.raises(TargetConfigError, match=r"\$\{test_slot_c\}, which is not a template field"):
        validate_target_config({**chat, "user": "${test_slot_c}"})


def test_the_targets_send_the_extra_slots(tmp_path) -> None:  # noqa: ANN001
    """The chat templates render the extra slots; a command target gets them as keys of its JSON line (a real
    subprocess answering with the length of ``text_b``)."""
    import sys

    from callbluff.targets.chat import ChatSpec, render
    from callbluff.targets.command import CommandTarget

    register_slots(["text_b"])  # declared by a registered task (the pairwise plugin of tests/plugins)
    inp = Input("pairwise", "answer A", None, "do X", extra={"text_b": "answer B!"})
    spec = ChatSpec(system=None, user="Task: ${context}\nA: ${text}\nB: ${text_b}", response_format="none",
                    output="answer")
    assert render(spec.user or "", spec.values(inp, None)) == "Task: do X\nA: answer A\nB: answer B!"
    script = tmp_path / "slots.py"
    script.write_text("import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n"
                      "    print(json.dumps({'id': m['id'], 'score': len(m.get('text_b') or '')}), flush=True)\n")
    t = CommandTarget([sys.executable, str(script)], output="score")
    try:
        out = t.predict([inp, Input("pairwise", "a")])
    finally:
        t.close()
    assert [o.score for o in out] == [9.0, 0.0]
