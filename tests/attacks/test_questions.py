"""DPAEG (attacks/questions): Algorithm 1 keywords on the shipped spaCy model's parses, Algorithm 2 word
constraints, Sec. 3.5 epsilon, determinism, bad input, and the conformance kit on every DPAEG attack."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import shared_path

from callbluff.attacks.questions import BASELINES, DPAEG, adversarial_questions, dependency_keywords
from callbluff.attacks.questions import words as aw
from callbluff.attacks.questions.keywords import content_keywords, random_keywords
from callbluff.attacks.questions.words import WN_POS, distance
from callbluff.attacks.base import get_attack
from callbluff.records import OpenQuestion
from callbluff.resources.context import default_resources
from callbluff.resources.typos import load_corpus
from callbluff.seeding import record_rng
from callbluff.testing import parametrize_attack_checks

# hand-parsed against en_core_web_sm 3.8 (the shipped pipeline); Fig. 2 of the paper is the first
KEYWORDS = {
    "Who played the voice of Aladdin?": ["played", "voice", "Aladdin"],
    "What is the capital of France?": ["capital", "France"],
    "Who wrote the novel Pride and Prejudice?": ["wrote", "novel", "Pride", "Prejudice"],
    "How many legs does a spider have?": ["many", "legs", "spider"],
    "What is Canada's largest city?": ["Canada", "largest", "city"],
    "Which river flows through the city where Mozart was born?": ["river", "flows", "city", "Mozart", "born"],
    "When did the Titanic sink?": ["Titanic", "sink"],
    "Where is the Eiffel Tower located?": ["Eiffel", "Tower", "located"],
    "Who invented the telephone?": ["invented", "telephone"],
    "What language do people speak in Brazil?": ["language", "people", "speak", "Brazil"],
    "Which NFL team represented the AFC at Super Bowl 50?": ["NFL", "team", "represented", "AFC", "Super", "Bowl",
                                                            "50"],
    "What year did World War II end?": ["year", "World", "War", "II", "end"],
    "Who was the first president of the United States?": ["first", "president", "United", "States"],
    "What does a thermometer measure?": ["thermometer", "measure"],
    "Who painted the Mona Lisa?": ["painted", "Mona", "Lisa"],
    "How tall is Mount Everest?": ["tall", "Mount", "Everest"],
    "What is the boiling point of water?": ["boiling", "point", "water"],
    "Which planet is closest to the sun?": ["planet", "closest", "sun"],
    "Who discovered penicillin in 1928?": ["discovered", "penicillin", "1928"],
    "What currency is used in Japan?": ["currency", "used", "Japan"],
    "Where did the Wright brothers fly their first airplane?": ["Wright", "brothers", "fly", "first", "airplane"],
    "What instrument did Louis Armstrong play?": ["instrument", "Louis", "Armstrong", "play"],
    "Who directed the movie that won the Oscar in 1998?": ["directed", "movie", "won", "Oscar", "1998"],
    "What causes the tides of the ocean?": ["causes", "tides", "ocean"],
    "Which country gave the Statue of Liberty to America?": ["country", "gave", "Statue", "Liberty", "America"],
    "What did Newton say about gravity?": ["Newton", "say", "gravity"],
    "Who was elected governor of California in 2003?": ["elected", "governor", "California", "2003"],
    "What team did Peyton Manning play for?": ["Peyton", "Manning", "play"],
}
QUESTIONS = [OpenQuestion(f"t{i}", q, ("x",)) for i, q in enumerate(KEYWORDS)]
PINNED = ["Who played the vose of Aladdin?", "Who plays the vice of Aladdin?", "Who plays the vose of Aladdin?"]
"""DPAEG(max_questions=3), seed 0, the four shared typo corpora given as ``../shared/data/typos/...`` (paths
relative to the repository root: the same params, hence the same seed, in any checkout), first question."""


@pytest.fixture(scope="module")
def res():
    return default_resources()


@pytest.fixture(scope="module")
def typo_files() -> Iterator[list[str]]:
    """The shared typo corpora as paths relative to the repository root (the tests run from there). The files
    are attack params, so they are part of every example's seed: absolute paths would make the pinned outputs
    depend on where the checkout lives (CI clones elsewhere)."""
    d = shared_path("data", "typos")
    repo = Path(__file__).resolve().parents[2]
    old = os.getcwd()
    os.chdir(repo)
    try:
        yield [os.path.relpath(d / f, repo) for f in ("missp.dat.gz", "holbrook-missp.dat", "aspell.dat",
                                                       "wikipedia.dat")]
    finally:
        os.chdir(old)


@pytest.mark.parametrize("question", list(KEYWORDS))
def test_algorithm1_keywords(res, question: str) -> None:
    assert [k.text for k in dependency_keywords(res.doc(question))] == KEYWORDS[question]


def test_keyword_spans_and_baselines(res) -> None:
    q = "Who played the voice of Aladdin?"
    keys = dependency_keywords(res.doc(q))
    assert all(q[k.start:k.end] == k.text for k in keys)
    assert [k.text for k in content_keywords(res.doc(q))] == ["played", "voice", "Aladdin"]
    # a smaller relation set finds fewer keywords: without dobj, voice (and Aladdin below it) are not reached
    assert [k.text for k in dependency_keywords(res.doc(q), relations=("nsubj",))] == ["played"]
    doc = res.doc(q)
    a = random_keywords(doc, np.random.default_rng(3), 3)
    assert len(a) == 3 and a == random_keywords(doc, np.random.default_rng(3), 3)
    for q2 in KEYWORDS:  # Algorithm 1 keeps content words only
        assert {k.text for k in dependency_keywords(res.doc(q2))} <= {k.text for k in content_keywords(res.doc(q2))}


def test_typo_parsers_on_the_shared_corpora(typo_files) -> None:
    d = Path(typo_files[0]).parent
    assert len(load_corpus([d / "aspell.dat"])) == 436
    assert load_corpus([d / "aspell.dat"]).typos("accommodate") == ("accomodate", "acommadate")
    holbrook = load_corpus([d / "holbrook-missp.dat"])
    assert "?" not in holbrook.entries and all(" " not in t for ts in holbrook.entries.values() for t in ts)
    tagged = load_corpus([d / "holbrook-tagged.dat.gz"])
    assert len(tagged) > 1000
    assert load_corpus([d / "missp.dat.gz"]).typos("America") == ("Ameraca", "Amercia")
    assert load_corpus([d / "wikipedia.dat"]).typos("Athenian") == ("Athenean",)


def test_tiny_typo_files(tmp_path: Path) -> None:
    (tmp_path / "a.dat").write_text("$voice\nvoise\nvoce\n$two_words\ntoo_words\n$?\nxx\n")
    (tmp_path / "b.txt").write_text("capital capitol capitel\n")
    c = load_corpus([tmp_path / "a.dat", tmp_path / "b.txt"])
    assert c.entries == {"capital": ("capitel", "capitol"), "voice": ("voce", "voise")}
    assert c.typos("Voice") == ("Voce", "Voise")
    with pytest.raises(FileNotFoundError, match="python -m callbluff.resources.typos"):
        load_corpus([tmp_path / "missing.dat"])


def test_every_adversarial_word_obeys_its_constraints(res, typo_files) -> None:
    corpus = load_corpus(typo_files)
    dic = aw.dictionary()
    rule = aw.DistanceRule()
    seen = set()
    # a long adjective (d = 3) reaches typos of a spell-similar word: interested -> interrupted -> interupted
    extra = [("interested", "ADJ"), ("played", "VERB"), ("Aladdin", "PROPN")]
    for q in [*KEYWORDS, ""]:
        pairs = [(k.text, k.pos) for k in dependency_keywords(res.doc(q))] if q else extra
        for text, pos in pairs:
            k = SimpleNamespace(text=text, pos=pos)
            for w in aw.adversarial_words(k.text, k.pos, corpus, dic, rule):
                seen.add(w.kind)
                assert w.word.lower() != k.text.lower()
                assert w.distance == distance(w.word, k.text) and 1 <= w.distance <= 2
                if w.kind == "typo":
                    assert w.word in corpus.typos(k.text)
                    continue
                similar = w.word if w.kind == "similar" else w.via
                assert similar.lower() in dic
                assert similar[0].lower() == k.text[0].lower() and similar[-1].lower() == k.text[-1].lower()
                assert 1 <= distance(similar, k.text) <= rule(k.text, k.pos)
                assert WN_POS[k.pos] in dict(zip(*dic.candidates(similar)))[similar.lower()]
                if k.pos == "VERB":
                    assert distance(similar, k.text) == 1
                if w.kind == "similar-typo":
                    assert w.word in corpus.typos(similar) and distance(similar, k.text) > 2
    assert seen == {"typo", "similar", "similar-typo"}


def test_pos_modes_partition_the_spell_similar_words() -> None:
    dic = aw.dictionary()
    same = {w for w, _ in aw.spell_similar("played", "VERB", dic, 1, "same")}
    diff = {w for w, _ in aw.spell_similar("played", "VERB", dic, 1, "different")}
    anyp = {w for w, _ in aw.spell_similar("played", "VERB", dic, 1, "any")}
    assert "prayed" in same and same.isdisjoint(diff) and same | diff == anyp


@pytest.mark.parametrize("name", ["DPAEG", *BASELINES])
def test_questions_obey_epsilon_and_meta(res, typo_files, name: str) -> None:
    cls = get_attack(name)
    a = cls(typo_files=typo_files) if cls is DPAEG else cls()
    n = 0
    for r in QUESTIONS:
        for ex in a.examples(r, record_rng(0, r.id, a.name, a.params_dict), res):
            n += 1
            d = distance(ex.text, r.question)
            assert ex.meta["edit_distance"] == d and ex.meta["original"] == r.question and ex.field == "question"
            if a.params.epsilon is not None:
                assert d <= a.params.epsilon
            reps = ex.meta["replacements"]
            assert 1 <= len(reps) and {x["keyword"] for x in reps} <= {k["text"] for k in ex.meta["keywords"]}
            for x in reps:
                assert r.question[x["start"]:x["end"]] == x["keyword"]
        assert len(a.examples(r, record_rng(0, r.id, a.name, a.params_dict), res)) <= a.params.max_questions
    assert n > 0


@pytest.mark.parametrize("epsilon", [1, 2, 6])
def test_epsilon_sweep(res, typo_files, epsilon: int) -> None:
    a = DPAEG(typo_files=typo_files, epsilon=epsilon, max_questions=1000)
    r = QUESTIONS[0]
    got = a.examples(r, record_rng(0, r.id, a.name, a.params_dict), res)
    assert got and all(distance(e.text, r.question) <= epsilon for e in got)
    if epsilon == 1:
        assert all(len(e.meta["replacements"]) == 1 for e in got)


def test_fixed_seeds_give_identical_questions(res, typo_files) -> None:
    for name in ("DPAEG", "DPAEGRandomKeywords", "NoiseScramble", "DPAEGRandomChars"):
        cls = get_attack(name)
        runs = []
        for _ in range(2):
            a = cls(typo_files=typo_files, max_questions=5) if cls is DPAEG else cls(max_questions=5)
            runs.append([(e.id, e.text) for r in QUESTIONS for e in
                         a.examples(r, record_rng(7, r.id, a.name, a.params_dict), res)])
        assert runs[0] == runs[1] and runs[0]
        other = [(e.id, e.text) for r in QUESTIONS for e in
                 a.examples(r, record_rng(8, r.id, a.name, a.params_dict), res)]
        assert other != runs[0]


def test_cap_draws_a_subset_in_enumeration_order(res, typo_files) -> None:
    r = QUESTIONS[0]
    full = DPAEG(typo_files=typo_files, max_questions=1000)
    capped = DPAEG(typo_files=typo_files, max_questions=5)
    all_texts = [e.text for e in full.examples(r, record_rng(0, r.id, full.name, full.params_dict), res)]
    some = [e.text for e in capped.examples(r, record_rng(0, r.id, capped.name, capped.params_dict), res)]
    assert len(all_texts) > 5 and len(some) == 5
    assert [t for t in all_texts if t in some] == some


@pytest.mark.parametrize("question, reason", [("", "empty"), ("   ?", "empty"), ("Aladdin?", "one-word"),
                                              ("Кто написал Войну и мир?", "non-latin"),
                                              ("What is it?", "no-keyword")])
def test_bad_input_gives_no_example_and_a_counted_reason(res, typo_files, question: str, reason: str) -> None:
    a = DPAEG(typo_files=typo_files)
    r = OpenQuestion("bad", question, ("x",))
    assert a.examples(r, record_rng(0, r.id, a.name, a.params_dict), res) == []
    assert a.skipped == {reason: 1}


def test_adversarial_questions_prunes_and_orders() -> None:
    from callbluff.attacks.questions.keywords import Keyword

    q = "Who played the voice of Aladdin?"
    keys = [Keyword("played", 4, 10, "VERB", "VBD", 1), Keyword("voice", 15, 20, "NOUN", "NN", 3)]
    words = [[aw.AdversarialWord("plaed", "typo", 1), aw.AdversarialWord("plated", "similar", 3)],
             [aw.AdversarialWord("voise", "typo", 1)]]
    got = adversarial_questions(q, keys, words, epsilon=2)
    assert [(t, d) for t, d, _ in got] == [("Who plaed the voice of Aladdin?", 1),
                                           ("Who played the voise of Aladdin?", 1),
                                           ("Who plaed the voise of Aladdin?", 2)]


@parametrize_attack_checks([get_attack(n) for n in ("DPAEG", *BASELINES)])
def test_dpaeg_attacks_pass_the_kit(attack, check) -> None:
    check(attack)


# -- speed machinery (issue 13): same outputs as the plain enumeration / per-question parse ------------------

def test_combination_space_equals_the_enumeration() -> None:
    from callbluff.attacks.questions.attacks import CombinationSpace, combinations

    rng = np.random.default_rng(5)
    for trial in range(400):
        order = sorted if trial % 7 else list  # every 7th trial: distances not sorted (the scan stops early)
        words = [[aw.AdversarialWord(f"w{j}", "typo", d) for j, d in
                  enumerate(order(int(x) for x in rng.integers(0 if trial % 4 == 0 else 1, 5,
                                                               size=int(rng.integers(0, 6)))))]
                 for _ in range(int(rng.integers(0, 6)))]
        eps = [None, 1, 2, 4, 6][trial % 5]
        mk = [None, 1, 2][trial % 3]
        limit = [5000, 7][trial % 2]
        space = CombinationSpace(words, eps, mk, limit)
        assert [space[i] for i in range(len(space))] == combinations(words, eps, mk, limit)
    with pytest.raises(IndexError):
        CombinationSpace([[aw.AdversarialWord("a", "typo", 1)]], 4)[1]


def test_combination_space_counts_without_listing() -> None:
    """30 keywords x 40 words each, epsilon 4: 4.5 billion combinations within epsilon (capped at the
    enumeration limit) are counted and the last one built directly."""
    from callbluff.attacks.questions.attacks import ENUM_LIMIT, CombinationSpace, combinations

    words = [[aw.AdversarialWord(f"k{i}w{j}", "typo", 1 + j // 20) for j in range(40)] for i in range(30)]
    space = CombinationSpace(words, 4, limit=10**12)
    singles, pairs = 30 * 40, 435 * (40 * 40)  # pairs: every distance sum is <= 4
    triples = 4060 * 20 ** 3 * 4  # one word of distance 2 at most among three (1+1+1, 2+1+1 in 3 places)
    quads = 27405 * 20 ** 4
    assert len(space) == singles + pairs + triples + quads
    assert space[len(space) - 1] == ((26, 19), (27, 19), (28, 19), (29, 19))
    capped = CombinationSpace(words, 4)
    assert len(capped) == ENUM_LIMIT and capped[ENUM_LIMIT - 1] == combinations(words, 4)[-1]


def test_one_letter_noise_draws_like_the_plain_choice() -> None:
    """noise() draws one letter position with ``rng.integers(n)`` instead of ``rng.choice(n, size=1,
    replace=False)``: same value and same generator state after it (else seeded outputs would change), and the
    one-letter operations' words are at distance 1 as noisy_words records without computing it."""
    for seed in range(300):
        for n in (1, 2, 3, 5, 9, 14):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            assert int(a.choice(n, size=1, replace=False)[0]) == int(b.integers(n))
            assert a.integers(1 << 40) == b.integers(1 << 40)
    rng = np.random.default_rng(3)
    for word in ("Aladdin", "voice", "IPA", "x", "naïve", "O'Neil", "2nd"):
        for op in aw.ONE_LETTER_OPS:
            got = aw.noisy_words(word, op, rng, 5)
            assert got and all(w.distance == distance(w.word, word) == 1 for w in got)


