"""Shared pieces of the target adapters: turning whatever a system returns into an :class:`Output`, and a
small base class giving every adapter ``stats``, ``close()`` and context-manager support.

Coercion rules (one place, so every adapter agrees; DESIGN.md "a failed prediction becomes an error row,
never a crash and never a silent zero"):

* an :class:`Output` is taken as is;
* a number (int, float, numpy scalar, numeric string for ``output="score"``) is a ``score``; NaN/inf and
  ``None`` are errors, never zeros;
* a string is an ``answer``;
* a dict uses the keys ``score``, ``answer``, ``candidates`` (``[[text, score], ...]`` or
  ``[{"text":..., "score":...}, ...]``) and ``error``;
* a list/tuple of ``(text, score)`` pairs is a ranked candidate list whose first entry is the answer.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any, Self

from callbluff.records import canonical_json
from callbluff.resources.paths import file_sha256  # noqa: F401  (the adapters' file identity, re-exported)
from callbluff.targets.base import OUTPUT_KINDS, Candidate, Output, OutputKind, TargetStats  # noqa: F401


class CoercionError(ValueError):
    """A value returned by a target cannot be read as the expected kind of output."""


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _as_score(value: Any) -> float:
    if isinstance(value, bool):
        raise CoercionError(f"expected a number, got a boolean {value!r}")
    if isinstance(value, numbers.Real):
        score = float(value)
    elif isinstance(value, str):
        try:
            score = float(value.strip())
        except ValueError:
            raise CoercionError(f"expected a number, got the string {_short(value)}") from None
    elif hasattr(value, "item") and callable(value.item):  # 0-d numpy / torch arrays
        try:
            return _as_score(value.item())
        except (ValueError, TypeError):
            raise CoercionError(f"expected a number, got {_short(value)}") from None
    else:
        raise CoercionError(f"expected a number, got {type(value).__name__} {_short(value)}")
    if not math.isfinite(score):
        raise CoercionError(f"non-finite score {score!r}")
    return score


def _as_candidates(value: Any) -> tuple[Candidate, ...]:
    if not isinstance(value, (list, tuple)):
        raise CoercionError(f"candidates must be a list of [text, score] pairs, got {_short(value)}")
    out: list[Candidate] = []
    for item in value:
        if isinstance(item, Candidate):
            out.append(item)
        elif isinstance(item, Mapping) and "text" in item:
            out.append(Candidate(str(item["text"]), _as_score(item.get("score", 0.0))))
        elif isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
            out.append(Candidate(item[0], _as_score(item[1])))
        elif isinstance(item, str):
            out.append(Candidate(item, 0.0))
        else:
            raise CoercionError(f"cannot read candidate {_short(item)} (want [text, score])")
    return tuple(out)


def _from_mapping(value: Mapping[str, Any], kind: str) -> Output:
    if value.get("error") is not None:
        return Output(error=str(value["error"]))
    score = value.get("score")
    answer = value.get("answer")
    cands = _as_candidates(value["candidates"]) if value.get("candidates") is not None else ()
    if answer is None and cands:
        answer = cands[0].text
    if kind == "score" and score is None:
        raise CoercionError(f"no 'score' in {_short(dict(value))}")
    if kind == "answer" and answer is None:
        raise CoercionError(f"no 'answer' in {_short(dict(value))}")
    if score is None and answer is None:
        raise CoercionError(f"neither 'score' nor 'answer' in {_short(dict(value))}")
    return Output(score=None if score is None else _as_score(score),
                  answer=None if answer is None else str(answer), candidates=cands)


def coerce_output(value: Any, kind: str = "auto") -> Output:
    """Read ``value`` (what a system returned for one input) as an :class:`Output` of ``kind``.

    Raises :class:`CoercionError` (with the offending value, shortened) when it cannot be read; callers turn
    that into ``Output(error=...)``.
    """
    if kind not in OUTPUT_KINDS:
        raise ValueError(f"output kind must be one of {OUTPUT_KINDS}, got {kind!r}")
    if kind == "both":  # read like auto; the engine's output check then requires both fields
        kind = "auto"
    if kind != "answer" and type(value) in (float, int):  # fast path: a plain number is a score
        score = float(value)
        if not math.isfinite(score):
            raise CoercionError(f"non-finite score {score!r}")
        return Output(score=score)
    if isinstance(value, Output):
        return value
    if value is None:
        raise CoercionError("the target returned None")
    if isinstance(value, Mapping):
        return _from_mapping(value, kind)
    if kind == "score":
        return Output(score=_as_score(value))
    if kind == "answer":
        if isinstance(value, (list, tuple)):
            cands = _as_candidates(value)
            return Output(answer=cands[0].text if cands else "", candidates=cands)
        if isinstance(value, str):
            return Output(answer=value)
        raise CoercionError(f"expected an answer string, got {type(value).__name__} {_short(value)}")
    # auto
    if isinstance(value, str):
        return Output(answer=value)
    if isinstance(value, (list, tuple)):
        cands = _as_candidates(value)
        return Output(answer=cands[0].text if cands else "", candidates=cands)
    return Output(score=_as_score(value))


TARGET_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)
"""What a target's own code may raise and still be only that input's failure: any exception, and
``SystemExit`` (a ``sys.exit(n)`` in user code must not end the run with exit code n). ``KeyboardInterrupt``
and ``GeneratorExit`` are not caught: Ctrl-C still stops the run."""


def exception_cause(exc: BaseException) -> str:
    """``"ExceptionType: message"``: the error text stored for an input whose prediction raised
    (``"target called sys.exit(N)"`` for a ``SystemExit``)."""
    if isinstance(exc, SystemExit):
        return f"target called sys.exit({exc.code!r})"
    msg = str(exc).strip()
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def raised_cause(exc: BaseException) -> str:
    """The error text for every input of a call whose target raised ``exc`` instead of returning outputs."""
    return exception_cause(exc) if isinstance(exc, SystemExit) else f"target raised {exception_cause(exc)}"


def config_hash(obj: Any, n: int = 16) -> str:
    """Short SHA-256 of the canonical JSON of ``obj`` (for fingerprints)."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:n]


