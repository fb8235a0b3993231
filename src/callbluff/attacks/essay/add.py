"""Add family of Kumar et al. 2020, "Calling Out Bluff" (Sec. 3.3 "Majorly Semantics-Modifying Adversaries",
Table 1): AddWikiRelated, AddWikiUnrelated, RepeatSent, AddSong, AddSpeech, AddRC, AddTruth, AddLies.

Every "add" adversary inserts sentences into a response under the two criteria of Sec. 3.1 through the edit
toolkit: ``percent`` of the response's sentences are added (``SizeCriterion``: at least one) as one block at
a sentence boundary inside the requested ``position`` third. The authors' notebook ran each of them
*unbounded* (the essay grows) and *bounded* (as many of the response's sentences are replaced, so the length
stays); ``bounded`` offers both. Where the added sentences come from is the only thing that differs between
the attacks: a text pool (songs, speeches, truths, lies), the prompt's reading passage (AddRC), or sentences
retrieved from a knowledge corpus (AddWiki*, see :mod:`callbluff.attacks.essay.knowledge`).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
from pydantic import Field, model_validator

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.edits import Edit, Position, SizePositionParams, Unit, apply, select, units
from callbluff.attacks.essay.common import KUMAR
from callbluff.attacks.essay.knowledge import KnowledgeState, corpus_files, fit_knowledge
from callbluff.attacks.essay.pools import PoolSplit, load_pool_entries, load_pool_items
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.resources.fit_cache import file_stamps, source_stamp, versions
from callbluff.resources.spacy_pipeline import MODEL_PACKAGES

TERMINAL = (".", "!", "?", '"', "'", "\u201d", "\u2019", "\u2026")


def as_sentence(text: str) -> str:
    """``text`` on one line, stripped, ending with terminal punctuation (trailing commas / colons dropped, a period added to lyric lines and
    other fragments, so the inserted block does not run into the response's next sentence)."""
    one = " ".join(text.split()).rstrip(",;:-–— ")
    return one if not one or one.endswith(TERMINAL) else one + "."


class AddParams(SizePositionParams):
    """Sec. 3.1 ``percent`` (of the response's sentences; 10, 15, 20, 25) and ``position`` (None: any
    sentence boundary); ``bounded`` (the authors' notebook): replace as many sentences as are added."""

    bounded: bool = False


def draw(n_items: int, k: int, rng: np.random.Generator) -> list[int]:
    """``k`` item indices in draw order: distinct when the pool holds ``k`` items, else with repetition."""
    return [int(i) for i in rng.choice(n_items, size=k, replace=n_items < k)]


def add_block(text: str, sentences: list[Unit], k: int, position: Position | str | None, percent: float,
              bounded: bool, rng: np.random.Generator,
              pick: Any) -> tuple[str, dict[str, Any]] | None:
    """Insert (or, ``bounded``, substitute) a block of sentences into ``text`` (Kumar et al. Sec. 3.1).

    Unbounded: one sentence boundary ``at`` in ``[lo, hi]`` of the ``position`` third (``Position.slice_bounds``;
    None: ``[0, n]``) is drawn, then ``pick(k)`` gives the ``k`` sentences inserted there. Bounded: ``select``
    picks a contiguous run of ``k`` sentences inside the third, replaced by ``pick(len(run))``. None when the
    third is empty (fewer than 3 sentences with a position) or a bounded edit would replace the whole response.
    """
    n = len(sentences)
    if n == 0 or k <= 0:
        return None
    if bounded:
        run = select(n, percent, position, rng, contiguous=True)
        if not run or len(run) >= n:
            return None
        added = pick(len(run))
        first, last = sentences[run[0]], sentences[run[-1]]
        out, edits = apply(text, [Edit(first.start, last.end, " ".join(added))])
        return out, {"added": added, "replaced": run, "edits": edits}
    lo, hi = (0, n) if position is None else Position(position).slice_bounds(n)
    if position is not None and hi <= lo:
        return None
    at = lo + int(rng.integers(0, hi - lo + 1))
    added = pick(k)
    block = " ".join(added)
    edit = (Edit(sentences[at].start, sentences[at].start, block + " ") if at < n
            else Edit(sentences[-1].end, sentences[-1].end, " " + block))
    out, edits = apply(text, [edit])
    return out, {"added": added, "insert_at": at, "edits": edits}


AddP = TypeVar("AddP", bound=AddParams)


class _AddSentences(StaticAttack[AddP]):
    """Shared body: the response's sentences, the size, the block edit, the meta. Subclasses say where the
    candidate sentences come from (:meth:`candidates`)."""

    task = "essay"
    family = "add"
    paper = KUMAR
    record_type = ScoredResponse
    expect = "lower"
    requires: ClassVar[tuple[str, ...]] = ("spacy",)

    def candidates(self, record: ScoredResponse, prompt: Prompt | None, state: Any,
                   res: Resources) -> list[str]:
        raise NotImplementedError

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        pool = self.candidates(record, prompt, state, res)
        if not pool:
            return []
        sentences = units(record.text, "sentence", res)
        p = self.params
        k = p.size.units(len(sentences))
        drawn: list[int] = []

        def pick(m: int) -> list[str]:
            drawn.extend(draw(len(pool), m, rng))
            return [pool[i] for i in drawn]

        done = add_block(record.text, sentences, k, p.position, p.percent, p.bounded, rng, pick)
        if done is None:
            return []
        text, meta = done
        return [self.perturbed(record, text, n_sentences=len(sentences), n_added=len(meta["added"]),
                               bounded=p.bounded, candidate_indices=drawn, **meta)]


# -- text pools: songs, speeches, truths, lies -----------------------------------------------------------

class PoolParams(AddParams):
    """``pool``: a JSON list of strings, a text file with one entry per line, or a CSV (``column``); gzip is
    read when the name ends in ``.gz``. None: the pool shipped with callbluff (``data/pools``, sources in its
    README). ``split``: how entries become sentences (``entry`` as is, spaCy ``sentence`` s, lyric ``line`` s).

    ``items`` (the released form, beside ``percent``): add that many *whole* pool entries (a whole song, a
    whole speech excerpt, every one of its units in order) whatever the response's length, as the authors'
    released test cases do (a whole song of about 700 words appended to an essay of about 160). Give
    ``items`` or a ``percent``, not both (``percent``'s default is not used with ``items``); ``bounded`` does
    not apply (the block would replace the response)."""

    pool: str | None = None
    column: str = "text"
    split: PoolSplit = "entry"
    items: int | None = Field(None, ge=1, le=20)
    added_later: ClassVar[frozenset[str]] = frozenset({"items"})  # the percent form keeps its ids and bytes

    @model_validator(mode="after")
    def _one_size(self) -> PoolParams:
        if self.items is not None and self.percent != type(self).model_fields["percent"].default:
            raise ValueError("give percent (a share of the response's sentences) or items (whole pool entries), "
                             "not both")
        if self.items is not None and self.bounded:
            raise ValueError("bounded does not apply to items (whole entries would replace the response); "
                             "drop one of them")
        return self


PoolP = TypeVar("PoolP", bound=PoolParams)


class _PoolAttack(_AddSentences[PoolP]):
    """Add sentences drawn uniformly from a text pool; the pool is read once per run by ``fit`` and its
    items (what was drawn from) are the fit state, so every example's ``fit_state`` hash names the pool.
    With ``items`` (the released form) the state is the pool's entries, each as its units, and whole entries
    drawn uniformly are added in their order (:meth:`_whole_entries`)."""

    needs_fit = True
    default_pool: ClassVar[str]

    def fit(self, records: Any, prompt: Prompt | None, res: Resources) -> Any:
        p = self.params
        if p.items is not None:
            return load_pool_entries(p.pool, p.column, p.split, self.default_pool, res, who=self.name)
        return load_pool_items(p.pool, p.column, p.split, self.default_pool, res, who=self.name)

    def candidates(self, record: ScoredResponse, prompt: Prompt | None, state: Any,
                   res: Resources) -> list[str]:
        return [as_sentence(s) for s in state]

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        if self.params.items is None:
            return super().generate(record, rng, res, prompt, state)
        return self._whole_entries(record, rng, res, state)

    def _whole_entries(self, record: Record, rng: np.random.Generator, res: Resources,
                       entries: list[list[str]]) -> list[Perturbed]:
        """``items`` whole entries (distinct while the pool has enough) added as one block, the response's own
        text kept byte for byte: appended after its last sentence when ``position`` is None (the released test
        cases append), else at a sentence boundary of the ``position`` third."""
        assert isinstance(record, ScoredResponse)
        if not entries:
            return []
        sentences = units(record.text, "sentence", res)
        p = self.params
        chosen = draw(len(entries), int(p.items), rng)
        block = [as_sentence(u) for i in chosen for u in entries[i]]
        if not sentences:
            return []
        if p.position is None:
            end = sentences[-1].end
            text, edits = apply(record.text, [Edit(end, end, " " + " ".join(block))])
            meta: dict[str, Any] = {"added": block, "insert_at": len(sentences), "edits": edits}
        else:
            done = add_block(record.text, sentences, len(block), p.position, 100.0, False, rng,
                             lambda m: block[:m])
            if done is None:
                return []
            text, meta = done
        return [self.perturbed(record, text, n_sentences=len(sentences), n_added=len(block), bounded=False,
                               entries=chosen, n_words_added=sum(len(u.split()) for u in block), **meta)]


class SongParams(PoolParams):
    split: PoolSplit = "line"


@register
class AddSong(_PoolAttack[SongParams]):
    """Add song lyrics to a response (Kumar et al. 2020, Sec. 3.3 "AddSong", Table 1; Table 5 third sub-table).

    The paper appended lines of 58,000 Kaggle song lyrics "according to the constraints" of Sec. 3.1. Choices
    where it is silent: the added units are lyric *lines* (``split="line"``: line breaks, and a full stop
    directly followed by a capital, as in the Kaggle CSVs that join lines with "."), drawn uniformly without
    replacement from all lines of the pool; a period ends a line without terminal punctuation. The default
    pool is public-domain songs (traditional or published before 1929), listed with sources in
    ``data/pools/README.md``; ``pool=`` takes the paper's Kaggle CSVs (column ``text``) or any other pool."""

    name = "AddSong"
    description = "Add song lyric lines to the response (unrelated, fluent text)."
    Params = SongParams
    default_pool = "songs.json"


class SpeechParams(PoolParams):
    split: PoolSplit = "sentence"


@register
class AddSpeech(_PoolAttack[SpeechParams]):
    """Add sentences of famous speeches (Kumar et al. 2020, Sec. 3.3 "AddSpeech", Table 1).

    "Randomly picked sentences from this speech corpus are then added to the responses": the pool's entries
    are split into spaCy sentences (``split="sentence"``) and ``k`` of them are drawn uniformly. The paper's
    eight speeches (Trump, Obama, Clinton, Elizabeth II...) are not all free to ship; the default pool is
    excerpts of public-domain addresses of US presidents and other public-domain speeches (sources in
    ``data/pools/README.md``)."""

    name = "AddSpeech"
    description = "Add sentences of speeches by public figures to the response."
    Params = SpeechParams
    default_pool = "speeches.json"


@register
class AddTruth(_PoolAttack[PoolParams]):
    """Add true general-knowledge statements (Kumar et al. 2020, Sec. 3.3 "AddTruth", Table 1).

    Each pool entry is one statement (``split="entry"``), drawn uniformly without replacement. The paper's
    list came from a facts website; the default pool is statements written for callbluff (checked common
    knowledge, ``data/pools/truths.json``). Unbounded and bounded as in the authors' notebook."""

    name = "AddTruth"
    description = "Add true but off-topic facts to the response."
    Params = PoolParams
    default_pool = "truths.json"


@register
class AddLies(_PoolAttack[PoolParams]):
    """Add universally false statements (Kumar et al. 2020, Sec. 3.3 "AddLies", Table 1; Table 5 first
    sub-table: added "to the end", ``position="end"``).

    Each pool entry is one false statement ("Sun rises in the west"), drawn uniformly without replacement.
    The default pool is falsehoods written for callbluff (``data/pools/lies.json``). Unbounded and bounded as
    in the authors' notebook."""

    name = "AddLies"
    description = "Add false statements to the response."
    Params = PoolParams
    default_pool = "lies.json"


# -- AddRC ------------------------------------------------------------------------------------------------

_PARAGRAPHS = re.compile(r"\n[ \t]*\n")
_OPENERS = "\"'\u201c\u2018([\u2014\u2013-\u2026. "


def passage_sentences(source: str, res: Resources) -> list[str]:
    """The sentences of a reading passage that AddRC draws from (Kumar et al. 2020, Sec. 3.3 AddRC).

    The paper says "sentences from the corresponding reading comprehension passage" and nothing of how they were
    split; the choices here: the passage is cut into paragraphs at blank lines first (spaCy's sentence splitter
    does not treat a paragraph break as a boundary: on the ASAP-AES passages it ran a section heading into the
    next paragraph's first sentence), a paragraph that ends with neither terminal punctuation nor a colon is left
    out (the set 6 section headings "The Age of Dirigibles"..., the set 5 signature and hometown line), and the
    spaCy sentences of the others are kept when they start with a capital letter (after opening quotes, brackets
    or dashes), hold at least two words and do not end with a colon: a dialogue tag that spaCy cut off
    (``she said.``), a stray ``.`` of a ``. . . .`` ellipsis and a line announcing a quotation ("John Tauranac
    describes the plan:") are not sentences to add on their own; an opening bracket or quote that spaCy split
    off as a sentence of its own (the set 6 block quote's ``[``) is put back in front of the next sentence. Each is
    put on one line, the passage's words and punctuation unchanged (a period is added only where a sentence ends
    without one, :func:`as_sentence`). Sentences keep the passage's order; duplicates are kept once."""
    out: list[str] = []
    seen: set[str] = set()
    for para in _PARAGRAPHS.split(source):
        para = para.strip()
        if not para or not para.endswith((*TERMINAL, ":")):
            continue
        start: int | None = None  # an opening bracket or quote spaCy made a sentence of its own
        for u in units(para, "sentence", res):
            text = para[start:u.end] if start is not None else u.text
            if not any(c.isalpha() for c in u.text):
                start = (start if start is not None else u.start) if u.text[-1:] in "[(\u201c\u2018\"'" else None
                continue
            start = None
            head = text.lstrip(_OPENERS)
            if (not head[:1].isupper() or text.endswith(":")
                    or sum(any(c.isalpha() for c in w) for w in text.split()) < 2):
                continue
            sent = " ".join(text.split())
            if not sent.rstrip(")]").endswith(TERMINAL):  # "... leave Cuba.)" is whole as it stands
                sent = as_sentence(sent)
            if sent not in seen:
                seen.add(sent)
                out.append(sent)
    return out


@register
class AddRC(_AddSentences[AddParams]):
    """Add sentences of the prompt's reading passage (Kumar et al. 2020, Sec. 3.3 "AddRC", Table 1; Table 2's
    RC prompts, ASAP-AES 3-6).

    "For reading comprehension based prompts [...] we randomly pick up sentences from the corresponding
    reading comprehension passage and add them in the responses." The passage is ``Prompt.source`` (ASAP-AES:
    from the prompts file, ``asap-aes:PATH?prompt_texts=FILE`` or ``prompts.json`` beside the TSV; other data:
    a ``prompt_source`` column); a response whose prompt has none (or a blank one) gets no example
    (``applies_to``). Size and position are Sec. 3.1's, as for every "add" adversary (``percent`` of the
    response's sentences, the ``position`` third, ``bounded``). ``fit`` splits the passage once per prompt
    (:func:`passage_sentences`, where the paper is silent on the splitting); the sentences are the fit state, so
    every example's ``fit_state`` hash names the passage. Choice where the paper is silent: passage sentences
    are drawn uniformly without replacement from the record's generator (with repetition only when the passage
    has fewer sentences than are needed)."""

    name = "AddRC"
    description = "Add sentences of the prompt's reading passage to the response."
    Params = AddParams
    needs_fit = True

    def applies_to(self, record: Record, prompt: Prompt | None) -> bool:
        return prompt is not None and bool((prompt.source or "").strip())

    def fit(self, records: Any, prompt: Prompt | None, res: Resources) -> list[str]:
        source = (prompt.source or "") if prompt is not None else ""
        return passage_sentences(source, res) if source.strip() else []

    def candidates(self, record: ScoredResponse, prompt: Prompt | None, state: Any,
                   res: Resources) -> list[str]:
        return list(state)


# -- AddWikiRelated / AddWikiUnrelated ----------------------------------------------------------------------

class WikiParams(AddParams):
    """``corpus``: the knowledge corpus (None: the SQuAD v1.1 Wikipedia paragraphs fetched by set-up; a
    directory of ``.txt`` files, a ``.jsonl`` with a ``text`` field, or a SQuAD JSON). ``key_phrases``: give
    the prompt's topics instead of extracting them. ``n_phrases`` key phrases, ``docs_per_phrase`` documents
    retrieved for each, at most ``max_sentences`` candidates kept, at most ``max_fit_records`` responses
    (lowest ids first) parsed for noun chunks."""

    corpus: str | None = None
    key_phrases: tuple[str, ...] | None = None
    n_phrases: int = Field(10, ge=1)
    docs_per_phrase: int = Field(2, ge=1)
    max_sentences: int = Field(200, ge=1)
    max_fit_records: int = Field(50, ge=0)


class _WikiAttack(_AddSentences[WikiParams]):
    """Shared body of AddWikiRelated / AddWikiUnrelated: ``fit`` finds the prompt's key phrases and the
    candidate sentences once per prompt (the corpus index once per run), ``generate`` adds them."""

    needs_fit = True
    related: ClassVar[bool]
    requires = ("spacy", "spacy-parse")

    def fit_fingerprint(self) -> str | None:
        """Persist the fitted state across runs (:mod:`callbluff.resources.fit_cache`): the fit reads the knowledge
        corpus files (path, size, mtime), scikit-learn's TF-IDF and the spaCy pipeline (versions, and the source
        of ``Resources`` and the pipeline loader); None when the corpus is
        missing (``fit`` then raises, naming the fix)."""
        try:
            files = corpus_files(self.params.corpus)
        except (OSError, ValueError):
            return None
        return "|".join((file_stamps(files), versions("scikit-learn", "spacy", *MODEL_PACKAGES),
                         source_stamp("callbluff.resources.context", "callbluff.resources.spacy_pipeline")))

    def fit(self, records: Any, prompt: Prompt | None, res: Resources) -> KnowledgeState:
        p = self.params
        return fit_knowledge(records, prompt, res, related=self.related, corpus=p.corpus,
                             key_phrases=p.key_phrases, n_phrases=p.n_phrases,
                             docs_per_phrase=p.docs_per_phrase, max_sentences=p.max_sentences,
                             max_fit_records=p.max_fit_records, who=self.name)

    def candidates(self, record: ScoredResponse, prompt: Prompt | None, state: Any,
                   res: Resources) -> list[str]:
        return list(state["sentences"])


_WIKI_DOC = """

    Key phrases (Sec. 3.3 "key-phrase extraction"): spaCy noun chunks of the prompt's text, reading passage
    and up to ``max_fit_records`` of its responses, determiners / pronouns / stop words trimmed, lemmatised;
    ranked by TF-IDF (1 + log tf in the prompt's texts, times the mean idf of the phrase's words in the
    knowledge corpus). The engine fits one prompt at a time, so the other prompts' texts are not visible to
    ``fit``; the knowledge corpus stands in as the contrast collection (a phrase common to all of Wikipedia,
    "people", "time", ranks low). ``key_phrases=`` gives the topics directly.
    Retrieval: scikit-learn TF-IDF (cosine over the corpus documents), chosen over BM25 because scikit-learn
    is already a dependency, its idf doubles as the key-phrase ranking's, and for queries of one to three
    words the ranking differs little from BM25's while the sparse index of the ~20k SQuAD paragraphs builds
    in seconds, once per run (cached per corpus file). Sentences are spaCy sentences of 4 words or more.
    The state (key phrases, candidate sentences, their documents) is small and picklable; a missing corpus
    is an error naming the fix (``python -m callbluff.resources.squad_fetch`` or ``corpus=``)."""


@register
class AddWikiRelated(_WikiAttack):
    __doc__ = """Add Wikipedia sentences related to the prompt (Kumar et al. 2020, Sec. 3.3 "AddWikiRelated",
    Table 1; human ratings in Table 6).

    "We formed a list of important topics from each prompt using key-phrase extraction. The Wikipedia
    articles of each of these topics were extracted and sentence tokenized. Then some sentences were
    randomly selected from these articles and were added to each response." Here the ``docs_per_phrase``
    best documents of each key phrase are the "articles"; their sentences are the candidates, drawn
    uniformly.""" + _WIKI_DOC

    name = "AddWikiRelated"
    description = "Add encyclopedia sentences on the prompt's topics to the response."
    Params = WikiParams
    related = True


@register
class AddWikiUnrelated(_WikiAttack):
    __doc__ = """Add Wikipedia sentences unrelated to the prompt (Kumar et al. 2020, Sec. 3.3
    "AddWikiUnrelated", Table 1).

    "We took those Wiki entries which did not occur in the previous list and performed the same procedure":
    the candidates are sentences of documents that match *none* of the prompt's key phrases (TF-IDF score 0
    for every phrase) and belong to no article (title) the related list retrieved; as many documents as the
    related attack would use (``n_phrases * docs_per_phrase``) are taken in a fixed pseudo-random order
    (SHA-256 of the key phrases and the document), so the choice is stable for a prompt.""" + _WIKI_DOC

    name = "AddWikiUnrelated"
    description = "Add encyclopedia sentences on topics unrelated to the prompt to the response."
    Params = WikiParams
    related = False


# -- RepeatSent -----------------------------------------------------------------------------------------------

class RepeatSentParams(AttackParams):
    """``mode``: ``introduction`` (the first ``count`` sentences repeated at the end), ``conclusion`` (the
    last ``count`` repeated at the start) or ``middle`` (``count`` sentences of the middle third repeated
    there); ``count`` is 1-2 for the first two modes and 1-3 for ``middle`` (the notebook's 7 variants)."""

    mode: Literal["introduction", "conclusion", "middle"] = "introduction"
    count: int = Field(1, ge=1, le=3)

    @model_validator(mode="after")
    def _count_fits_mode(self) -> RepeatSentParams:
        if self.mode != "middle" and self.count > 2:
            raise ValueError(f"count {self.count} with mode {self.mode!r}: the paper repeats one or two "
                             "sentences of the introduction / conclusion (use count=1 or 2, or mode='middle')")
        return self


@register
class RepeatSent(StaticAttack[RepeatSentParams]):
    """Repeat sentences of the response within it (Kumar et al. 2020, Sec. 3.3 "RepeatSent", Table 1; human
    ratings in Table 6).

    "Firstly, one or two sentences from the introduction part are repeated at the end of the response.
    Secondly, one or two sentences from the conclusion are repeated at the beginning of the response.
    Thirdly, one to three sentences are repeated in the middle of the response." ``mode`` x ``count`` gives
    the authors' notebook's 7 variants. The paper's three modes fix size and position, so there is no
    ``percent`` / ``position`` parameter. Choices where it is silent: in ``middle`` mode a run of ``count``
    adjacent sentences inside the middle third (``select``, contiguous) is repeated right after itself, as
    a student padding a paragraph would; the response must have more sentences than are repeated (and a
    middle third holding ``count`` of them), else no example. Copies are joined with one space."""

    name = "RepeatSent"
    task = "essay"
    family = "add"
    paper = KUMAR
    description = "Repeat introduction, conclusion or middle sentences of the response."
    Params = RepeatSentParams
    record_type = ScoredResponse
    requires = ("spacy",)
    expect = "lower"

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        s = units(record.text, "sentence", res)
        n, c, mode = len(s), self.params.count, self.params.mode
        if n <= c:
            return []
        if mode == "introduction":
            run = list(range(c))
            block = " ".join(u.text for u in s[:c])
            edit = Edit(s[-1].end, s[-1].end, " " + block)
        elif mode == "conclusion":
            run = list(range(n - c, n))
            block = " ".join(u.text for u in s[n - c:])
            edit = Edit(s[0].start, s[0].start, block + " ")
        else:
            lo, hi = Position.middle.slice_bounds(n)
            if hi - lo < c:
                return []
            first = lo + int(rng.integers(0, hi - lo - c + 1))
            run = list(range(first, first + c))
            block = " ".join(u.text for u in s[first:first + c])
            edit = Edit(s[run[-1]].end, s[run[-1]].end, " " + block)
        text, edits = apply(record.text, [edit])
        return [self.perturbed(record, text, mode=mode, repeated=run, n_sentences=n, edits=edits)]