def test_batch_parse_is_the_per_question_parse(typo_files) -> None:
    from callbluff.resources.context import Resources

    batch, single = Resources(), Resources()
    docs = batch.dependency_docs(list(KEYWORDS))
    assert all(batch.dependency_doc(q) is d for q, d in zip(KEYWORDS, docs))  # cached, not parsed again
    for q, d in zip(KEYWORDS, docs):
        s = single.dependency_doc(q)
        assert [(t.text, t.pos_, t.tag_, t.dep_, t.head.i, t.lemma_) for t in d] == \
               [(t.text, t.pos_, t.tag_, t.dep_, t.head.i, t.lemma_) for t in s]
    a, b = DPAEG(typo_files=typo_files), DPAEG(typo_files=typo_files)
    a.prefetch(QUESTIONS, batch)
    for r in QUESTIONS:
        assert [e.text for e in a.examples(r, record_rng(0, r.id, a.name, a.params_dict), batch)] == \
               [e.text for e in b.examples(r, record_rng(0, r.id, b.name, b.params_dict), single)]


def test_lemmas_on_demand_equal_the_lemmatizer() -> None:
    """DPAEG parses without the lemmatizer and reads lemmas through ``Resources.lemma``: every token's lemma
    equals the one the full pipeline sets, and a doc cached without lemmas gets exactly those lemmas when a
    caller that needs them (the essay attacks) asks for the same text."""
    import itertools

    from callbluff.datasets import load
    from callbluff.resources.context import Resources

    ds = load(f"asap-sas:{shared_path('data', 'asap-sas', 'train.tsv.gz')}")
    texts = list(KEYWORDS) + [a.text for a in itertools.islice(ds, 0, 1500, 15)] + ["I'm gonna go, y'all."]
    bare, full = Resources(), Resources()
    docs = bare.dependency_docs(texts, lemmas=False)
    assert all(t.lemma == 0 for t in docs[0])  # the lemmatizer did not run
    for d, f in zip(docs, full.dependency_docs(texts), strict=True):
        assert [bare.lemma(t) for t in d] == [t.lemma_ for t in f]
    assert bare.dependency_doc(texts[-1]) is docs[-1]  # asked with lemmas: the cached doc, now lemmatized
    assert [t.lemma_ for t in docs[-1]] == [t.lemma_ for t in full.dependency_doc(texts[-1])]
    assert texts[-1] not in bare._unlemmatized and texts[0] in bare._unlemmatized


