"""The matches of spaCy's ``attribute_ruler``, found by an index instead of spaCy's general token ``Matcher``.

The English pipeline's attribute ruler (tag map, morphology and lemma exceptions: 179 patterns in
``en_core_web_sm`` 3.8) asks its ``Matcher`` for every pattern at every token; on short texts that search
costs about as much as the tagger and the parser together. Its patterns are simple: one or two tokens, each
token a conjunction of tests of one attribute (equal to a value, ``IN`` / ``NOT_IN`` a set, ``REGEX``), no
operators. :class:`IndexedRules` compiles exactly that subset and looks each token up by its attribute values
(only the patterns that can start there are tested), then hands the matches to the ruler's own
``set_annotations`` in the order its ``match`` gives them (pattern index, then position): the attributes set
are the same, token for token. A ruler whose patterns use anything else (operators, other attributes or
predicates, extensions, greedy filters) keeps spaCy's matcher (:func:`accelerate` returns False).

Semantics copied from spaCy's ``Matcher`` (spacy/matcher/matcher.pyx): a value is compared as the string
store's id of the pattern's value (booleans as 0 / 1; ``""`` is id 0, a missing tag or dependency); ``IN`` /
``NOT_IN`` test the id in the set of ids; ``REGEX`` searches the attribute's string; a pattern without
operators matches at every start where each of its tokens passes all of its tests; no match is filtered.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.pipeline import AttributeRuler
    from spacy.tokens import Doc

ATTRIBUTES = ("ORTH", "LOWER", "TAG", "DEP", "IS_SPACE")
"""The token attributes the compiled patterns may test (``TEXT`` is ``ORTH``, as in spaCy)."""
STRING_ATTRIBUTES = frozenset({"ORTH", "LOWER", "TAG", "DEP"})

Test = tuple[int, str, Any]
"""(attribute column, kind ``eq`` / ``in`` / ``not_in`` / ``regex``, value)."""


class Unsupported(ValueError):
    """A pattern :class:`IndexedRules` cannot reproduce exactly."""


def _compile_token(spec: dict[str, Any], strings: Any) -> list[Test]:
    from spacy.strings import get_string_id

    tests: list[Test] = []
    for name, value in spec.items():
        attr = name.upper() if isinstance(name, str) else name
        attr = "ORTH" if attr == "TEXT" else attr
        if attr not in ATTRIBUTES:
            raise Unsupported(f"attribute {name!r}")
        col = ATTRIBUTES.index(attr)
        if isinstance(value, bool):
            tests.append((col, "eq", int(value)))
        elif isinstance(value, str):
            tests.append((col, "eq", strings.add(value)))
        elif isinstance(value, int):
            tests.append((col, "eq", value))
        elif isinstance(value, dict):
            for kind, arg in value.items():
                kind = kind.upper()
                if kind in ("IN", "NOT_IN") and isinstance(arg, (list, tuple)) and \
                        all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in arg):
                    tests.append((col, kind.lower(), frozenset(get_string_id(v) for v in arg)))
                elif kind == "REGEX" and isinstance(arg, str) and attr in STRING_ATTRIBUTES:
                    tests.append((col, "regex", re.compile(arg)))
                else:
                    raise Unsupported(f"predicate {kind} {arg!r} on {name}")
        else:
            raise Unsupported(f"value {value!r} of {name}")
    return tests


class IndexedRules:
    """``ruler.match`` for a ruler whose patterns are all of the supported kind (see the module docstring);
    raises :class:`Unsupported` otherwise.

    What a token starts depends only on the attributes the patterns test: the one-token patterns it matches,
    and the longer ones whose first token it passes, are computed once per distinct combination of those
    attributes and kept (at most :data:`CACHE_SIZE` combinations; the cache is emptied when full)."""

    CACHE_SIZE = 50_000

    def __init__(self, ruler: AttributeRuler) -> None:
        strings = ruler.vocab.strings
        self.ruler = ruler
        self.strings = strings
        if any(f is not None for f in getattr(ruler.matcher, "_filter", {}).values()):
            raise Unsupported("greedy match filter")
        # alternatives: (attr_id, match_id, [tests of token 0, tests of token 1, ...])
        self.alternatives: list[tuple[int, int, list[list[Test]]]] = []
        for key, entry in enumerate(ruler.patterns):
            match_id = strings[str(key)]
            for pattern in entry["patterns"]:
                if not pattern or not all(isinstance(t, dict) for t in pattern):
                    raise Unsupported(f"pattern {pattern!r}")
                self.alternatives.append((key, match_id, [_compile_token(t, strings) for t in pattern]))
        from spacy.attrs import IDS

        # rows hold only the attributes some pattern tests (fewer distinct rows, more cache hits)
        used = sorted({col for _, _, tokens in self.alternatives for tests in tokens for col, _, _ in tests})
        at = {col: k for k, col in enumerate(used)}
        self.alternatives = [(key, match_id, [[(at[col], kind, value) for col, kind, value in tests]
                                              for tests in tokens])
                             for key, match_id, tokens in self.alternatives]
        self.attr_ids = [IDS[ATTRIBUTES[col]] for col in used]
        # each pattern filed under the values one equality / IN test of its first token accepts (patterns
        # without such a test are tried on every row)
        self._index: list[dict[int, list[int]]] = [{} for _ in used]
        self._everywhere: list[int] = []
        for n, (_, _, tokens) in enumerate(self.alternatives):
            test = next((t for t in tokens[0] if t[1] in ("eq", "in")), None)
            if test is None:
                self._everywhere.append(n)
            else:
                for v in ([test[2]] if test[1] == "eq" else test[2]):
                    self._index[test[0]].setdefault(v, []).append(n)
        self._starts: dict[tuple[int, ...], tuple[list[tuple[int, int]], list[int]]] = {}

    def _passes(self, tests: list[Test], row: tuple[int, ...]) -> bool:
        for col, kind, value in tests:
            got = row[col]
            if kind == "eq":
                if got != value:
                    return False
            elif kind == "in":
                if got not in value:
                    return False
            elif kind == "not_in":
                if got in value:
                    return False
            elif not value.search(self.strings[got]):
                return False
        return True

    def _starting(self, row: tuple[int, ...]) -> tuple[list[tuple[int, int]], list[int]]:
        """(attr_id, match_id) of the one-token patterns ``row`` matches; indices of the longer patterns whose
        first token it passes."""
        singles, longer = [], []
        for n in [n for col, index in enumerate(self._index) for n in index.get(row[col], ())] + self._everywhere:
            key, match_id, tokens = self.alternatives[n]
            if self._passes(tokens[0], row):
                if len(tokens) == 1:
                    singles.append((key, match_id))
                else:
                    longer.append(n)
        return singles, longer

    def clear(self) -> None:
        """Forget the rows seen (the matches stay the same; only the time to find them changes)."""
        self._starts.clear()

    def __call__(self, doc: Doc) -> list[tuple[int, int, int, int]]:
        """``(attr_id, match_id, start, end)`` sorted, as ``AttributeRuler.match`` returns them."""
        if not len(doc) or not self.attr_ids:
            rows: list[tuple[int, ...]] = [()] * len(doc)
        else:  # spaCy returns one column as a 1-D array
            rows = [tuple(r) for r in doc.to_array(self.attr_ids).reshape(len(doc), -1).tolist()]
        n, cache, out = len(rows), self._starts, []
        for i, row in enumerate(rows):
            hit = cache.get(row)
            if hit is None:
                if len(cache) >= self.CACHE_SIZE:
                    cache.clear()
                hit = cache[row] = self._starting(row)
            singles, longer = hit
            for key, match_id in singles:
                out.append((key, match_id, i, i + 1))
            for a in longer:
                key, match_id, tokens = self.alternatives[a]
                end = i + len(tokens)
                if end <= n and all(self._passes(tokens[k], rows[i + k]) for k in range(1, len(tokens))):
                    out.append((key, match_id, i, end))
        out.sort()
        return out


def accelerate(ruler: AttributeRuler) -> bool:
    """Make ``ruler`` find its matches with :class:`IndexedRules` (same matches, same annotations); False,
    leaving the ruler as it is, when a pattern is not of the supported kind."""
    try:
        ruler.match = IndexedRules(ruler)  # type: ignore[method-assign]
    except Unsupported:
        return False
    return True
