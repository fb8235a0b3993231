"""Modify family of Kumar et al. 2020, "Calling Out Bluff" (Sec. 3.2, "Majorly Syntax-Modifying Adversaries").

``ModGrammar`` (Table 3), ``ModFluency``, ``ModLexicon`` and ``ShuffleSent`` (Table 1). Parse-based ones
read the one cached parse of a response (:func:`full_parse`: tags, lemmas, dependencies, no NER) and work
inside the edit toolkit's sentence units, so size and position (Sec. 3.1) are counted in sentences.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from functools import lru_cache
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.edits import Edit, Position, SizePositionParams, Unit, apply, select, units
from callbluff.attacks.essay.common import KUMAR
from callbluff.attacks.shuffling import changing_permutation
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import DEPENDENCY_CACHE_SIZE, Resources

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


class ShuffleSentParams(AttackParams):
    """ShuffleSent has no size or position criterion: the paper shuffles *all* sentences (Sec. 3.2)."""

    min_sentences: int = 2


@register
class ShuffleSent(StaticAttack[ShuffleSentParams]):
    """Randomly shuffle the sentences of a response (Kumar et al. 2020, Sec. 3.2, Table 1 "ShuffleSent").

    "We randomly shuffled all the sentences of the response. This ensured that readability and coherence of
    the response are affected [...] the transition between the lines is also lost." Humans lower the score
    (Sec. 4.1), so a robust scorer lowers it too (``expect = "lower"``); one whose score does not drop is
    overstable.

    Assumptions where the paper is silent: sentences are spaCy's statistical sentences (edit-toolkit
    sentence units); sentence *slots* keep their place and the text between them (spaces, line and paragraph
    breaks) is kept byte for byte, only the sentences move; the drawn order always differs from the
    original (an identity draw is redrawn); responses with fewer than ``min_sentences`` sentences (or whose
    sentences are all identical) yield no example. ``meta`` keeps the new order, the original sentence spans
    and the edits (source and output spans of every moved sentence).
    """

    name = "ShuffleSent"
    task = "essay"
    family = "modify"
    paper = KUMAR
    description = "Shuffle the sentences of a response (loses transitions and coherence)."
    Params = ShuffleSentParams
    record_type = ScoredResponse
    requires = ("spacy",)
    expect = "lower"

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        sentences = units(record.text, "sentence", res)
        if len(sentences) < self.params.min_sentences:
            return []
        order = changing_permutation([s.text for s in sentences], rng)
        if order is None:
            return []
        moves = [Edit(slot.start, slot.end, sentences[src].text)
                 for slot, src in zip(sentences, order) if sentences[src].text != slot.text]
        text, edits = apply(record.text, moves)
        return [self.perturbed(record, text, order=order, sentence_spans=[[s.start, s.end] for s in sentences],
                               n_sentences=len(sentences), edits=edits)]


# -- shared by the Mod adversaries below -----------------------------------------------------------------

def sentence_tokens(doc: Doc, sentence: Unit, starts: Sequence[int]) -> list[Token]:
    """The non-space tokens of ``doc`` inside the edit toolkit's ``sentence`` unit (same tokenizer, so the
    token boundaries of the full parse and of the sentence splitter agree); ``starts`` are the character
    offsets of the doc's tokens (``[t.idx for t in doc]``, computed once per doc)."""
    lo, hi = bisect_left(starts, sentence.start), bisect_left(starts, sentence.end)
    return [t for t in doc[lo:hi] if not t.is_space]


def full_parse(text: str, res: Resources) -> Doc | None:
    """The one cached parse of ``text`` that the Mod adversaries share: POS, lemmas and the dependency parse
    (``res.dependency_doc``: the pipeline without NER, whose own token vectors change no tag, lemma or arc;
    no Mod adversary reads entities), or None when ``text`` is longer than the pipeline's ``max_length``
    (spaCy refuses it; the attack then makes no example rather than failing the record)."""
    if len(text) > res.nlp.max_length:
        return None
    return res.dependency_doc(text)