def test_exact_questions_for_a_fixed_seed(res, typo_files) -> None:
    """Pinned outputs (seed 0, the shared typo corpora): any change to keywords, words, enumeration or the
    cap's draw shows here."""
    a = DPAEG(typo_files=typo_files, max_questions=3)
    r = QUESTIONS[0]
    got = [e.text for e in a.examples(r, record_rng(0, r.id, a.name, a.params_dict), res)]
    assert got == PINNED


def test_typo_corpus_requirement(monkeypatch, tmp_path: Path) -> None:
    from callbluff.resources.requirements import REQUIREMENTS

    monkeypatch.delenv("CALLBLUFF_TYPOS", raising=False)
    monkeypatch.setenv("CALLBLUFF_HOME", str(tmp_path))
    problem = REQUIREMENTS["typos"].check()
    assert problem is not None and "python -m callbluff.resources.typos" in problem and "CALLBLUFF_TYPOS" in problem
    monkeypatch.setenv("CALLBLUFF_TYPOS", str(tmp_path / "nope.dat"))
    assert "nope.dat" in (REQUIREMENTS["typos"].check() or "")
    (tmp_path / "mine.dat").write_text("$voice\nvoise\n")
    monkeypatch.setenv("CALLBLUFF_TYPOS", str(tmp_path / "mine.dat"))
    assert REQUIREMENTS["typos"].check() is None
    assert "typos" in DPAEG().requires and "typos" not in DPAEG(typo_files=["x.dat"]).requires
    assert "typos" not in get_attack("NoiseSwap")().requires


