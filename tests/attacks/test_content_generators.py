"""The content generators of Ding et al. 2020 Sec. 2.2 (attacks/content): each one's defining property on real
ASAP-SAS answers, exact outputs for fixed seeds, length bounds, bad input, and the conformance kit."""

from __future__ import annotations

import gzip
import json
import string
from pathlib import Path

import numpy as np
import pytest

from callbluff.attacks.base import make_attack
from callbluff.attacks.content import (
    ContentBurst,
    GenericChars,
    GenericWords,
    LMGenerate,
    PromptChars,
    PromptWords,
    RandomChars,
    RandomWords,
    ding2020_configurations,
)
from callbluff.datasets.base import load
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.resources.corpus import CorpusError
from callbluff.resources.ngram_lm import BOS, UNK, KneserNeyTrigramLM
from callbluff.resources.ngrams import EOS_CHAR, EOS_WORD, build_table, char_text, mean_length, word_tokens
from callbluff.testing import check_attack
from helpers import shared_path

RES = default_resources()
HAND = Prompt("hand", "content", "Explain how pandas and koalas are alike.", score_min=0, score_max=2)
HAND_ANSWERS = ["Pandas eat bamboo. Koalas eat eucalyptus leaves!", "Both are specialists, they eat one food.",
                "The koala and the panda live in trees"]