def prefetch_parses(records: Sequence[Record], res: Resources) -> None:
    """Parse the essays of a batch of records in one ``nlp.pipe`` (``res.dependency_docs``) before the
    per-record calls, so that :func:`full_parse` finds them cached: ModGrammar and ModLexicon then share one
    parse per essay (the engine calls an attack's ``prefetch`` once per task; the second finds every essay
    cached); outputs are the same with or without it. Essays longer than the pipeline's ``max_length`` are
    left out."""
    limit = res.nlp.max_length
    texts = [r.text for r in records if isinstance(r, ScoredResponse) and r.text.strip() and len(r.text) <= limit]
    res.dependency_docs(texts[:DEPENDENCY_CACHE_SIZE], batch_size=32)


def match_case(word: str, like: str) -> str:
    """``word`` cased like ``like`` (all caps, capitalised, or as given)."""
    if len(like) > 1 and like.isupper():
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def pick_units(candidates: list[int], params: SizePositionParams, rng: np.random.Generator) -> list[int]:
    """Kumar et al. 3.1 size x position over the sentences an adversary can change (``candidates``, sentence
    indices in text order): the edit toolkit's ``select`` on that list."""
    return [candidates[i] for i in select(len(candidates), params.percent, params.position, rng)]


class ModParams(SizePositionParams):
    """ModGrammar / ModLexicon change *every* sentence by default (Sec. 3.2: "a triplet [...] is selected from
    each sentence", "one word [...] in each sentence of the response"): ``percent=100``, no position. Lower
    ``percent`` and a ``position`` give the Sec. 3.1 grid."""

    percent: float = Field(100.0, gt=0, le=100)


# -- ModGrammar ------------------------------------------------------------------------------------------

SUBJECT_DEPS = ("nsubj", "nsubjpass", "csubj", "expl")
VERB_GROUP_DEPS = ("aux", "auxpass", "neg")
OBJECT_DEPS = ("dobj", "attr", "acomp", "oprd", "dative", "prep")
ARTICLE_ERRORS = {"a": "the", "an": "the"}
"""Article errors (Table 3: "for a walk" -> "for the walk"); "the" becomes the *wrong* indefinite form
("the park" -> "an park", "the apple" -> "a apple")."""
INFORMAL = {"to": "2", "too": "2", "for": "4", "you": "u", "your": "ur", "and": "&"}
"""Informal conventions: Table 3 (to -> 2, for -> 4) and the authors' notebook (you -> u, and -> &), plus
too -> 2 and your -> ur, their usual texting forms."""
BE_AGREEMENT = {"is": "are", "are": "is", "am": "is", "was": "were", "were": "was"}
PERMUTATIONS = [p for p in itertools.permutations(range(3)) if p != (0, 1, 2)]


def _span(tokens: Sequence[Token]) -> tuple[int, int]:
    return tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)


def svo_slots(tokens: list[Token]) -> list[tuple[int, int]] | None:
    """Character spans of the subject, verb group and object of a sentence (Table 3: "Anita" / "is going" /
    "to the park"), in text order, from the dependency parse; None when the sentence has no such triplet.

    The verb is the first verbal root in the sentence; the subject its first subject dependent's subtree;
    the verb group the root with its auxiliaries and negation; the object the subtree of its first object,
    attribute, complement or prepositional dependent after the verb."""
    inside = {t.i for t in tokens}
    root = next((t for t in tokens if t.dep_ == "ROOT" and t.pos_ in ("VERB", "AUX")), None)
    if root is None:
        return None
    subj = next((c for c in root.lefts if c.dep_ in SUBJECT_DEPS), None)
    obj = next((c for c in root.rights if c.dep_ in OBJECT_DEPS), None)
    if subj is None or obj is None:
        return None
    group = [c for c in root.lefts if c.dep_ in VERB_GROUP_DEPS and c.i > subj.right_edge.i]
    v_lo = min([c.i for c in group] + [root.i])
    doc = root.doc
    pieces = [doc[subj.left_edge.i: subj.right_edge.i + 1], doc[v_lo: root.i + 1],
              doc[obj.left_edge.i: obj.right_edge.i + 1]]
    if not all(t.i in inside for p in pieces for t in p):
        return None
    if not (pieces[0][-1].i < pieces[1][0].i and pieces[1][-1].i < pieces[2][0].i):
        return None
    return [_span(p) for p in pieces]


