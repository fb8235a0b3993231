"""``Resources``: the lazily loaded lexical resources handed to every attack (``res``).

Attacks never load resources themselves; they ask ``res``, which loads each one on first use and keeps it
for the life of the worker process. Everything is offline-first.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language


class Resources:
    """Lazy access to the spaCy pipeline and the other resources attacks need."""

    @cached_property
    def nlp(self) -> Language:
        """Full English pipeline (POS, dependency parse, NER)."""
        from callbluff.resources.spacy_pipeline import load_english

        return load_english("full")

    @cached_property
    def sentencizer(self) -> Language:
        """Fast sentence segmentation (spaCy ``senter`` only)."""
        from callbluff.resources.spacy_pipeline import load_english

        return load_english("sentences")

    def sentence_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans ``[start, end)`` of the sentences of ``text``, whitespace excluded."""
        doc = self.sentencizer(text)
        spans = []
        for s in doc.sents:
            start, end = s.start_char, s.end_char
            while end > start and text[end - 1].isspace():
                end -= 1
            if end > start:
                spans.append((start, end))
        return spans


_DEFAULT: Resources | None = None


def default_resources() -> Resources:
    """The process-wide :class:`Resources` (one per worker process)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Resources()
    return _DEFAULT
