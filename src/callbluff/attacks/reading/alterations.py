"""Step (1) of AddSent: perturb the question (Jia & Liang 2017, Sec. 3.1: "we change named entities and
numbers to the nearest word in GloVe word vector space, and nouns and adjectives to their WordNet antonyms";
talk slide 15: "What city did Tesla move to in 1880?" -> "What city did Tadakatsu move to in 1881?").

Following the authors' public implementation, every question token is tried against high-confidence rules
in order; the first rule that yields a usable word alters the token (all alterable tokens are altered at
once, the authors' "-all" mode):

1. ``special``: a small table (largest <-> smallest, highest <-> lowest, US <-> UK, May -> April, ...);
2. ``antonym``: WordNet antonyms of the *first* synset, for nouns and adjectives (``NN``, ``JJ*``);
3. ``nearby-number``: numbers (``CD``) -> nearby numbers (our stand-in for GloVe's neighbours of a number,
   which are numbers close to it: 1880 -> 1881, 1879, 1882, ...);
4. ``nearby-proper-noun``: ``NNP*`` tokens -> among the 100 nearest word vectors (:mod:`.lexicon`), same POS
   tag and, for tokens inside a named entity, the same entity class (the type-indexed lexicon);
5. the same without the POS match;
6. ``nearby-entity-noun``: ``NN*`` tokens inside an entity, same POS and class;
7. ``nearby-entity-adjective``: ``JJ*`` tokens inside an entity, same POS and class;
8. ``entity-type``: a fixed stand-in per entity type (PERSON Jackson, LOCATION Berlin, ORGANIZATION Acme /
   UNICEF, MISC Neptune, other proper nouns Dalek / XKCD / Daleks).

When these high-confidence rules alter no word of the question, the authors' lower-confidence rules
(``ALL_ALTER_RULES`` of their implementation) are tried: ``nearby-adjective`` (``JJ*``) and ``nearby-noun``
(``NN``, ``NNS``) -> among the 100 nearest word vectors with the same POS tag; here (our additions) a WordNet
synonym of the word (a lemma of one of its synsets) is never taken, for the sentence must not restate the
question, and only one word is altered, the rarest in the lexicon's corpus (vocabulary rank; a word outside it
counts as rarest, ties to the later word) among the nouns and adjectives outside the wh-phrase (or in its noun):
altering every common word turns the sentence into noise unrelated to the question. A question that even these leave unaltered gets no AddSent sentence (:mod:`.addsent`).

Two polarity flips that cancel are not made: an adjective right after a flipped degree word
(``most``/``least``/``more``/``less``) keeps its word ("most successful" -> "least successful", never "least
unsuccessful", which means the same as the question).

A replacement must fit its slot (issue 37, :func:`_fits_slot`): a quantifier ``most`` (``most types of``,
``most of``) is not flipped, and an adjective before *to* + a verb becomes only one that takes an infinitive. A possessive apostrophe after an altered word not ending in
``s`` becomes ``'s`` (:func:`perturbed_words`: ``Kuznets' cycles`` -> ``Klavern's cycles``).

"Nearby" words never share a stem with the original (Porter stems, either a prefix of the other), are not
already in the question, and take the original's capitalisation. Words in a small do-not-alter list
(``many``, ``such``, ``type``, ``kind``, ``one``...) and wh-words are left alone. Each altered token keeps its
first ``alternatives`` usable words: AddSent's candidate ``k`` uses each token's ``k``-th word (or its last).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from callbluff.attacks.reading.lexicon import ENTITY_CLASS, Lexicon
from callbluff.resources.wordnet_setup import load_wordnet

if TYPE_CHECKING:  # annotations only: spaCy is imported where a text is parsed, not at start-up
    from spacy.tokens import Doc, Token

SPECIAL = {
    "States": "Kingdom", "US": "UK", "U.S": "U.K.", "U.S.": "U.K.", "UK": "US", "U.K.": "U.S.", "U.K": "U.S.",
    "largest": "smallest", "smallest": "largest", "highest": "lowest", "lowest": "highest", "May": "April",
    "Peyton": "Trevor", "first": "last", "last": "first", "most": "least", "least": "most",
}
DO_NOT_ALTER = frozenset({
    "many", "such", "few", "much", "other", "same", "general", "type", "record", "kind", "sort", "part", "form",
    "terms", "use", "place", "way", "old", "young", "bowl", "united", "one", "likely", "different", "square",
    "war", "republic", "doctor", "color", "name", "year", "years", "number", "percent", "percentage",
})
BAD_ALTERATIONS = frozenset({"mx2004", "planet", "u.s.", "http://www.co.mo.md.us"})
WN_POS = {"NN": "n", "JJ": "a", "JJR": "a", "JJS": "a"}
ENTITY_FALLBACK = {"PERSON": "Jackson", "LOCATION": "Berlin", "ORGANIZATION": "Acme", "MISC": "Neptune"}
NAMED = ("PERSON", "LOCATION", "ORGANIZATION", "MISC")
RULES = ("special", "antonym", "nearby-number", "nearby-proper-noun", "nearby-proper-noun-any-pos",
         "nearby-entity-noun", "nearby-entity-adjective", "entity-type")
NEARBY_RULES = RULES[3:7]
LOW_CONF_RULES = ("nearby-adjective", "nearby-noun")
"""Tried only when the high-confidence ``RULES`` alter nothing in the question (module docstring)."""


@dataclass(frozen=True)
class Alteration:
    """Token ``i`` of the question may become any of ``words`` (best first), by ``rule``."""

    i: int
    original: str
    words: tuple[str, ...]
    rule: str


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(w: str) -> str:
    return _stemmer().stem(w.replace(".", "").lower())


def _match_case(new: str, old: str) -> str:
    if old.isupper() and len(old) > 1:
        return new.upper()
    if old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


@lru_cache(maxsize=50_000)
def antonyms(word: str, wn_pos: str) -> tuple[str, ...]:
    """Single-word antonyms of the lemmas of ``word``'s first WordNet synset of part of speech ``wn_pos``."""
    synsets = load_wordnet().synsets(word.lower(), wn_pos)
    if not synsets:
        return ()
    out: list[str] = []
    for lem in synsets[0].lemmas():
        for a in lem.antonyms():
            if "_" not in a.name() and a.name() not in out:
                out.append(a.name())
    return tuple(out)