def _has_subject(t: Token) -> bool:
    if any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children):
        return True
    return t.dep_ in ("aux", "auxpass") and any(c.dep_ in ("nsubj", "nsubjpass") for c in t.head.children)


def _agreement_error(t: Token) -> tuple[int, str] | None:
    """(end char, replacement) breaking the agreement of finite verb ``t`` with its subject, or None.

    Present progressive collapses to the bare verb (Table 3: "Anita is going" -> "Anita go"); forms of *be*
    swap number (is <-> are, was <-> were, am -> is); other 3rd-person singular present verbs lose their
    -s (goes -> go), other present verbs gain it (like -> likes), through lemminflect."""
    from lemminflect import getInflection

    low = t.lower_
    if t.tag_ not in ("VBZ", "VBP") and low not in ("was", "were"):  # the cheapest test first
        return None
    if t.text.startswith("'") or not t.is_alpha or not _has_subject(t):
        return None
    head = t.head
    if (t.lemma_ == "be" and t.tag_ in ("VBZ", "VBP") and t.dep_ == "aux" and head.tag_ == "VBG"
            and head.i == t.i + 1):
        return head.idx + len(head.text), match_case(head.lemma_.lower(), t.text)
    if low in BE_AGREEMENT:
        return t.idx + len(t.text), match_case(BE_AGREEMENT[low], t.text)
    if t.tag_ == "VBZ":
        base = t.lemma_.lower()
    else:
        forms = getInflection(t.lemma_.lower(), tag="VBZ")
        base = forms[0] if forms else ""
    if not base or base == low:
        return None
    return t.idx + len(t.text), match_case(base, t.text)


def _informal(word: str, token: Token, first: bool) -> str:
    low = word.lower()
    if low in INFORMAL:
        return INFORMAL[low]
    if first or token.pos_ == "PROPN" or word == "I":
        return word.lower()
    return word


def _source(tokens: list[Token], start: int, end: int) -> str:
    """The sentence's text between character offsets ``start`` and ``end`` (``Doc.text`` would rebuild the
    whole response's text at every call)."""
    return "".join(t.text_with_ws for t in tokens if start <= t.idx < end)[: end - start]


def error_edits(tokens: list[Token]) -> list[Edit]:
    """Table 3's second test case on one sentence: article errors, then subject-verb agreement errors,
    then informal conventions (to -> 2, for -> 4, you -> u, and -> &, lower-cased names, sentence-initial
    word and "I", no final full stop)."""
    replaced: dict[int, tuple[int, int, str]] = {}  # token index -> (start, end, text) of its new form
    for t in tokens:
        low = t.lower_
        if t.pos_ == "DET" and low in ARTICLE_ERRORS:
            replaced[t.i] = (t.idx, t.idx + len(t.text), match_case(ARTICLE_ERRORS[low], t.text))
        elif t.pos_ == "DET" and low == "the" and t.i + 1 < len(t.doc):
            wrong = "a" if t.doc[t.i + 1].lower_[:1] in "aeiou" else "an"
            replaced[t.i] = (t.idx, t.idx + len(t.text), match_case(wrong, t.text))
    skip: set[int] = set()
    for t in tokens:
        if t.i in replaced or t.i in skip:
            continue
        err = _agreement_error(t)
        if err is not None:
            end, word = err
            replaced[t.i] = (t.idx, end, word)
            skip.update(u.i for u in tokens if t.idx < u.idx < end)
    edits = []
    for n, t in enumerate(tokens):
        if t.i in skip:
            continue
        new = replaced.get(t.i)
        start, end, word = new or (t.idx, t.idx + len(t.text), t.text)
        if n == len(tokens) - 1 and t.text == "." and n > 0:
            word = ""
        else:
            word = _informal(word, t, first=(n == 0))
        if word != (_source(tokens, start, end) if new else t.text):  # a token's own span is its text
            edits.append(Edit(start, end, word))
    return edits


class ModGrammarParams(ModParams):
    """``variant``: "svo" (Table 3 row "Subject-verb-object Errors") or "errors" (the rows "Article Errors",
    "Subject Verb Agreement Errors" and "Conventional Errors" applied in turn, as the paper's second test
    case)."""

    variant: Literal["svo", "errors"] = "errors"