class TargetBase:
    """Common behaviour of the adapters: ``stats``, ``name``, ``close()``, ``with target: ...``.

    Subclasses set ``fingerprint`` and implement ``predict``; ``to_config()`` returns what identifies the
    adapter for ``run.json`` (never secrets).
    """

    fingerprint: str
    name: str
    stats: TargetStats

    def close(self) -> None:
        """Release processes, connections, threads. Safe to call twice; the target may be used again."""

    def to_config(self) -> dict[str, Any]:
        return {"type": type(self).__name__, "name": self.name, "fingerprint": self.fingerprint}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, fingerprint={self.fingerprint!r})"


def check_lengths(outputs: Sequence[Any], n: int, what: str) -> None:
    if len(outputs) != n:
        raise CoercionError(f"{what} returned {len(outputs)} results for {n} inputs")


class PathNotFound(LookupError):
    pass


def _parse_path(path: str | None) -> list[str]:
    if path is None:
        return []
    p = path.strip()
    p = p.removeprefix("$")
    p = re.sub(r"\[(\*|-?\d+)\]", r".\1", p).strip(".")
    return [s for s in p.split(".") if s] if p else []


def resolve_path(data: Any, parts: Sequence[str]) -> Any:
    """Follow dotted ``parts`` into ``data``; ``*`` maps the rest of the path over a list (or dict values).

    Inside a ``*`` map, an element that lacks the rest of the path but is a dict with an ``"error"`` yields
    ``Output(error=...)`` for that element instead of failing the whole reply.
    """
    cur = data
    for k, part in enumerate(parts):
        if part == "*":
            if isinstance(cur, dict):
                items = list(cur.values())
            elif isinstance(cur, list):
                items = cur
            else:
                raise PathNotFound(f"'*' needs a list, found {type(cur).__name__}")
            out = []
            for item in items:
                try:
                    out.append(resolve_path(item, parts[k + 1:]))
                except PathNotFound:
                    if isinstance(item, dict) and item.get("error") is not None:
                        out.append(Output(error=str(item["error"])))
                    else:
                        raise
            return out
        if isinstance(cur, dict):
            if part not in cur or cur[part] is None:
                raise PathNotFound(f"no key {part!r}")
            cur = cur[part]
        elif isinstance(cur, list):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                raise PathNotFound(f"no index {part!r} in a list of {len(cur)}") from None
        else:
            raise PathNotFound(f"cannot take {part!r} of {type(cur).__name__}")
    if cur is None:
        raise PathNotFound("value is null")
    return cur
