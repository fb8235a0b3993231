"""AddRC (Kumar et al. 2020, Sec. 3.3): the passage's sentences (hand-made passages for the splitting rules), and
on the real ASAP-AES essays of sets 3-6 with the passages of ../shared/data/asap-aes/prompts.json: every essay
gets an example, each added sentence is a sentence of its own set's passage, none of another's."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from callbluff.attacks.edits import SizeCriterion, units
from callbluff.attacks.essay import AddRC
from callbluff.attacks.essay.add import passage_sentences
from callbluff.engine.generate import generate
from callbluff.engine.work import AttackSpec
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.context import Resources
from helpers import shared_path

RES = Resources()
PASSAGE = ("The Age of Dirigibles\n\n"
           "By the 1920s, dirigibles were hailed as the future. Builders made a mast.\n\n"
           "Al Smith described the plan:\n\n"
           "[The top] would be more than ornamental. It would serve a higher calling.\n\n"
           "“Where did you get it?” she said. “I bought it,” Saeng answered.\n\n"
           "— A. Writer, Designer\nHometown: Newark, New Jersey")


def test_passage_sentences_skip_headings_signatures_tags_and_quote_leads() -> None:
    got = passage_sentences(PASSAGE, RES)
    assert "By the 1920s, dirigibles were hailed as the future." in got
    assert "[The top] would be more than ornamental." in got and "It would serve a higher calling." in got
    assert not any("Age of Dirigibles" in s or "Hometown" in s or "described the plan" in s for s in got)
    assert not any(s[:1].islower() for s in got)  # a cut-off dialogue tag ("she said.") is not a sentence
    assert all("\n" not in s for s in got) and len(got) == len(set(got))


def test_an_essay_gets_passage_sentences_at_the_papers_size_and_position() -> None:
    essay = ScoredResponse("e1", "3", " ".join(f"My sentence number {i} is here." for i in range(1, 13)), (2.0,))
    prompt = Prompt("3", "essay", text="Explain the setting.", source=PASSAGE, score_min=0, score_max=3)
    a = AddRC(percent=25, position="beginning")
    state = a.fit([essay], prompt, RES)
    [ex] = a.examples(essay, np.random.default_rng(5), RES, prompt, state)
    assert ex.meta["n_added"] == SizeCriterion(percent=25).units(12) == 3 and ex.meta["insert_at"] <= 4
    assert set(ex.meta["added"]) <= set(state)
    before = " ".join(u.text for u in units(essay.text, "sentence", RES)[:ex.meta["insert_at"]])
    assert ex.text.startswith(before) and " ".join(ex.meta["added"]) in ex.text
    assert a.examples(essay, np.random.default_rng(5), RES, prompt, state) == [ex]  # the record's generator only
    none = replace(prompt, source=None)
    assert a.examples(essay, np.random.default_rng(5), RES, none, a.fit([essay], none, RES)) == []


# -- the real data ------------------------------------------------------------------------------------------

def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


@pytest.fixture(scope="module")
def asap():
    from callbluff.datasets import load

    tsv = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    shared_path("data", "asap-aes", "prompts.json")
    ds = load(f"asap-aes:{tsv}?prompts=1,3,4,5,6,7")
    per: dict[str, list[ScoredResponse]] = {}
    for r in ds:
        if len(per.setdefault(r.prompt_id, [])) < 12:
            per[r.prompt_id].append(r)
    return [r for rs in per.values() for r in rs], ds.prompts


def test_real_essays_get_sentences_of_their_own_sets_passage(asap) -> None:
    records, prompts = asap
    specs = [AttackSpec.make("AddRC", {"percent": p, "position": pos}) for p, pos in ((10, None), (25, "end"))]
    examples = [ex for c in generate(specs, records, prompts, seed=7, chunk_size=20) for ex in c.examples]
    by_id = {r.id: r for r in records}
    sources = {pid: _norm(p.source) for pid, p in prompts.items() if p.source}
    assert sorted(sources) == ["3", "4", "5", "6"]
    made = {(ex.source_id, ex.params["percent"]) for ex in examples}
    rc = [r for r in records if r.prompt_id in sources]
    assert made == {(r.id, p) for r in rc for p in (10.0, 25.0)}  # every essay of sets 3-6, none of 1 and 7
    for ex in examples:
        pid = by_id[ex.source_id].prompt_id
        own = set(passage_sentences(prompts[pid].source, RES))
        for s in ex.meta["added"]:
            assert s in own and _norm(s) in sources[pid], (pid, s)
            assert not any(_norm(s) in src for q, src in sources.items() if q != pid), (pid, s)
            assert s in ex.text
        n = ex.meta["n_sentences"]
        assert ex.meta["n_added"] == SizeCriterion(percent=ex.params["percent"]).units(n)
        assert len(set(ex.meta["added"])) == len(ex.meta["added"])  # without replacement
        if ex.params["position"] == "end":
            assert 2 * n // 3 <= ex.meta["insert_at"] <= n