@register
class ModGrammar(StaticAttack[ModGrammarParams]):
    """Make the sentences ungrammatical (Kumar et al. 2020, Sec. 3.2 "ModGrammar", Table 3).

    Two test cases, ``variant``:

    - ``"svo"``: "changing the subject-verb-object (SVO) triplet of a sentence. A triplet of this form is
      selected from each sentence and jumbled up" ("Anita is going to the park" -> "Anita to the park is
      going"). The triplet comes from the dependency parse (:func:`svo_slots`); its three parts trade places
      by a permutation other than the identity, drawn uniformly from ``rng``; the text between them stays.
    - ``"errors"`` (default; the authors' notebook implements this one): "we first induce some article errors
      by replacing the articles of a sentence with their common incorrect forms. Then we alter the
      subject-verb agreement of that sentence. Following that, we replace a few selected words with their
      corresponding informal conventions" (:func:`error_edits`; Table 3 turns "Anita is going to the park
      for a walk." into "anita go 2 an park 4 the walk").

    Choices where the paper is silent: every sentence by default ("each sentence", whole response in Sec. 4);
    ``percent`` / ``position`` select among the sentences the variant can change (a sentence without an SVO
    triplet, or that the rules leave as it is, is not a unit); moved and replaced words keep their own
    casing except where the conventions lower-case them; word-level rules use the parse's tokens, not the
    notebook's substring replacements (which also turned "his" into "hin" and "these" into "thee"). Texts
    longer than the spaCy pipeline's ``max_length`` yield nothing. ``meta``: the changed sentence indices and
    the edits (and the SVO orders drawn).
    """

    name = "ModGrammar"
    task = "essay"
    family = "modify"
    paper = KUMAR
    description = "Jumble subject, verb and object, or add article, agreement and informal-spelling errors."
    Params = ModGrammarParams
    record_type = ScoredResponse
    requires = ("spacy", "spacy-parse", "lemminflect")
    expect = "lower"

    def prefetch(self, records: Sequence[Record], res: Resources) -> None:
        """One batched parse of the task's essays (:func:`prefetch_parses`)."""
        prefetch_parses(records, res)

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        doc = full_parse(record.text, res)
        if doc is None:
            return []
        sentences = units(record.text, "sentence", res)
        starts = [t.idx for t in doc]
        svo = self.params.variant == "svo"
        slot_plans: dict[int, list[tuple[int, int]]] = {}  # svo: the triplet's spans per sentence
        edit_plans: dict[int, list[Edit]] = {}  # errors: the sentence's edits
        for s in sentences:
            tokens = sentence_tokens(doc, s, starts)
            if not tokens:
                continue
            if svo:
                slots = svo_slots(tokens)
                if slots:
                    slot_plans[s.index] = slots
            else:
                changes = error_edits(tokens)
                if changes:
                    edit_plans[s.index] = changes
        picked = pick_units(sorted(slot_plans if svo else edit_plans), self.params, rng)
        if not picked:
            return []
        edits: list[Edit] = []
        orders = []
        for i in picked:
            if svo:
                slots = slot_plans[i]
                order = PERMUTATIONS[int(rng.integers(0, len(PERMUTATIONS)))]
                orders.append(list(order))
                edits += [Edit(a, b, record.text[slots[src][0]:slots[src][1]]) for (a, b), src in zip(slots, order)]
            else:
                edits += edit_plans[i]
        text, meta = apply(record.text, edits)
        if text == record.text:
            return []
        extra = {"orders": orders} if orders else {}
        return [self.perturbed(record, text, variant=self.params.variant, sentences=picked,
                               n_sentences=len(sentences), edits=meta, **extra)]


# -- ModFluency ------------------------------------------------------------------------------------------

FILLERS = ("huh", "uh", "erm", "um", "well", "so", "like", "hmm", "I mean", "ahhh")
"""Filler words of Sec. 3.2 (footnote: "huh", "uh", "erm", "um", "well", "so", "like", "hmm") and of the
authors' notebook ("I mean", "Ahhh")."""
ELLIPSIS = "\u2026"


