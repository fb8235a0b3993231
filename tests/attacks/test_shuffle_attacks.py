"""ShuffleSent (Kumar et al. 3.2) and Shuffle (Ding et al. 2.2) on hand-made and real records."""

from __future__ import annotations

import pytest

from callbluff.attacks import attack_names, get_attack, make_attack
from callbluff.records import Prompt, QAExample, ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.seeding import derive_seed, record_rng

ESSAY = ("Dear editor, I think computers are good for us. They help us learn about faraway places! "
         "But people should also exercise. Some kids spend all day online. In conclusion, computers are great.")


def run(name: str, record, prompt=None, seed: int = 7, **params):
    attack = make_attack(name, **params)
    return attack.examples(record, record_rng(seed, record.id, attack.name, attack.params_dict),
                           default_resources(), prompt)


def test_shufflesent_permutes_sentences_and_records_order() -> None:
    rec = ScoredResponse("e1", "1", ESSAY, (8.0,))
    [ex] = run("ShuffleSent", rec)
    spans = ex.meta["sentence_spans"]
    sentences = [ESSAY[a:b] for a, b in spans]
    assert len(sentences) == 5 and ex.meta["n_sentences"] == 5
    assert ex.text == " ".join(sentences[i] for i in ex.meta["order"])
    assert ex.meta["order"] != list(range(5))
    assert sorted(ex.meta["order"]) == list(range(5))
    assert ex.source_id == "e1" and ex.prompt_id == "1" and ex.attack == "ShuffleSent"
    assert ex.id == f"e1~ShuffleSent~{ex.id.split('~')[2]}~0"


def test_shufflesent_skips_single_sentence_and_is_seeded() -> None:
    assert run("ShuffleSent", ScoredResponse("e2", "1", "Only one sentence here.", (2.0,))) == []
    rec = ScoredResponse("e1", "1", ESSAY, (8.0,))
    assert run("ShuffleSent", rec, seed=1)[0].text == run("ShuffleSent", rec, seed=1)[0].text
    texts = {run("ShuffleSent", rec, seed=s)[0].text for s in range(8)}
    assert len(texts) > 3


def test_shuffle_takes_only_correct_answers() -> None:
    prompt = Prompt("3", "content", score_min=0, score_max=2)
    correct = ScoredResponse("a", "3", "Pandas like to eat bamboo because it is their food.", (2.0,))
    partial = ScoredResponse("b", "3", "Pandas eat bamboo.", (1.0,))
    [ex] = run("Shuffle", correct, prompt)
    assert run("Shuffle", partial, prompt) == []
    assert run("Shuffle", partial, prompt, min_score=1)  # configurable threshold
    tokens = ["Pandas", "like", "to", "eat", "bamboo", "because", "it", "is", "their", "food", "."]
    assert sorted(ex.text.split()) == sorted(tokens)  # exactly the same vocabulary
    assert ex.text.split() != tokens and ex.meta["source_score"] == 2.0


def test_shuffle_needs_a_scale() -> None:
    with pytest.raises(ValueError, match="min_score"):
        run("Shuffle", ScoredResponse("a", "x", "a b c", (2.0,)), None)


def test_wrong_record_type_is_an_error() -> None:
    with pytest.raises(TypeError, match="ShuffleSent attacks ScoredResponse, got QAExample"):
        run("ShuffleSent", QAExample("q", "Who?", "Context."))


def test_registry_and_params_validation() -> None:
    assert {"Shuffle", "ShuffleSent"} <= set(attack_names())
    assert get_attack("shufflesent").name == "ShuffleSent"
    with pytest.raises(KeyError, match="known attacks"):
        get_attack("NoSuchAttack")
    with pytest.raises(ValueError, match="tokenizer"):
        make_attack("Shuffle", tokenizer="bpe")
    with pytest.raises(ValueError, match="Allowed: min_score"):
        make_attack("Shuffle", colour="red")


def test_shufflesent_keeps_the_text_between_sentences() -> None:
    text = "  I like dogs a lot. My dog is called Rex.\n\nHe runs in the park every day.  We play ball.\nIn the end, dogs are great. "
    [ex] = run("ShuffleSent", ScoredResponse("e3", "1", text, (3.0,)))
    sentences = [text[a:b] for a, b in ex.meta["sentence_spans"]]
    assert sentences == ["I like dogs a lot.", "My dog is called Rex.", "He runs in the park every day.",
                         "We play ball.", "In the end, dogs are great."]
    gaps = ["  ", " ", "\n\n", "  ", "\n", " "]
    moved = [sentences[i] for i in ex.meta["order"]]
    assert ex.text == "".join(g + s for g, s in zip(gaps, moved + [""]))
    for e in ex.meta["edits"]:  # output spans point at the moved sentences
        assert ex.text[slice(*e["output_span"])] == e["inserted"] and text[slice(*e["source_span"])] == e["removed"]


def test_shuffle_keeps_surrounding_whitespace_and_records_the_edit() -> None:
    prompt = Prompt("3", "content", score_min=0, score_max=2)
    text = " Pandas eat bamboo.\n"
    [ex] = run("Shuffle", ScoredResponse("a", "3", text, (2.0,)), prompt)
    assert ex.text.startswith(" ") and ex.text.endswith("\n")
    [edit] = ex.meta["edits"]
    assert edit["source_span"] == [1, 19] and ex.text[slice(*edit["output_span"])] == ex.text.strip()
    assert sorted(ex.text.split()) == sorted(["Pandas", "eat", "bamboo", "."])


def test_seed_derivation() -> None:
    assert derive_seed(1, "a", "X", {"p": 1}) == derive_seed(1, "a", "X", {"p": 1})
    assert derive_seed(1, "a", "X", {"p": 1}) != derive_seed(1, "a", "X", {"p": 2})


@pytest.mark.slow
def test_shufflesent_on_real_asap_essays() -> None:
    from callbluff.datasets import load
    from helpers import shared_path

    ds = load(f"asap-aes:{shared_path('data', 'asap-aes', 'training_set_rel3.tsv.gz')}?prompts=1")
    records = [r for _, r in zip(range(40), ds)]
    n_sent = []
    for r in records:
        [ex] = run("ShuffleSent", r, ds.prompts["1"])
        n_sent.append(ex.meta["n_sentences"])
        assert sorted(ex.text.split()) == sorted(r.text.split())
    # Kumar et al. Table 2: prompt 1 essays have about 23 sentences on average
    assert 15 <= sum(n_sent) / len(n_sent) <= 30
