"""What the content-scoring generators of Ding et al. 2020 share: the citation, the prompt's answers and
their mean length (the length of a generated answer), the generic-corpus parameters, and a memo of the
structures rebuilt from a fit state."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import Field

from callbluff.attacks.base import AttackParams, GeneratorParams
from callbluff.records import Record
from callbluff.resources.corpus import DEFAULT_MAX_WORDS, SQUAD_NAME, Corpus, CorpusSpec, generic_corpus

DING = "Ding et al. 2020, Don't take 'nswvtnvakgxpm' for an answer"

T = TypeVar("T")


def prompt_answers(records: Sequence[Record]) -> list[str]:
    """The non-blank answer texts of a prompt's records (the prompt-specific corpus, Sec. 2.1)."""
    return [t for t in (getattr(r, "text", "") for r in records) if isinstance(t, str) and t.strip()]


class GenericCorpusParams(GeneratorParams):
    """Parameters of the generators that read the generic corpus (Sec. 2.1): ``corpus`` is a ``.txt`` file
    (one document per line), a ``.jsonl`` file (text in ``corpus_field``), a SQuAD-style ``.json`` file or a
    directory of them; unset means the SQuAD v1.1 Wikipedia paragraphs (:mod:`callbluff.resources.corpus`).
    ``corpus_max_words`` keeps evenly spaced documents up to about that many words (default: the size of
    the Brown corpus the paper used; ``null`` keeps all)."""

    corpus: str | None = None
    corpus_field: str = "text"
    corpus_max_words: int | None = Field(DEFAULT_MAX_WORDS, ge=1)

    def spec(self) -> CorpusSpec:
        return CorpusSpec(self.corpus, self.corpus_field, self.corpus_max_words)

    def load(self) -> Corpus:
        """The corpus (read once per process); :class:`~callbluff.resources.corpus.CorpusError` if unusable."""
        return generic_corpus(self.spec())


class GenericCorpusUser:
    """Mixin of the generators that read the generic corpus: they declare the ``generic-corpus`` requirement
    (the default corpus, :mod:`callbluff.resources.requirements`), dropped by an instance that is given its
    own ``corpus`` (or, for LMGenerate, a ``model_dir``), which then needs no default corpus."""

    requires: ClassVar[tuple[str, ...]] = ("generic-corpus",)

    def _own_corpus(self, p: AttackParams) -> None:
        if (getattr(p, "corpus", None) not in (None, SQUAD_NAME)) or getattr(p, "model_dir", None):
            self.requires = ()  # type: ignore[misc]


class StateMemo(Generic[T]):
    """The structure last built from a fit state, rebuilt only when another state comes (one per prompt and
    chunk, not one per answer). Pickles empty, so workers rebuild it from the state they are given."""

    def __init__(self, build: Callable[[Any], T]) -> None:
        self.build = build
        self._last: tuple[Any, T] | None = None

    def __call__(self, state: Any) -> T:
        last = self._last
        if last is None or last[0] is not state:
            last = self._last = (state, self.build(state))
        return last[1]

    def __getstate__(self) -> dict[str, Any]:
        return {"build": self.build, "_last": None}