class ModFluencyParams(SizePositionParams):
    """``mode``: "disfluency" (first words of alternate sentences repeated), "fillers" (a filler word before
    ``percent`` % of the sentences) or "both". ``percent`` defaults to 25 (the notebook's ceil(mean sentences
    / 4) fillers per essay); ``repeat_words`` is how many opening words are repeated."""

    percent: float = Field(25.0, gt=0, le=100)
    mode: Literal["disfluency", "fillers", "both"] = "both"
    repeat_words: int = Field(1, ge=1, le=5)


@register
class ModFluency(StaticAttack[ModFluencyParams]):
    """Induce the disfluencies of speech (Kumar et al. 2020, Sec. 3.2 "ModFluency").

    "For introducing disfluency, we repeat a few words at the start of each alternate sentence in a
    paragraph. For example, I like apples becomes I ... I like apples. For introducing filler words, we make
    a list of some common the filler words and introduce them randomly in sentences according to the
    criterion S" ("Well...I would like to tell you [...]").

    ``mode="disfluency"``: the first ``repeat_words`` words of every other sentence (the 1st, 3rd, ... of the
    ``position`` third, or of the response) are repeated before it: "I \u2026 I like apples".
    ``mode="fillers"``: ``percent`` % of the sentences (edit toolkit ``select`` inside the ``position`` third)
    get a filler drawn uniformly from :data:`FILLERS`, capitalised, before them: "Well\u2026 I would like".
    ``mode="both"`` (default: the paper does both) applies the two.

    Choices where the paper is silent: fillers go before sentences, as in the authors' notebook (not inside
    them); the repeated words are the sentence's first word tokens with a letter or digit, as written; the
    size criterion does not apply to the alternate-sentence repetition (the paper fixes it at every other
    sentence); the ellipsis is U+2026 followed by a space. A text without a word yields nothing. ``meta``:
    per changed sentence, its index, the filler and the repeated words; and the edits.
    """

    name = "ModFluency"
    task = "essay"
    family = "modify"
    paper = KUMAR
    description = "Repeat the first words of alternate sentences and put filler words before sentences."
    Params = ModFluencyParams
    record_type = ScoredResponse
    requires = ("spacy",)
    expect = "lower"

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        text = record.text
        words = [w for w in units(text, "word", res) if any(c.isalnum() for c in w.text)]
        starts = [w.start for w in words]
        sentences, first_word = [], []  # sentences with a word, and the index of their first word
        for s in units(text, "sentence", res):
            j = bisect_left(starts, s.start)
            if j < len(words) and words[j].start < s.end:
                sentences.append(s)
                first_word.append(j)
        if not sentences:
            return []
        mode = self.params.mode
        repeats: dict[int, str] = {}
        if mode in ("disfluency", "both"):
            lo, hi = (0, len(sentences)) if self.params.position is None else \
                Position(self.params.position).slice_bounds(len(sentences))
            for i in range(lo, hi, 2):
                j, end = first_word[i], sentences[i].end
                first = [w for w in words[j: j + self.params.repeat_words] if w.start < end]
                repeats[i] = text[first[0].start:first[-1].end]
        fillers: dict[int, str] = {}
        if mode in ("fillers", "both"):
            for i in select(len(sentences), self.params.percent, self.params.position, rng):
                f = FILLERS[int(rng.integers(0, len(FILLERS)))]
                fillers[i] = f[:1].upper() + f[1:]
        changed = sorted(set(repeats) | set(fillers))
        if not changed:
            return []
        edits = []
        for i in changed:
            at = words[first_word[i]].start
            insert = (f"{fillers[i]}{ELLIPSIS} " if i in fillers else "") + \
                (f"{repeats[i]} {ELLIPSIS} " if i in repeats else "")
            edits.append(Edit(at, at, insert))
        out, meta = apply(text, edits)
        changes = [{"sentence": sentences[i].index, "filler": fillers.get(i), "repeated": repeats.get(i)}
                   for i in changed]
        return [self.perturbed(record, out, mode=mode, changes=changes, n_sentences=len(sentences), edits=meta)]