def nearby_numbers(text: str, k: int) -> list[str]:
    """Numbers close to ``text`` (+1, -1, +2, -2, ...), formatted like it (thousands commas kept); [] when it
    is not a plain number."""
    raw = text.replace(",", "")
    try:
        value = int(raw)
    except ValueError:
        try:
            fvalue = float(raw)
        except ValueError:
            return []
        return [f"{fvalue + d:g}" for d in (1, -1, 2, -2, 3)[:k] if fvalue + d > 0]
    out = []
    for d in (1, -1, 2, -2, 3, -3)[: 2 * k]:
        v = value + d
        if v <= 0 or str(v) == raw:
            continue
        out.append(f"{v:,}" if "," in text else str(v))
    return out[:k]


def _nearby(tok_text: str, tag: str, cls: str | None, lex: Lexicon, *, match_pos: bool, k: int,
            used: set[str]) -> list[str]:
    w = tok_text.lower()
    stem = _stem(w)
    out: list[str] = []
    for new in lex.nearby(w, 100):
        ns = _stem(new)
        if not ns or stem.startswith(ns) or ns.startswith(stem):
            continue
        if match_pos and lex.tags.get(new) != tag:
            continue
        if cls in NAMED and lex.types.get(new) not in (None, cls):
            continue  # the type-indexed lexicon: an entity word is replaced within its class
        if new in used or new in BAD_ALTERATIONS:
            continue
        out.append(new)
        if len(out) >= k:
            break
    return out


def _entity_type(tok_text: str, tag: str, cls: str | None) -> list[str]:
    abbrev = tok_text.isupper() and tok_text != tok_text.lower()
    if tag not in ("JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "RB", "RBR", "RBS", "VB", "VBD", "VBG", "VBN",
                   "VBP", "VBZ"):
        return []
    if cls == "ORGANIZATION":
        return ["UNICEF" if abbrev else "Acme"]
    if cls in ENTITY_FALLBACK:
        return [ENTITY_FALLBACK[cls]]
    if tag == "NNP":
        return ["XKCD" if abbrev else "Dalek"]
    if tag == "NNPS":
        return ["Daleks"]
    return []


def _alterable(t: Token) -> bool:
    return not (t.is_punct or t.is_space or t.lower_ in DO_NOT_ALTER or t.tag_ in ("WDT", "WP", "WP$", "WRB"))