REAL_PINNED = {
    "NoiseKeyboard": [[("placed", "poaced"), ("use", "uee")],
                      [("need", "nsed"), ("pour", "poyr"), ("determine", "determone")],
                      [("information", "infodmation"), ("replicate", "replixate"), ("material", "naterial")],
                      [("need", "nsed"), ("vinegar", "vinefar"), ("people", "psople")]],
    "NoiseReplace": [[("experiment", "expernment"), ("vinegar", "viaegar")],
                     [("need", "reed"), ("Vinegar", "Vanegar"), ("items", "itebs")],
                     [("Additional", "Adiitional"), ("equipment", "equipbent"), ("used", "usee")],
                     [("pour", "pouy"), ("know", "knot")]],
    "NoiseSwap": [[("additional", "additinoal"), ("experiment", "expreiment"), ("samples", "sapmles")],
                  [("containers", "cotnainers"), ("mass", "msas"), ("items", "ietms")],
                  [("replicate", "rpelicate"), ("materials", "mateirals"), ("much", "mcuh")],
                  [("vinegar", "vineagr"), ("people", "poeple"), ("know", "konw")]],
}
"""max_questions=1, seed 0, ASAP-SAS answers 0, 20, 40, 60 of train.tsv.gz taken as questions (the peers
benchmark's rows): the replacements made before the speed work of issue 15, pinned so that no speed-up may
change an output."""


@pytest.mark.parametrize("name", list(REAL_PINNED))
def test_real_answers_pinned_and_batch_equals_single(name: str) -> None:
    import itertools

    from callbluff.datasets import load
    from callbluff.resources.context import Resources

    ds = load(f"asap-sas:{shared_path('data', 'asap-sas', 'train.tsv.gz')}")
    qs = [OpenQuestion(a.id, a.text) for a in itertools.islice(ds, 0, 200, 20)]
    batch, single = Resources(), Resources()
    a, b = get_attack(name)(max_questions=1), get_attack(name)(max_questions=1)
    a.prefetch(qs, batch)
    got = [[(e.id, e.text, e.meta) for e in a.examples(q, record_rng(0, q.id, a.name, a.params_dict), batch)]
           for q in qs]
    assert got == [[(e.id, e.text, e.meta) for e in b.examples(q, record_rng(0, q.id, b.name, b.params_dict),
                                                                 single)] for q in qs]
    assert [[(r["keyword"], r["word"]) for r in ex[0][2]["replacements"]] for ex in got[:4]] == REAL_PINNED[name]