# -- ModLexicon ------------------------------------------------------------------------------------------

WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


def synonyms(token: Token, senses: int) -> list[str]:
    """WordNet synonyms of ``token`` with its part of speech, inflected like it (lemminflect), cased like it.

    Candidates are the one-word lemma names of the first ``senses`` synsets of the token's lemma and POS,
    in WordNet order, other than the lemma; each is inflected to the token's Penn tag and kept only when
    lemminflect knows the form as a word of that part of speech and it differs from the token. Forms that
    are words of that part of speech only ("assist" rather than "aid", a noun too) are preferred when there
    are any, so the replacement reads (and tags) as the same part of speech in context."""
    forms = _synonym_forms(token.lemma_.lower(), token.pos_, token.tag_, token.lower_, senses)
    return list(dict.fromkeys(match_case(f, token.text) for f in forms))


@lru_cache(maxsize=65536)
def _inflection(lemma: str, tag: str) -> tuple[str, ...]:
    """lemminflect's ``getInflection`` (memoised: the same synonyms recur across words and essays)."""
    from lemminflect import getInflection

    return tuple(getInflection(lemma, tag=tag))


@lru_cache(maxsize=65536)
def _lemma_pos(form: str) -> frozenset[str]:
    """The open-class parts of speech lemminflect knows ``form`` in (``getAllLemmas``, memoised)."""
    from lemminflect import getAllLemmas

    return frozenset(getAllLemmas(form)) & frozenset(WORDNET_POS)


@lru_cache(maxsize=65536)
def _synonym_forms(lemma: str, pos: str, tag: str, lower: str, senses: int) -> tuple[str, ...]:
    from nltk.corpus import wordnet

    out: list[str] = []
    sure: list[str] = []  # forms lemminflect knows in no other open-class part of speech
    for synset in wordnet.synsets(lemma, pos=WORDNET_POS[pos])[:senses]:
        for name in synset.lemma_names():
            name = name.lower()
            if not name.isalpha() or name == lemma:
                continue
            forms = (name,) if tag in ("NN", "JJ", "RB", "VB") else _inflection(name, tag)
            if not forms or forms[0] == lower:
                continue
            known = _lemma_pos(forms[0])
            if pos not in known or forms[0] in out:
                continue
            out.append(forms[0])
            if known == {pos}:
                sure.append(forms[0])
    return tuple(sure or out)


def replaceable(token: Token, first: bool) -> bool:
    """A content word ModLexicon may replace: noun, verb, adjective or adverb, alphabetic, not a stop word, not
    a modal verb, and not a name: no proper noun (PROPN is not among those POS) and no capitalised word
    unless it is the ``first`` word of its sentence ("American", "Internet", which the tagger may call ADJ /
    NOUN). The capitalisation rule stands in for spaCy's entity recogniser, which the shared parse leaves
    out (it has its own token vectors and would double the parse time)."""
    return (token.pos_ in WORDNET_POS and token.is_alpha and not token.is_stop and token.tag_ != "MD"
            and (first or not token.text[:1].isupper()))


MAX_POS_ROUNDS = 3
"""ModLexicon redraws a candidate whose part of speech changed in context at most this many rounds; after
them such sentences are left unchanged, and the text is checked again until no replacement changed its POS."""


def _draw_synonym(candidates: list[tuple[Token, list[str]]], rng: np.random.Generator) -> tuple[Token, str]:
    """One replaceable word of a sentence uniformly, then one of its synonyms uniformly."""
    token, syns = candidates[int(rng.integers(0, len(candidates)))]
    return token, syns[int(rng.integers(0, len(syns)))]


def _lexicon_edits(doc: Doc, token: Token, word: str) -> list[Edit]:
    """Replace ``token`` by ``word``; an "a" / "an" just before it is corrected for the new word."""
    edits = [Edit(token.idx, token.idx + len(token.text), word)]
    if token.i > 0 and doc[token.i - 1].lower_ in ("a", "an"):
        art = doc[token.i - 1]
        right = match_case("an" if word[:1].lower() in "aeiou" else "a", art.text)
        if right != art.text:
            edits.append(Edit(art.idx, art.idx + len(art.text), right))
    return edits