def _rule_words(rule: str, t: Token, cls: str | None, lex: Lexicon | None, k: int, used: set[str]) -> list[str]:
    """What ``rule`` offers for token ``t`` (before the usability filter of :func:`_usable`); the nearby rules
    need ``lex``."""
    tag = t.tag_
    if rule == "special":
        return [SPECIAL[t.text]] if t.text in SPECIAL else []
    if rule == "antonym":
        return list(antonyms(t.text, WN_POS[tag])) if tag in WN_POS else []
    if rule == "nearby-number":
        return nearby_numbers(t.text, k) if tag == "CD" else []
    if rule in NEARBY_RULES:
        if not _wants_nearby(rule, tag, cls):
            return []
        assert lex is not None, "the nearby rules need the lexicon"
        return _nearby(t.text, tag, cls, lex, match_pos=rule != "nearby-proper-noun-any-pos", k=k, used=used)
    return _entity_type(t.text, tag, cls)


def _wants_nearby(rule: str, tag: str, cls: str | None) -> bool:
    if rule in ("nearby-proper-noun", "nearby-proper-noun-any-pos"):
        return tag in ("NNP", "NNPS")
    if rule == "nearby-entity-noun":
        return tag in ("NN", "NNS") and cls in NAMED
    return tag in ("JJ", "JJR", "JJS") and cls in NAMED


def _usable(cands: list[str], original: str, used: set[str]) -> list[str]:
    return [_match_case(c, original) for c in cands if c.lower() not in used and c.lower() not in BAD_ALTERATIONS]


def alterations(doc: Doc, lex: Lexicon, k: int = 3) -> list[Alteration]:
    """The alteration of each alterable token of question ``doc`` (module docstring), in token order."""
    used = {t.lower_ for t in doc}
    out: list[Alteration] = []
    for t in doc:
        if not _alterable(t):
            continue
        cls = ENTITY_CLASS.get(t.ent_type_)
        for rule in RULES:
            words = [w for w in _usable(_rule_words(rule, t, cls, lex, k, used), t.text, used) if _fits_slot(t, w)]
            if words:
                out.append(Alteration(t.i, t.text, tuple(words[:k]), rule))
                break
    out = _no_cancelling_flips(out)
    if not out and lex is not None:
        out = _low_confidence(doc, lex, k, used)
    return out


DEGREE = frozenset({"most", "least", "more", "less"})
INFINITIVE_ADJECTIVES = frozenset({
    "able", "unable", "likely", "unlikely", "easy", "difficult", "hard", "possible", "impossible", "ready",
    "unready", "willing", "unwilling", "eager", "reluctant", "free", "quick", "slow", "first", "last", "next",
    "happy", "unhappy", "glad", "sad", "sorry", "afraid", "anxious", "keen", "due", "bound", "sure", "unsure",
    "certain", "uncertain", "necessary", "unnecessary", "important", "unimportant", "simple", "complicated",
    "tough", "dangerous", "safe", "unsafe", "expensive", "cheap", "costly", "fit", "unfit", "prepared",
    "unprepared", "determined", "inclined", "disinclined", "liable", "apt", "fast", "careful", "careless", "wise",
    "unwise", "foolish", "right", "wrong", "proud", "ashamed", "lucky", "unlucky", "fortunate", "unfortunate",
    "surprised", "pleased", "displeased", "content", "legal", "illegal", "permitted", "allowed", "forced",
    "obliged", "required", "entitled", "eligible", "ineligible", "intended", "designed", "supposed", "expected",
    "unexpected", "quickest", "slowest", "easiest", "hardest", "earliest", "latest", "simplest", "cheapest",
    "fastest", "safest", "best", "worst", "better", "worse", "easier", "harder", "faster", "slower", "cheaper",
    "safer", "likelier", "useful", "useless", "enough", "sufficient", "insufficient", "convenient",
    "inconvenient", "reasonable", "unreasonable", "fair", "unfair", "normal", "common", "uncommon", "rare",
    "usual", "unusual", "appropriate", "inappropriate", "essential", "vital", "crucial", "challenging",
    "capable", "incapable", "successful", "unsuccessful", "first-ever", "second", "third", "only", "quickly"})
"""Adjectives that take a *to*-infinitive complement ("able to", "difficult to", "the first to"; English usage):
an adjective before *to* + a verb in the question is replaced only by one of these (issue 37's hand check found
"A hamster was destabilizing to reconcile ...")."""


