"""``Resources``: the lazily loaded lexical resources handed to every attack (``res``).

Attacks never load resources themselves; they ask ``res``, which loads each one on first use and keeps it
for the life of the worker process. Everything is offline-first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from callbluff.resources.spacy_pipeline import load_english

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token


PARSE_CACHE_SIZE = 256
SPANS_CACHE_SIZE = 4096
DEPENDENCY_CACHE_SIZE = 4096
SENTENCER_MAX_LENGTH = 20_000_000


class TextSpans(NamedTuple):
    """Character spans ``[start, end)`` of one text's words (non-space tokens) and sentences."""

    words: tuple[tuple[int, int], ...]
    sentences: tuple[tuple[int, int], ...]


class DependencyParses(NamedTuple):
    """Dependency parses that travel between processes (:meth:`Resources.export_dependency_docs`): a spaCy
    ``DocBin`` and, per doc, whether it was parsed without the lemmatizer."""

    docbin: bytes
    unlemmatized: tuple[bool, ...]


class Resources:
    """Lazy access to the spaCy pipeline and the other resources attacks need."""

    def __init__(self) -> None:
        self._parses: OrderedDict[str, TextSpans] = OrderedDict()
        self._words: OrderedDict[str, tuple[tuple[int, int], ...]] = OrderedDict()
        self._docs: OrderedDict[str, Doc] = OrderedDict()
        self._deps: OrderedDict[str, Doc] = OrderedDict()
        self._unlemmatized: set[str] = set()  # texts in ``_deps`` parsed without the lemmatizer
        self._lock = threading.Lock()

    @cached_property
    def nlp(self) -> Language:
        """Full English pipeline (POS, dependency parse, NER)."""
        return load_english("full")

    @cached_property
    def sentencizer(self) -> Language:
        """Fast sentence segmentation (spaCy ``senter`` only). Its ``max_length`` is raised to
        :data:`SENTENCER_MAX_LENGTH`: spaCy's default limit (1,000,000 characters) guards the parser's and NER's
        memory, which the senter does not use, so a 1 MB essay is split instead of refused."""
        nlp = load_english("sentences")
        nlp.max_length = max(nlp.max_length, SENTENCER_MAX_LENGTH)
        return nlp

    def sentence_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans ``[start, end)`` of the sentences of ``text``, surrounding whitespace excluded."""
        return list(self.spans(text).sentences)

    def spans(self, text: str) -> TextSpans:
        """Word and sentence spans of ``text`` from ONE parse (``sentencizer``), cached per text.

        Several attacks on the same record share the parse: the last :data:`SPANS_CACHE_SIZE` texts are
        kept (least recently used dropped first); fill the cache for a batch with :meth:`prefetch_spans`.
        Thread-safe.
        """
        with self._lock:
            hit = self._parses.get(text)
            if hit is not None:
                self._parses.move_to_end(text)
                return hit
        return self._keep_spans([(text, self.sentencizer(text))])[0]

    def prefetch_spans(self, texts: Sequence[str], batch_size: int = 64) -> None:
        """Fill the :meth:`spans` cache for ``texts`` with one batched ``sentencizer.pipe`` (several times
        faster than one call per text; the spans are the same). At most :data:`SPANS_CACHE_SIZE` texts are
        parsed (more would evict each other before use)."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._parses))[:SPANS_CACHE_SIZE]
        if todo:
            self._keep_spans(list(zip(todo, self.sentencizer.pipe(todo, batch_size=batch_size), strict=True)))

    def _keep_spans(self, parsed: list[tuple[str, Doc]]) -> list[TextSpans]:
        out = []
        for text, doc in parsed:
            words = _word_spans(doc)
            sentences = []
            for s in doc.sents:
                start, end = s.start_char, s.end_char
                while end > start and text[end - 1].isspace():
                    end -= 1
                while start < end and text[start].isspace():
                    start += 1
                if end > start:
                    sentences.append((start, end))
            out.append(TextSpans(words, tuple(sentences)))
        with self._lock:
            for (text, _), spans in zip(parsed, out, strict=True):
                self._parses[text] = spans
                self._parses.move_to_end(text)
            while len(self._parses) > SPANS_CACHE_SIZE:
                self._parses.popitem(last=False)
        return out

    def word_spans(self, text: str) -> tuple[tuple[int, int], ...]:
        """Spans of the non-space tokens of ``text`` from spaCy's *tokenizer* alone, cached per text.

        The same spans as ``spans(text).words`` (the sentence recogniser labels tokens, it never splits or
        merges them), without running any statistical component: attacks that need words but no sentences
        (Ding et al.'s Shuffle) pay only for tokenization. A text whose :meth:`spans` are cached reuses them.
        """
        with self._lock:
            parsed = self._parses.get(text)
            if parsed is not None:
                return parsed.words
            hit = self._words.get(text)
            if hit is not None:
                self._words.move_to_end(text)
                return hit
        words = _word_spans(self.sentencizer.tokenizer(text))
        with self._lock:
            self._words[text] = words
            while len(self._words) > SPANS_CACHE_SIZE:
                self._words.popitem(last=False)
        return words

    def doc(self, text: str) -> Doc:
        """The full parse of ``text`` (``nlp``: POS, dependencies, entities), cached per text.

        Attacks that need the dependency tree (DPAEG keyword extraction) share one parse per text: the last
        :data:`PARSE_CACHE_SIZE` texts are kept (least recently used dropped first). Treat the ``Doc`` as
        read-only. Thread-safe.
        """
        with self._lock:
            hit = self._docs.get(text)
            if hit is not None:
                self._docs.move_to_end(text)
                return hit
        parsed = self.nlp(text)
        with self._lock:
            self._docs[text] = parsed
            while len(self._docs) > PARSE_CACHE_SIZE:
                self._docs.popitem(last=False)
        return parsed

    def docs(self, texts: Sequence[str], batch_size: int = 32) -> list[Doc]:
        """:meth:`doc` of many texts, the ones not cached parsed in one ``nlp.pipe`` (batched: faster than one
        call per text; the parses are the same). Give at most :data:`PARSE_CACHE_SIZE` texts (more would evict
        each other before use)."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._docs))
        if todo:
            parsed = list(zip(todo, self.nlp.pipe(todo, batch_size=batch_size), strict=True))
            with self._lock:
                for text, d in parsed:
                    self._docs[text] = d
                    self._docs.move_to_end(text)
                while len(self._docs) > PARSE_CACHE_SIZE:
                    self._docs.popitem(last=False)
        return [self.doc(t) for t in texts]

    def dependency_doc(self, text: str, lemmas: bool = True) -> Doc:
        """POS, lemmas and the dependency parse of ``text`` (``nlp`` without NER), cached per text.

        The entity recogniser has its own token vectors in the shipped English pipeline, so leaving it out
        changes no tag, lemma or arc; it is two thirds of the parse time of a short question. The last
        :data:`DEPENDENCY_CACHE_SIZE` texts are kept (least recently used dropped first); fill the cache for
        a batch with :meth:`dependency_docs`. Treat the ``Doc`` as read-only. Thread-safe.

        ``lemmas=False``: the lemmatizer (the last pipe run) may be left out, for callers that read lemmas
        only through :meth:`lemma`; a doc cached without lemmas is lemmatized when a caller asks for them.
        """
        with self._lock:
            hit = self._deps.get(text)
            if hit is not None:
                self._deps.move_to_end(text)
                bare = text in self._unlemmatized
        if hit is not None:
            if lemmas and bare:
                self._lemmatize(text, hit)
            return hit
        doc = self.nlp(text, disable=["ner"] if lemmas else ["ner", "lemmatizer"])
        return self._keep_deps([(text, doc)], lemmas)[0]

    def dependency_docs(self, texts: Sequence[str], batch_size: int = 256, lemmas: bool = True) -> list[Doc]:
        """:meth:`dependency_doc` of many texts, the ones not cached parsed in one ``nlp.pipe`` (several times
        faster than one call per text; the parses are the same)."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._deps))
        if todo:
            disable = ["ner"] if lemmas else ["ner", "lemmatizer"]
            self._keep_deps(list(zip(todo, self.nlp.pipe(todo, batch_size=batch_size, disable=disable),
                                     strict=True)), lemmas)
        return [self.dependency_doc(t, lemmas) for t in texts]

    def lemma(self, token: Token) -> str:
        """The lemma the pipeline's lemmatizer gives ``token``, computed for this token alone when its doc was
        parsed without the lemmatizer (:meth:`dependency_doc` with ``lemmas=False``): the lemmatizer keeps a
        lemma set earlier in the pipeline (the attribute ruler's exceptions) and otherwise computes it from the
        token's text, POS and morphology, which do not depend on other tokens' lemmas."""
        lemmatizer = self._lemmatizer
        if lemmatizer is None or (token.lemma != 0 and not lemmatizer.overwrite):
            return token.lemma_
        return lemmatizer.lemmatize(token)[0]

    @cached_property
    def _lemmatizer(self) -> Any:
        """The pipeline's lemmatizer, None for a pipeline without one (lemmas are then what the doc holds)."""
        return self.nlp.get_pipe("lemmatizer") if "lemmatizer" in self.nlp.pipe_names else None

    def _lemmatize(self, text: str, doc: Doc) -> None:
        if self._lemmatizer is not None:
            self._lemmatizer(doc)  # the pipe the parse left out, run after the others as in the pipeline
        with self._lock:
            self._unlemmatized.discard(text)

    def dependency_texts(self) -> list[str]:
        """The texts whose :meth:`dependency_doc` is cached now, least recently used first."""
        with self._lock:
            return list(self._deps)

    def export_dependency_docs(self, texts: Sequence[str]) -> DependencyParses:
        """The cached :meth:`dependency_doc` parses of ``texts`` (those not cached are left out) in a form that
        travels between processes (spaCy's ``DocBin``: tags, POS, morphology, lemmas, arcs, sentence starts;
        not the doc's tensor, which no attack reads), to :meth:`import_dependency_docs` elsewhere: a worker
        that parsed texts for the fit step hands its parses to the engine's process, whose generation workers
        fork with them."""
        from spacy.tokens import DocBin

        with self._lock:
            kept = [(t, self._deps[t], t in self._unlemmatized) for t in dict.fromkeys(texts) if t in self._deps]
        bin_ = DocBin(store_user_data=False)
        for _, doc, _bare in kept:
            bin_.add(doc)
        return DependencyParses(bin_.to_bytes(), tuple(bare for _, _, bare in kept))

    def import_dependency_docs(self, parses: DependencyParses) -> int:
        """Add parses made by :meth:`export_dependency_docs` (in any process with the same pipeline) to the
        cache, keyed by their text, without replacing one cached here; the number added."""
        from spacy.tokens import DocBin

        docs = list(DocBin().from_bytes(parses.docbin).get_docs(self.nlp.vocab))
        with self._lock:
            new = [(doc, bare) for doc, bare in zip(docs, parses.unlemmatized, strict=True)
                   if doc.text not in self._deps]
        for doc, bare in new:
            self._keep_deps([(doc.text, doc)], lemmas=not bare)
        return len(new)

    def _keep_deps(self, parsed: list[tuple[str, Doc]], lemmas: bool = True) -> list[Doc]:
        with self._lock:
            for text, doc in parsed:
                self._deps[text] = doc
                self._deps.move_to_end(text)
                if lemmas:
                    self._unlemmatized.discard(text)
                else:
                    self._unlemmatized.add(text)
            while len(self._deps) > DEPENDENCY_CACHE_SIZE:
                self._unlemmatized.discard(self._deps.popitem(last=False)[0])
        return [doc for _, doc in parsed]


def _word_spans(doc: Doc) -> tuple[tuple[int, int], ...]:
    """``[start, end)`` of the non-space tokens of ``doc``, read as one array (``Doc.to_array``: about twice
    as fast as visiting the ``Token`` objects; ``LENGTH`` is the token's length in characters)."""
    from spacy.attrs import IDX, IS_SPACE, LENGTH

    return tuple((i, i + n) for i, n, space in doc.to_array([IDX, LENGTH, IS_SPACE]).tolist() if not space)


_DEFAULT: Resources | None = None


def default_resources() -> Resources:
    """The process-wide :class:`Resources` (one per worker process)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Resources()
    return _DEFAULT