def _records(texts: list[str], prompt: str = "hand") -> list[ScoredResponse]:
    return [ScoredResponse(f"{prompt}-{i}", prompt, t, (1.0,)) for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def sas() -> tuple[dict[str, Prompt], dict[str, list[ScoredResponse]]]:
    """The first 300 training answers of ASAP-SAS prompts 3 (pandas, koalas, pythons) and 10 (physics)."""
    path = shared_path("data", "asap-sas", "train.tsv.gz")
    ds = load(f"asap-sas:{path}?prompts=3,10")
    recs: dict[str, list[ScoredResponse]] = {"3": [], "10": []}
    for r in ds:
        if len(recs[r.prompt_id]) < 300:
            recs[r.prompt_id].append(r)
    return ds.prompts, recs


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    """About 30,000 words of SQuAD v1.1 dev Wikipedia paragraphs as a .txt generic corpus (one per line)."""
    src = shared_path("data", "squad-v1.1", "dev-v1.1.json.gz")
    with gzip.open(src, "rt", encoding="utf-8") as f:
        paras = [p["context"].replace("\n", " ") for a in json.load(f)["data"] for p in a["paragraphs"]]
    out = tmp_path_factory.mktemp("corpus") / "wiki.txt"
    keep, words = [], 0
    for p in paras[::8]:
        keep.append(p)
        words += len(p.split())
        if words > 30_000:
            break
    out.write_text("\n".join(keep), encoding="utf-8")
    return str(out)


def _gen(attack, prompt: Prompt, records, seed: int = 0):
    state = attack.fit(records, prompt, RES)
    return attack.examples_for(prompt, state, seed, RES), state


# -- defining properties on real data --------------------------------------------------------------------

def test_prompt_char_3grams_are_3grams_of_the_prompts_answers(sas) -> None:
    prompts, recs = sas
    exs, state = _gen(PromptChars(n=3, count=60), prompts["3"], recs["3"])
    table = build_table([r.text for r in recs["3"]], "char", 3)
    grams = {"".join(g).rstrip(EOS_CHAR) for g in table.gram_texts()}
    other = {"".join(g).rstrip(EOS_CHAR) for g in build_table([r.text for r in recs["10"]], "char", 3).gram_texts()}
    assert len(exs) == 60
    foreign = 0
    for ex in exs:
        chunks = [ex.text[i:i + 3] for i in range(0, len(ex.text), 3)]
        # every drawn 3-gram is one of the prompt's; only the last may be cut (length) or short (sentence end)
        assert all(c in grams for c in chunks[:-1]), ex.text
        assert any(g.startswith(chunks[-1]) for g in grams)
        foreign += sum(c not in other for c in chunks[:-1])
    assert foreign > 0  # ... and they are not all 3-grams of another prompt's answers


def test_random_chars_only_letters_and_space_of_the_mean_length(sas) -> None:
    prompts, recs = sas
    exs, state = _gen(RandomChars(count=40), prompts["10"], recs["10"])
    mean = np.mean([len(char_text(r.text)) for r in recs["10"]])
    assert state["length"] == int(mean + 0.5) > 50
    assert all(len(ex.text) == state["length"] for ex in exs)
    assert set("".join(ex.text for ex in exs)) == set(string.ascii_lowercase + " ")  # 27 symbols, all used


def test_generic_and_prompt_vocabularies_differ_as_expected(sas, small_corpus) -> None:
    prompts, recs = sas
    prompt_vocab = {w for r in recs["3"] for w in word_tokens(r.text)}
    generic_vocab = set(word_tokens(Path(small_corpus).read_text(encoding="utf-8")))
    outputs = {}
    for attack in (PromptWords(n=1, count=40), GenericWords(n=1, count=40, corpus=small_corpus),
                   RandomWords(count=40, corpus=small_corpus)):
        exs, _ = _gen(attack, prompts["3"], recs["3"])
        outputs[attack.name] = [w for ex in exs for w in ex.text.split()]
    assert set(outputs["PromptWords"]) <= prompt_vocab
    assert set(outputs["GenericWords"]) <= generic_vocab and set(outputs["RandomWords"]) <= generic_vocab
    topical = {"panda", "pandas", "koala", "koalas", "python", "pythons", "bamboo", "eucalyptus"}
    share = {k: np.mean([w in topical for w in v]) for k, v in outputs.items()}
    assert share["PromptWords"] > 0.05 and share["GenericWords"] < 0.01 and share["RandomWords"] < 0.01
    # unigram sampling is weighted by frequency, uniform sampling is not: "the" is common only in the former
    assert outputs["GenericWords"].count("the") > 10 * max(1, outputs["RandomWords"].count("the"))


def test_longer_prompt_char_ngrams_contain_more_real_words(sas) -> None:
    """Sec. 4: "examples generated with a larger n contain more possible real words"."""
    prompts, recs = sas
    vocab = {w for r in recs["3"] for w in word_tokens(r.text) if len(w) > 3}
    rate = {}
    for n in (1, 5):
        exs, _ = _gen(PromptChars(n=n, count=40), prompts["3"], recs["3"])
        words = [w for ex in exs for w in ex.text.split() if len(w) > 3]
        rate[n] = np.mean([w in vocab for w in words])
    assert rate[1] < 0.01 and rate[5] > 0.02 + 5 * rate[1]  # measured on these 300 answers: 0.0 vs 0.046


def test_content_burst_draws_the_prompts_nouns(sas) -> None:
    prompts, recs = sas
    exs, state = _gen(ContentBurst(count=30), prompts["3"], recs["3"][:120])
    nouns = dict(zip(state["nouns"], state["counts"]))
    lower = {n.lower() for n in nouns}
    assert {"pandas", "koalas", "bamboo", "eucalyptus"} <= lower and not {"the", "and", "they", "because"} & lower
    top3 = sorted(nouns, key=lambda n: -nouns[n])[:3]
    assert set(top3) == {"pandas", "koalas", "pythons"}  # the prompt's animals dominate the weights
    assert all(set(ex.text.split()) <= set(nouns) for ex in exs)
    assert all(len(ex.text.split()) == state["length"] for ex in exs)


def test_every_answer_length_within_its_bound(sas, small_corpus) -> None:
    prompts, recs = sas
    words_mean = mean_length([r.text for r in recs["3"]], "word")
    chars_mean = mean_length([r.text for r in recs["3"]], "char")
    for attack, unit, bound in ((PromptChars(n=2, count=30), "char", chars_mean),
                                (GenericChars(n=4, count=30, corpus=small_corpus), "char", chars_mean),
                                (PromptWords(n=3, count=30), "word", words_mean),
                                (GenericWords(n=2, count=30, corpus=small_corpus), "word", words_mean)):
        exs, state = _gen(attack, prompts["3"], recs["3"])
        assert state["length"] == bound
        for ex in exs:
            size = len(ex.text) if unit == "char" else len(ex.text.split())
            assert 1 <= size <= bound
            assert ex.meta["end"] in ("length", "sentence")
            if ex.meta["end"] == "length":
                assert size == bound
    exs, _ = _gen(LMGenerate(count=30, corpus=small_corpus), prompts["3"], recs["3"])
    for ex in exs:
        assert len(ex.text.split()) == ex.meta["length"] and ex.text.startswith(ex.meta["seed"])
        # the seed is the first 5 % of a real answer's words (at least one)
        assert len(ex.meta["seed"].split()) == max(1, -(-ex.meta["length"] * 5 // 100))


# -- fixed seeds, exact outputs (tiny hand-made prompt) ---------------------------------------------------

def test_fixed_seeds_give_exact_outputs() -> None:
    recs = _records(HAND_ANSWERS)
    got = {a.name: [e.text for e in _gen(a, HAND, recs, seed=7)[0]]
           for a in (PromptWords(n=2, count=2), PromptChars(n=3, count=2), RandomChars(count=2))}
    assert got == {
        "PromptWords": ["koala and are specialists eat one panda", "live in both are one food trees"],
        "PromptChars": ["koane e ptheandeatoodas oneyptat hey tha", "tust oe feeslis lithevesspelasreea la a "],
        "RandomChars": ["ml gikxtvtccpuldaacmbfihcizorzzoch hjayd", "djovrzbrcudnxk tblkjwczkpkgqjgqcm  qzpn "],
    }
    again = [e.text for e in _gen(PromptWords(n=2, count=2), HAND, recs, seed=7)[0]]
    other = [e.text for e in _gen(PromptWords(n=2, count=2), HAND, recs, seed=8)[0]]
    assert again == got["PromptWords"] and other != again


def test_word_ngram_table_counts_sentence_ends() -> None:
    t = build_table(["a b c. a b d.", "a b"], "word", 3)
    grams = dict(zip(t.gram_texts(), t.counts.tolist()))
    assert grams == {("a", "b", "c"): 1, ("b", "c", EOS_WORD): 1, ("a", "b", "d"): 1, ("b", "d", EOS_WORD): 1,
                     ("a", "b", EOS_WORD): 1}


def test_ngram_table_when_the_last_sentences_are_shorter_than_n() -> None:
    """Regression (ASAP-SAS prompt 8, word 4-grams): short final sentences start after the last full window."""
    t = build_table(["a b c d e. f g. h."], "word", 4)
    assert t.gram_texts() == [("a", "b", "c", "d"), ("b", "c", "d", "e"), ("c", "d", "e", EOS_WORD),
                              ("f", "g", EOS_WORD), ("h", EOS_WORD)]


def test_kneser_ney_lm_counts_and_samples() -> None:
    lm = KneserNeyTrigramLM.train(["the cat sat. the cat ran. a dog sat."])
    v = len(lm.vocab)
    ids = {w: lm.vocab.index(w) for w in ("the", "cat", "sat", "ran", "a", "dog", ".")}
    lo = np.searchsorted(lm.ctx3, ids["the"] * v + ids["cat"])
    assert sorted(lm.next3[lo:lo + 2].tolist()) == sorted([ids["sat"], ids["ran"]])
    # continuation count of "sat": two distinct left words (cat, dog)
    assert lm.cumulative1[ids["sat"]] - lm.cumulative1[ids["sat"] - 1] == 2
    # interpolated KN by hand (D = 0.75): continuation unigrams N1+(. w) / 11 (sat 2, ran 1),
    # P2(w | cat) = 0.25 / 2 + 0.75 * P1(w), P3(w | the cat) = 0.25 / 2 + 0.75 * P2(w | cat)
    expected = {w: 0.125 + 0.75 * (0.125 + 0.75 * k / 11) for w, k in (("sat", 2), ("ran", 1))}
    rng = np.random.default_rng(0)
    draws = [lm.vocab[lm.next_id(ids["the"], ids["cat"], rng)] for _ in range(4000)]
    assert BOS not in draws and UNK not in draws
    for w, p in expected.items():
        assert abs(draws.count(w) / 4000 - p) < 0.025, (w, draws.count(w) / 4000, p)
    out = lm.continue_text("The cat", 6, np.random.default_rng(1))
    assert sum(t != "." for t in out) == 6


# -- bad input never crashes -------------------------------------------------------------------------------

@pytest.mark.parametrize("texts", [[], ["Pandas."], ["熊猫吃竹子。考拉吃桉树叶。", "Панды едят бамбук."]],
                         ids=["empty-prompt", "one-answer", "other-scripts"])
def test_bad_prompts_give_no_answers_or_sane_ones(texts, small_corpus) -> None:
    recs = _records(texts)
    for attack in (RandomChars(count=5), RandomWords(count=5, corpus=small_corpus), PromptChars(n=5, count=5),
                   PromptWords(n=5, count=5), GenericChars(n=2, count=5, corpus=small_corpus),
                   GenericWords(n=2, count=5, corpus=small_corpus), ContentBurst(count=5),
                   LMGenerate(count=5, corpus=small_corpus)):
        exs, _ = _gen(attack, HAND, recs)
        assert len(exs) <= 5 and all(ex.text.strip() for ex in exs)
        if not texts:
            assert exs == []


def test_unusable_corpora_fail_at_fit_with_the_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"body": "no text key"}\n', encoding="utf-8")
    recs = _records(HAND_ANSWERS)
    for attack, match in ((GenericWords(corpus=str(empty)), "empty"), (RandomWords(corpus=str(tmp_path / "no.txt")),
                          "does not exist"), (LMGenerate(corpus=str(bad)), "field 'text'")):
        with pytest.raises(CorpusError, match=match):
            attack.fit(recs, HAND, RES)


def test_model_dir_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no config.json"):
        LMGenerate(model_dir=str(tmp_path)).fit(_records(HAND_ANSWERS), HAND, RES)


def test_hf_causal_lm_path_on_a_tiny_random_gpt2(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = sorted({w for t in HAND_ANSWERS for w in t.split()} | {"[UNK]", "<|endoftext|>"})
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="<|endoftext|>")
    fast.save_pretrained(tmp_path)
    import torch

    torch.manual_seed(0)  # only to build the random weights of the test model
    GPT2LMHeadModel(GPT2Config(vocab_size=len(words), n_positions=64, n_embd=16, n_layer=1, n_head=2)
                    ).save_pretrained(tmp_path)
    recs = _records(HAND_ANSWERS)
    a = LMGenerate(count=4, model_dir=str(tmp_path))
    exs, state = _gen(a, HAND, recs)
    assert state["lm"].startswith("Hugging Face causal LM") and len(exs) == 4
    for ex in exs:
        assert len(ex.text.split()) == ex.meta["length"] and ex.text.startswith(ex.meta["seed"])
    assert [e.text for e in exs] == [e.text for e in _gen(a, HAND, recs)[0]]


# -- the paper's configurations and the kit ---------------------------------------------------------------

def test_ding2020_configurations_are_the_25_of_figure_1() -> None:
    configs = ding2020_configurations(count=10)
    assert len(configs) == 25
    assert len({(c["attack"], tuple(sorted(c["params"].items()))) for c in configs}) == 25
    for c in configs:
        a = make_attack(c["attack"], **c["params"])
        assert a.expect == "bottom" and a.task == "content"


def test_non_default_configurations_pass_the_kit(small_corpus) -> None:
    for attack in (PromptChars(n=5, count=6), PromptWords(n=1, count=6), GenericChars(n=1, count=6, corpus=small_corpus),
                   GenericWords(n=5, count=6, corpus=small_corpus), LMGenerate(count=6, corpus=small_corpus),
                   RandomWords(count=6, corpus=small_corpus)):
        check_attack(attack)