def _fits_slot(t: Token, word: str) -> bool:
    """Whether ``word`` can replace question token ``t`` where it stands (issue 37; kinds found by the hand check,
    rules read on SQuAD *train* questions): ``most``/``least`` used as a quantifier (``most types of``, no
    determiner before it) is not flipped (``least types of`` is not English), and an adjective before *to* + a
    verb becomes only one that takes an infinitive (:data:`INFINITIVE_ADJECTIVES`)."""
    doc = t.doc
    nxt = doc[t.i + 1] if t.i + 1 < len(doc) else None
    if t.lower_ in ("most", "least") and nxt is not None and (nxt.lower_ == "of" or nxt.tag_ in ("NN", "NNS", "JJ")
                                                           and t.dep_ in ("amod", "det", "nummod")) and not (t.i > 0 and doc[t.i - 1].tag_ in ("DT", "PRP$", "POS")):
        return False
    if t.tag_.startswith("JJ") and nxt is not None and nxt.tag_ == "TO" and t.i + 2 < len(doc) \
            and doc[t.i + 2].tag_ == "VB":
        return word.lower() in INFINITIVE_ADJECTIVES
    return True


def _no_cancelling_flips(alts: list[Alteration]) -> list[Alteration]:
    """Drop an adjective's antonym right after a flipped degree word: "most successful" -> "least unsuccessful"
    flips twice and means what the question asks (found by the hand check of the reading findings sample); the
    degree flip alone ("least successful") keeps the question's adjective and changes its meaning."""
    flipped = {a.i for a in alts if a.rule == "special" and a.original.lower() in DEGREE}
    return [a for a in alts if not (a.rule == "antonym" and a.i - 1 in flipped)]


@lru_cache(maxsize=50_000)
def synonyms(word: str, wn_pos: str) -> frozenset[str]:
    """Lower-case lemmas of every WordNet synset of ``word`` with part of speech ``wn_pos``."""
    return frozenset(lem.name().lower() for syn in load_wordnet().synsets(word.lower(), wn_pos)
                     for lem in syn.lemmas())


def _low_confidence(doc: Doc, lex: Lexicon, k: int, used: set[str]) -> list[Alteration]:
    """The lower-confidence alteration (module docstring): nearby adjective or noun, same tag, no WordNet
    synonym, of the rarest usable word."""
    from callbluff.attacks.reading.declarative import wh_phrase

    ph = wh_phrase(doc)
    out: list[Alteration] = []
    for t in doc:
        if not _alterable(t):
            continue
        if ph is not None and ph.start <= t.i < ph.end and not (ph.noun and ph.noun[0] <= t.i < ph.noun[1]):
            continue
        tags = ("JJ", "JJR", "JJS") if t.tag_.startswith("JJ") else ("NN", "NNS") if t.tag_ in ("NN", "NNS") else ()
        if not tags:
            continue
        syn = synonyms(t.text, "a" if tags[0] == "JJ" else "n")
        near = [w for w in _nearby(t.text, t.tag_, None, lex, match_pos=True, k=k + 5, used=used) if w not in syn]
        words = [w for w in _usable(near[:k], t.text, used) if _fits_slot(t, w)]
        if words:
            out.append(Alteration(t.i, t.text, tuple(words), LOW_CONF_RULES[0] if tags[0] == "JJ" else
                                  LOW_CONF_RULES[1]))
    if not out:
        return out
    rank = {a.i: lex.index.get(a.original.lower(), len(lex.words)) for a in out}
    return [max(out, key=lambda a: (rank[a.i], a.i))]


def nearby_lookups(doc: Doc, k: int = 3) -> list[str]:
    """The words (lower case) whose vector neighbours :func:`alterations` will read for question ``doc``:
    alterable tokens that the rules before the nearby ones (special table, antonyms, numbers) leave alone and
    that a nearby rule takes. For a batch of questions, :meth:`Lexicon.nearby_many` of all of them at once
    makes the calls inside :func:`alterations` find their neighbours already computed."""
    used = {t.lower_ for t in doc}
    out: list[str] = []
    for t in doc:
        if not _alterable(t):
            continue
        cls = ENTITY_CLASS.get(t.ent_type_)
        if any(_wants_nearby(rule, t.tag_, cls) for rule in NEARBY_RULES) and not any(
                _usable(_rule_words(rule, t, cls, None, k, used), t.text, used) for rule in RULES[:3]):
            out.append(t.text.lower())
    return out


def perturbed_words(doc: Doc, alts: list[Alteration], variant: int) -> list[str]:
    """The question's token texts with every alteration applied, using each one's ``variant``-th word."""
    words = [t.text for t in doc]
    for a in alts:
        words[a.i] = a.words[min(variant, len(a.words) - 1)]
        if a.i + 1 < len(doc) and doc[a.i + 1].text == "'" and doc[a.i + 1].tag_ == "POS" \
                and not words[a.i].lower().endswith(("s", "z", "x")):
            words[a.i + 1] = "'s"  # "Kuznets' cycles" -> "Klavern's cycles", not "Klavern' cycles" (issue 37)
    return words
