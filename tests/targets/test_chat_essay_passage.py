"""An LLM essay grader is shown the prompt's task (``${question}``) and, for the source-based ASAP-AES sets 3-6,
the reading passage (``${context}``): the real prompts file of ../shared, the default templates and the
llm-grader suite's."""

from __future__ import annotations

import tomllib

from callbluff.datasets import load
from callbluff.suites.llm_grader import llm_grader_suite
from callbluff.targets.base import Input
from callbluff.targets.chat import ChatSpec
from helpers import shared_path


def test_essay_grader_sees_the_prompt_and_the_passage_where_there_is_one() -> None:
    tsv = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    shared_path("data", "asap-aes", "prompts.json")
    prompts = load(f"asap-aes:{tsv}?prompts=1,3", lazy=True).prompts
    spec = ChatSpec(response_format="json_object")
    [_, user3] = spec.messages(Input("essay", "The hills made it hard.", "3"), prompts["3"])
    [_, user1] = spec.messages(Input("essay", "Computers are good.", "1"), prompts["1"])
    assert user3["content"] == (f"Question: {prompts['3'].text}\nReading passage: {prompts['3'].source}\n"
                                "Student answer: The hills made it hard.")
    assert user1["content"] == f"Question: {prompts['1'].text}\nStudent answer: Computers are good."  # no passage
    assert spec.values(Input("essay", "x", "3"), prompts["3"])["context"] == prompts["3"].source
    qa = Input("reading", "Who?", None, context="A paragraph.")  # a QA input keeps its own paragraph
    assert spec.values(qa, None)["context"] == "A paragraph."
    variant = tomllib.loads(llm_grader_suite(task="essay", variants=True))["target"][1]
    [_, v3] = ChatSpec(user=variant["user"]).messages(Input("essay", "Hi.", "3"), prompts["3"])
    assert f"Reading passage: {prompts['3'].source}" in v3["content"]


def test_llm_grader_essay_suite_has_addrc() -> None:
    doc = tomllib.loads(llm_grader_suite(task="essay"))
    [rc] = [a for a in doc["attack"] if a["name"] == "AddRC"]
    assert rc["params"] == {"percent": 25, "position": "end"}
    assert "${context}" in doc["target"][0]["user"]
