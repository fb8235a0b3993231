"""Output validation and secret scrubbing: what a target returned, checked before anything is stored.

Every output a target returns passes through an :class:`OutputCheck` before it reaches the prediction cache,
the run's tables or an attack's oracle:

* the target *declares* what it returns (``output = "score" | "answer" | "both"``; ``"auto"`` means "what the
  task needs", the task descriptor's ``output``: a score for essay/content scoring, an answer for
  reading/questions);
* a scorer's numeric string (``"3"``) is accepted as its number; an answer where a score is needed, a missing
  answer, NaN, or anything unparseable becomes an error with its cause, never a silent row;
* a score outside the prompt's scale is an error (``"score 99 outside 0-3 for prompt 1"``) unless the target
  says ``out_of_range = "clip"`` explicitly;
* secrets given through ``${VAR}`` in a target's settings are replaced by ``***`` in every string of the
  output (answers, candidates, errors), so a server that echoes a token cannot get it written anywhere: the raw
  value and the forms callbluff itself makes of it (:func:`secret_forms`: percent-encoded, base64,
  JSON-escaped, repr-escaped), and a form cut where callbluff cuts a quoted reply (a prefix of 8 characters or
  more followed by ``...``, a suffix after it: :func:`scrub_text`); the adapters scrub a reply before they cut
  it. Other transformed forms a target might echo (upper-cased, hashed, a prefix it cut itself) cannot be
  recognised.

The check is pure and cheap (microseconds); :class:`~callbluff.targets.wrappers.CachedTarget` applies it to
fresh outputs before caching them (so only valid outputs are ever cached and an invalid one is asked again on
a later run) and to cache hits (so a changed scale or ``out_of_range`` takes effect at once). What is cached
is the scrubbed output as the target gave it (a clipped score is stored unclipped), so switching
``out_of_range`` back to ``error`` refuses it again.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from callbluff.records import Prompt
from callbluff.targets.base import OUTPUT_KINDS, TASK_OUTPUTS, Candidate, Input, Output, OutputKind  # noqa: F401

OutOfRange = Literal["error", "clip"]
MIN_SECRET_LEN = 4  # shorter values cannot be scrubbed without mangling ordinary text
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _escaped(text: str) -> set[str]:
    """``text`` as JSON and Python write it inside a string: JSON-escaped (ASCII-only and not, ``/`` escaped as
    some servers do) and repr-escaped (either quote)."""
    js = json.dumps(text)[1:-1]
    single = repr(text + "'\"")[1:-4]  # inside a '...' repr: ' escaped (the repr of a text holding both quotes)
    return {text, js, json.dumps(text, ensure_ascii=False)[1:-1], js.replace("/", "\\/"), single,
            single.replace("\\'", "'")}  # inside a "..." repr: ' as is


def secret_forms(secret: str) -> set[str]:
    """The forms of ``secret`` that are scrubbed: the raw value and the forms callbluff itself produces from it,
    percent-encoded (``quote`` with and without ``/`` safe, ``quote_plus``: a ``${VAR}`` in a URL), base64
    (standard and URL-safe, with and without padding), and each of those JSON-escaped and repr-escaped (a reply
    quoted in an error text, an error text written as JSON: a secret holding ``"`` or ``\\`` is stored escaped),
    twice over. Other transformations a target may apply before echoing a secret (upper-casing, a prefix of it,
    another encoding) cannot be recognised and are not scrubbed."""
    from urllib.parse import quote, quote_plus

    raw = secret.encode("utf-8", "surrogatepass")
    b64 = base64.b64encode(raw).decode()
    b64u = base64.urlsafe_b64encode(raw).decode()
    forms = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), b64, b64u,
             b64.rstrip("="), b64u.rstrip("=")}
    once = {e for f in forms for e in _escaped(f)}
    forms = {e for f in once for e in _escaped(f)}
    return {f for f in forms if len(f) >= MIN_SECRET_LEN}


@lru_cache(maxsize=256)
def scrub_forms(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """Every form of ``secrets`` (:func:`secret_forms`, values shorter than :data:`MIN_SECRET_LEN` left out),
    longest first, so that a longer form is replaced before a shorter one inside it."""
    forms = {f for s in secrets if len(s) >= MIN_SECRET_LEN for f in secret_forms(s)}
    return tuple(sorted(forms, key=lambda f: (-len(f), f)))


CUT_MARK = "..."
"""What callbluff puts where it cuts a quoted reply or a stderr tail."""
MIN_CUT = 8
"""The shortest cut piece of a secret form that :func:`scrub_text` recognises (shorter ones would hit ordinary
text)."""


def scrub_text(text: str, forms: Sequence[str]) -> str:
    """``text`` with every one of ``forms`` (:func:`scrub_forms`) replaced by ``***``, and every *cut* form: a
    prefix of a form (``MIN_CUT`` characters or more) right before ``...``, or a suffix of one right after it (a
    secret a cut of the text left in part). The adapters scrub a reply before they cut it; this catches a text
    cut elsewhere (another adapter, a stderr tail, an older cache)."""
    if not forms or not text:
        return text
    for f in forms:
        if f in text:
            text = text.replace(f, "***")
    if CUT_MARK not in text:
        return text
    for f in forms:
        if len(f) <= MIN_CUT:
            continue
        text = _cut_prefixes(text, f)
        text = _cut_suffixes(text, f)
    return text


def _cut_prefixes(text: str, form: str) -> str:
    head = form[:MIN_CUT]
    i = text.find(head)
    while i >= 0:
        n = MIN_CUT
        while n < len(form) and i + n < len(text) and text[i + n] == form[n]:
            n += 1
        if text.startswith(CUT_MARK, i + n):
            text = text[:i] + "***" + text[i + n:]
            i = text.find(head, i + 3)
        else:
            i = text.find(head, i + 1)
    return text


def _cut_suffixes(text: str, form: str) -> str:
    j = text.find(CUT_MARK)
    while j >= 0:
        start = j + len(CUT_MARK)
        for n in range(len(form) - 1, MIN_CUT - 1, -1):
            if text.startswith(form[-n:], start):
                text = text[:start] + "***" + text[start + n:]
                break
        j = text.find(CUT_MARK, start)
    return text


def scrub_value(value: Any, forms: Sequence[str]) -> Any:
    """``value`` (JSON-like: strings, numbers, lists, dicts) with :func:`scrub_text` applied to every string in
    it, dictionary keys included (a server's ``finish_reason`` becomes a key of the run's counts)."""
    if not forms:
        return value
    if isinstance(value, str):
        return scrub_text(value, forms)
    if isinstance(value, Mapping):
        return {scrub_value(k, forms): scrub_value(v, forms) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_value(v, forms) for v in value)
    if isinstance(value, (set, frozenset)):
        return {scrub_value(v, forms) for v in value}
    return value


def needed_kind(kind: str, task_output: str) -> str:
    """The kind a target must deliver: its explicit kind, or for ``auto`` what the task needs (``task_output``,
    the task descriptor's ``output``: ``score`` or ``answer``)."""
    return task_output if kind == "auto" else kind


def _fmt(x: float) -> str:
    return f"{x:g}"


def _number(text: str) -> float | None:
    try:
        v = float(text.strip())
    except (ValueError, AttributeError):
        return None
    return v if math.isfinite(v) else None


@dataclass
class OutputCheck:
    """Validate outputs for one target in one run: ``kind`` resolved against ``task_output`` (what the run's
    task needs, ``score`` or ``answer``: ``get_task(name).output``), scale from ``prompts``.

    ``secrets`` are scrubbed from every string. ``clipped`` counts outputs moved onto the scale (``clip`` mode).
    """

    task_output: str
    kind: str = "auto"
    out_of_range: str = "error"
    prompts: Mapping[str, Prompt] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    clipped: int = 0

    def __post_init__(self) -> None:
        if self.task_output not in TASK_OUTPUTS:
            raise ValueError(f"task_output must be one of {', '.join(TASK_OUTPUTS)} (the task descriptor's output), "
                             f"got {self.task_output!r}")
        if self.kind not in OUTPUT_KINDS:
            raise ValueError(f"output must be one of {', '.join(OUTPUT_KINDS)}, got {self.kind!r}")
        if self.out_of_range not in ("error", "clip"):
            raise ValueError(f"out_of_range must be 'error' or 'clip', got {self.out_of_range!r}")
        self.need = needed_kind(self.kind, self.task_output)
        self.secrets = scrub_forms(tuple(self.secrets))

    # -- secrets ------------------------------------------------------------------------------------------
    def scrub(self, text: str) -> str:
        """``text`` with every form of the secrets, whole or cut, replaced by ``***`` (:func:`scrub_text`)."""
        return scrub_text(text, self.secrets)

    def scrub_value(self, value: Any) -> Any:
        """Every string in ``value`` (nested lists and dicts, keys included) scrubbed: a target's statistics
        (a chat server's ``model``, ``system_fingerprint``, ``finish_reason``) before they reach run.json."""
        return scrub_value(value, self.secrets)

    def scrub_output(self, out: Output) -> Output:
        """``out`` with every secret replaced by ``***`` in its strings (the form that may be stored)."""
        if not self.secrets:
            return out
        return Output(
            score=out.score,
            answer=None if out.answer is None else self.scrub(out.answer),
            candidates=tuple(Candidate(self.scrub(c.text), c.score) for c in out.candidates),
            error=None if out.error is None else self.scrub(out.error),
            samples=out.samples,
        )

    # -- validation ---------------------------------------------------------------------------------------
    def __call__(self, inp: Input, out: Output) -> Output:
        """The checked output for ``inp``: valid, or ``Output(error=cause)``."""
        out = self.scrub_output(out)
        if out.error is not None:
            return out
        if self.need in ("score", "both"):
            out = self._check_score(inp, out)
            if out.error is not None:
                return out
        if self.need in ("answer", "both") and out.answer is None:
            if out.score is not None and self.need == "answer":
                return Output(answer=_fmt(out.score), candidates=out.candidates)
            return Output(error=f"expected an answer, got {_describe(out)}")
        return out

    def _check_score(self, inp: Input, out: Output) -> Output:
        score = out.score
        if score is None:
            parsed = _number(out.answer) if out.answer is not None else None
            if parsed is None:
                return Output(error=f"expected a score, got {_describe(out)}")
            score = parsed
            out = Output(score=score, candidates=out.candidates, samples=out.samples)
        if not math.isfinite(score):
            return Output(error=f"non-finite score {score!r}")
        prompt = self.prompts.get(inp.prompt_id) if inp.prompt_id is not None else None
        if prompt is None:
            return out
        outside = [x for x in (score, *out.samples) if not prompt.in_range(x)]
        if outside:  # the mean of n samples, or any one of them (a chat grader's n > 1)
            if self.out_of_range == "clip":
                self.clipped += 1
                lo, hi = prompt.score_min, prompt.score_max
                samples = tuple(min(max(x, lo), hi) for x in out.samples)
                clipped = sum(samples) / len(samples) if samples else min(max(score, lo), hi)
                return Output(score=clipped, answer=out.answer, candidates=out.candidates, samples=samples)
            which = "score" if not prompt.in_range(score) else "sample score"
            return Output(error=f"{which} {_fmt(outside[0])} outside {_fmt(prompt.score_min)}-"
                                f"{_fmt(prompt.score_max)} for prompt {prompt.id} (fix the target, or set "
                                "out_of_range = \"clip\" on it)")
        return out


def _describe(out: Output) -> str:
    if out.answer is not None:
        a = out.answer if len(out.answer) <= 80 else out.answer[:77] + "..."
        return f"the answer {a!r}"
    if out.score is not None:
        return f"the score {_fmt(out.score)}"
    return "nothing"


def env_references(value: Any) -> set[str]:
    """Names of the environment variables referenced as ``${NAME}`` anywhere in ``value`` (nested)."""
    if isinstance(value, str):
        return set(_ENV_REF.findall(value))
    if isinstance(value, Mapping):
        return set().union(*(env_references(v) for v in value.values())) if value else set()
    if isinstance(value, Iterable) and not isinstance(value, (bytes, bytearray)):
        return set().union(*(env_references(v) for v in value))
    return set()


def secret_values(settings: Mapping[str, Any], *, skip: Iterable[str] = ("body_template", "system", "user")) -> tuple[str, ...]:
    """The values of the environment variables a target's settings reference through ``${VAR}``.

    ``body_template`` placeholders (``${text}``, ``${prompt_id}``...) are template fields, not secrets (nor are
    a chat target's ``system``/``user`` templates); a chat target's ``api_key_env`` names a secret variable.
    """
    skipped = set(skip)
    names = env_references({k: v for k, v in settings.items() if k not in skipped})
    if isinstance(settings.get("api_key_env"), str):  # a chat target's key: the variable is named, not ${...}
        names.add(settings["api_key_env"])
    return tuple(sorted(v for n in names if (v := os.environ.get(n))))