TAGGER_CONTEXT = 4
"""Tokens on each side that can change a token's tag in spaCy's English pipelines (the shared ``tok2vec``
is a CNN of depth 4 with window 1: a token's vector sees 4 tokens either way; embeddings and the tagger's
output layer are per token). So a replacement is tagged, exactly as in the whole text, in a window of the
text that holds :data:`TAGGER_CONTEXT` tokens either side of it (plus :data:`EDGE_MARGIN`)."""
EDGE_MARGIN = 3
"""Extra tokens at each end of a tagging window: a window starts and ends at token boundaries of the parse,
but the tokenizer may split the first or last few of its tokens differently from the whole text."""


def pos_changed(text: str, doc: Doc, choice: dict[int, tuple[Token, str]], res: Resources,
                around: set[int] | None = None) -> list[int]:
    """The sentences of ``choice`` (sentence index -> (token, synonym)) whose synonym, in the text with every
    chosen replacement made, does not get the replaced token's coarse POS from spaCy's tagger (the pipeline's
    tagger + attribute ruler, which tag exactly as the full parse does) or is not one token.

    Only windows of the text are tagged (:data:`TAGGER_CONTEXT`), all of a check's windows in one
    ``nlp.pipe`` call. ``around=None`` (the first check, every replacement new): a window of
    ``TAGGER_CONTEXT + EDGE_MARGIN`` tokens either side of each replacement, whose tag is read.
    ``around``: doc token indices where the text changed since the last check; only replacements within
    ``TAGGER_CONTEXT`` tokens of them can have changed, so windows of ``2 * TAGGER_CONTEXT + EDGE_MARGIN``
    tokens either side of them are tagged and those replacements read."""
    if not choice:
        return []
    edits = sorted((e for i in sorted(choice) for e in _lexicon_edits(doc, *choice[i])), key=lambda e: e.start)
    out, _ = apply(text, edits)

    def out_pos(src: int) -> int:
        return src + sum(len(e.replacement) - (e.end - e.start) for e in edits if e.end <= src)

    if around is None:
        centres, reach, read = sorted(tok.i for tok, _ in choice.values()), TAGGER_CONTEXT + EDGE_MARGIN, 0
    else:
        centres, reach, read = sorted(around), 2 * TAGGER_CONTEXT + EDGE_MARGIN, TAGGER_CONTEXT
    windows: list[tuple[int, int, int, int]] = []  # (lo, hi) tagged, (in_lo, in_hi) read, doc token indices
    for p in centres:
        lo, hi = max(0, p - reach), min(len(doc), p + reach + 1)
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], hi, windows[-1][2], p + read + 1)
        else:
            windows.append((lo, hi, p - read, p + read + 1))
    by_token = {tok.i: (i, tok, word) for i, (tok, word) in choice.items()}
    bad = []
    texts, checks = [], []
    for lo, hi, in_lo, in_hi in windows:
        c0 = out_pos(doc[lo].idx) if lo > 0 else 0
        c1 = out_pos(doc[hi - 1].idx + len(doc[hi - 1].text)) if hi < len(doc) else len(out)
        texts.append(out[c0:c1])
        checks.append((c0, [by_token[k] for k in range(max(lo, in_lo), min(hi, in_hi)) if k in by_token]))
    for tagged, (c0, todo) in zip(res.nlp.pipe(texts, disable=["parser", "ner", "lemmatizer"]), checks):
        by_start = {c0 + t.idx: t for t in tagged}
        for i, token, word in todo:
            start = out_pos(token.idx)
            t = by_start.get(start)
            if t is None or t.text != word or t.pos_ != token.pos_:
                bad.append(i)
    return sorted(set(bad))


class ModLexiconParams(ModParams):
    """``senses``: how many of the word's WordNet senses (most frequent first) give synonyms."""

    senses: int = Field(3, ge=1)


