"""The lean paths of the edit toolkit give the same units and the same examples as the full ones.

Word units come from spaCy's tokenizer alone (``Resources.word_spans``) and sentence units may be split for a
whole batch at once (``Resources.prefetch_spans``, the ``prefetch`` of DelRand / DelStart / DelEnd); both are
speed-ups only, checked here on real ASAP-SAS answers and on hand-made texts.
"""

from __future__ import annotations

import gzip
from itertools import islice

from callbluff.engine.generate import AttackSpec, GenerationTask, generate_examples
from callbluff.records import ScoredResponse
from callbluff.resources.context import Resources, default_resources
from helpers import shared_path

HAND = ["Don't stop -- it's 5 p.m. in the U.S.!  Really?\n\nYes.", "  leading and trailing  ", "", "one",
        "Tabs\tand\nnewlines (with brackets) and e-mail a@b.co"]


def _answers(n: int) -> list[str]:
    path = shared_path("data", "asap-sas", "train.tsv.gz")
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        next(fh)
        return [line.rstrip("\n").split("\t")[-1] for line in islice(fh, n)]


def test_tokenizer_words_equal_the_parse_words_on_hand_texts() -> None:
    lean, full = Resources(), Resources()
    for text in HAND:
        assert lean.word_spans(text) == full.spans(text).words, text
    assert not lean._parses  # the lean path never ran the sentence recogniser


def test_tokenizer_words_and_batched_sentences_equal_the_per_text_parse_on_real_answers() -> None:
    texts = _answers(120)
    lean, batched, full = Resources(), Resources(), Resources()
    batched.prefetch_spans(texts)
    assert len(batched._parses) == len(set(texts))
    for text in texts:
        ref = full.spans(text)
        assert lean.word_spans(text) == ref.words
        assert batched.spans(text) == ref


def _records(texts: list[str]) -> list[ScoredResponse]:
    return [ScoredResponse(id=f"r{i}", prompt_id="1", text=t, scores=(2.0,)) for i, t in enumerate(texts)]


def test_delete_and_shuffle_examples_are_the_same_with_and_without_the_batched_split() -> None:
    records = _records([*(_answers(40)), *HAND])
    specs = [AttackSpec.make("DelRand", {}), AttackSpec.make("DelStart", {"max_k": 2}),
             AttackSpec.make("Shuffle", {"min_score": 0})]
    res = default_resources()
    runs = []
    for _ in range(2):
        res._parses.clear()
        res._words.clear()
        runs.append(generate_examples(GenerationTask(records, {}, specs, 7)))  # batched (engine prefetch)
    res._parses.clear()
    res._words.clear()
    one_by_one = [ex for r in records for spec in specs
                  for ex in generate_examples(GenerationTask([r], {}, [spec], 7)).examples]
    assert runs[0].examples == runs[1].examples
    assert sorted(e.id for e in runs[0].examples) == sorted(e.id for e in one_by_one)
    assert {e.id: e.text for e in runs[0].examples} == {e.id: e.text for e in one_by_one}
    assert not runs[0].errors
    assert {e.attack for e in runs[0].examples} == {"DelRand", "DelStart", "Shuffle"}