@register
class ModLexicon(StaticAttack[ModLexiconParams]):
    """Replace one word per sentence by a WordNet synonym (Kumar et al. 2020, Sec. 3.2 "ModLexicon").

    "We use Wordnet synset to replace one word (excluding the stop words) randomly in each sentence of the
    response with its synonym" ("Tom was a happy man. He lived a simple life." -> "Tom was a cheerful man.
    He lived an elementary life."). In each selected sentence one :func:`replaceable` word that has a
    synonym is drawn uniformly, then one of its :func:`synonyms` uniformly. The synonym has the word's part
    of speech (WordNet POS from spaCy's tag) and its inflection (lemminflect, to the word's Penn tag); an "a"
    / "an" just before it is corrected for the new word, as in the paper's "an elementary life". The part of
    speech is kept *in context*: the text with every replacement made is tagged again (:func:`pos_changed`)
    and a synonym the tagger reads as another part of speech ("the children played games" -> "the children
    toyed plays") is dropped and another candidate drawn (at most :data:`MAX_POS_ROUNDS` rounds; a sentence
    whose candidates all fail is left unchanged).

    Choices where the paper is silent: stop words are spaCy's; names (proper nouns, capitalised words inside a
    sentence) and modal verbs are never replaced (:func:`replaceable`); synonyms come from the first ``senses`` WordNet senses (the rarer senses give odd words); every
    sentence by default, ``percent`` / ``position`` selecting among the sentences that have a replaceable
    word; the article is chosen by the new word's first letter. Texts longer than the spaCy pipeline's
    ``max_length`` yield nothing. ``meta``: per changed sentence, the index, the word, its synonym and POS.
    """

    name = "ModLexicon"
    task = "essay"
    family = "modify"
    paper = KUMAR
    description = "Replace one non-stop word per sentence by a WordNet synonym of the same part of speech."
    Params = ModLexiconParams
    record_type = ScoredResponse
    requires = ("spacy", "spacy-parse", "wordnet", "lemminflect")
    expect = "lower"

    def prefetch(self, records: Sequence[Record], res: Resources) -> None:
        """One batched parse of the task's essays (:func:`prefetch_parses`) and one batched sentence split
        (``res.prefetch_spans``: the sentence units :meth:`generate` reads; the same spans as one call per
        essay)."""
        prefetch_parses(records, res)
        res.prefetch_spans([r.text for r in records if isinstance(r, ScoredResponse)])

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        doc = full_parse(record.text, res)
        if doc is None:
            return []
        sentences = units(record.text, "sentence", res)
        starts = [t.idx for t in doc]
        options: dict[int, list[tuple[Token, list[str]]]] = {}
        for s in sentences:
            tokens = sentence_tokens(doc, s, starts)
            found = [(t, syns) for n, t in enumerate(tokens) if replaceable(t, n == 0)
                     for syns in [synonyms(t, self.params.senses)] if syns]
            if found:
                options[s.index] = found
        picked = pick_units(sorted(options), self.params, rng)
        if not picked:
            return []
        remaining = {i: [(tok, list(syns)) for tok, syns in options[i]] for i in picked}
        choice = {i: _draw_synonym(remaining[i], rng) for i in picked}
        rounds, changed = 0, None
        while bad := pos_changed(record.text, doc, choice, res, changed):  # ends: after MAX_POS_ROUNDS only drops
            changed = set()
            for i in bad:  # drop the candidate that changed its POS in context; redraw, or leave the sentence
                tok, word = choice.pop(i)
                changed.update({tok.i, max(tok.i - 1, 0)})  # the token and a corrected article before it
                remaining[i] = [(t, [w for w in ws if not (t.i == tok.i and w == word)]) for t, ws in remaining[i]]
                remaining[i] = [(t, ws) for t, ws in remaining[i] if ws]
                if remaining[i] and rounds < MAX_POS_ROUNDS:
                    choice[i] = _draw_synonym(remaining[i], rng)
                    changed.update({choice[i][0].i, max(choice[i][0].i - 1, 0)})
            rounds += 1
        if not choice:
            return []
        edits, changes = [], []
        for i in sorted(choice):
            token, word = choice[i]
            edits += _lexicon_edits(doc, token, word)
            changes.append({"sentence": i, "word": token.text, "synonym": word, "pos": token.pos_,
                            "tag": token.tag_})
        text, meta = apply(record.text, edits)
        return [self.perturbed(record, text, changes=changes, n_sentences=len(sentences), edits=meta)]
