"""Chat graders: the message templates, the structured-output request and the reading of the reply, shared by the
OpenAI-compatible chat target (:mod:`callbluff.targets.openai_target`) and the local causal LM (:mod:`callbluff.
targets.hf`, ``task = "text-generation"``), so both ask the same question and read the answer the same way.

Templates
    ``system`` and ``user`` are strings with placeholders ``${question}`` (the prompt's question, or the input's
    text for a QA task), ``${rubric}``, ``${reference}`` (the prompt's model answer), ``${text}`` (the response to
    grade, or the question of a QA input), ``${context}`` (a QA input's paragraph, or the prompt's reading passage:
    ``Prompt.source``), ``${score_min}``,
    ``${score_max}`` and ``${prompt_id}``. A *line* of a template that uses a placeholder whose value is missing
    (a prompt without a rubric, a dataset without reference answers) is dropped whole, so a grader is never shown
    "Rubric: " followed by nothing (the issue is silent on missing fields; this is the choice). Other text is
    kept as written (``$`` alone is literal).

    Built-in defaults: for a scorer, a grading instruction naming the scale and asking for ``{"score": N}``
    (:data:`SCORE_SYSTEM`, :data:`SCORE_USER`: the question, the reading passage where the prompt has one, the
    reference answer, the rubric, the answer); for a QA task, an instruction to answer from the context with a
    short span, as ``{"answer": "..."}`` (:data:`ANSWER_SYSTEM`, :data:`ANSWER_USER`). Without structured output
    (``response_format = "none"``, and the local causal LM) the system message asks for the bare number or
    answer instead (:data:`SCORE_SYSTEM_TEXT`, :data:`ANSWER_SYSTEM_TEXT`), which the default reading expects.

What is asked for
    ``output = "score"`` or ``"answer"`` says it; ``"auto"`` (the default) grades an input whose ``prompt_id`` is
    bound to a :class:`~callbluff.records.Prompt` (a scale to score on: :meth:`ChatSpec.kind`) and answers any
    other input (QA records carry no prompt).

Structured output (``response_format``), the dialects servers actually accept
    * ``"json_schema"``: OpenAI's ``{"response_format": {"type": "json_schema", "json_schema": {"name",
      "strict": true, "schema"}}}``;
    * ``"json_object"``: llama.cpp's ``{"response_format": {"type": "json_object", "schema": ...}}`` (the
      llama.cpp server and llama-cpp-python turn the schema into a grammar; llama-cpp-python 0.3.36 answers the
      ``json_schema`` form with an HTTP 500);
    * ``"structured_outputs"``: vLLM's ``{"structured_outputs": {"json": ...}}`` (vLLM >= 0.12 removed
      ``guided_json``);
    * ``"none"``: nothing; the reply is free text.

    The schema (:meth:`ChatSpec.schema`) is an object with one required key, ``score`` or ``answer`` (a
    string). A scale whose ends are whole numbers (at most 100 points wide) is asked for as an ``integer`` with
    an ``enum`` of its points: llama.cpp's schema-to-grammar conversion (llama-cpp-python 0.3.36) enforces
    ``enum`` but not ``minimum``/``maximum`` (SmolLM2-135M answered ``{"score": 10}`` on a 0-5 scale with the
    bounds, never outside it with the enum). Other scales are a ``number`` with ``minimum``/``maximum``. A
    grader is thus asked for whole points on a whole-number scale (Mohler's half points are averages of two
    raters' whole points).

Reading the reply
    ``score_path`` / ``answer_path``: a dotted path into the reply's JSON (``"score"``, ``"result.grade"``; the
    syntax of the HTTP target's ``response_path``). A reply wrapped in a Markdown code fence is read inside the
    fence; otherwise the text from its first ``{`` to its last ``}`` is tried when the whole reply is not JSON.
    ``score_regex`` / ``answer_regex``: a regular expression whose *last* match in the reply wins (a grader
    that reasons first and concludes last; a student's fake "score: 5" earlier in an echoed answer does not
    count), its first group if it has groups. Defaults: the paths ``score`` / ``answer`` when a structured
    output is requested, else the regex :data:`DEFAULT_SCORE_REGEX` (the last number) for a score and the
    whole reply (stripped) for an answer. A reply that cannot be read is :class:`ReplyError` (the caller's
    error row: the cause and a snippet of the reply), never a 0.

Samples (``n``)
    :func:`aggregate` combines ``n`` readings of one input: a score is their mean (the spread is kept in
    :attr:`~callbluff.targets.base.Output.samples`); an answer is the most frequent one (ties: the first seen),
    with every distinct answer as a candidate scored by its share of the votes. One failed sample fails the
    input (a mean over the samples that happened to parse would be another statistic than the one asked for).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from callbluff.records import Prompt, canonical_json
from callbluff.targets._common import CoercionError, PathNotFound, _as_score, _parse_path, resolve_path
from callbluff.targets.base import Candidate, Input, Output, input_slots

ResponseFormat = Literal["json_schema", "json_object", "structured_outputs", "none"]
RESPONSE_FORMATS: tuple[str, ...] = ("json_schema", "json_object", "structured_outputs", "none")
TEMPLATE_FIELDS: tuple[str, ...] = ("question", "rubric", "reference", "text", "context", "score_min", "score_max",
                                    "prompt_id")
DEFAULT_SCORE_REGEX = r"-?\d+(?:\.\d+)?"
SNIPPET = 200  # characters of an unreadable reply kept in its error text
MAX_ENUM = 100  # a whole-number scale up to this wide is asked for as an enum of its points

SCORE_SYSTEM = ("You are a strict grader. Grade the student's answer to the question against the reference answer "
                "and the rubric, on a scale from ${score_min} (wrong or irrelevant) to ${score_max} (fully "
                "correct). Reply with JSON only, in the form {\"score\": N}.")
SCORE_USER = ("Question: ${question}\n"
              "Reading passage: ${context}\n"
              "Reference answer: ${reference}\n"
              "Rubric: ${rubric}\n"
              "Student answer: ${text}")
ANSWER_SYSTEM = ("Answer the question with a short span copied from the context. Reply with JSON only, in the form "
                 "{\"answer\": \"...\"}.")
SCORE_SYSTEM_TEXT = ("You are a strict grader. Grade the student's answer to the question against the reference "
                     "answer and the rubric, on a scale from ${score_min} (wrong or irrelevant) to ${score_max} (fully "
                     "correct). Reply with the score only, as a number.")
ANSWER_SYSTEM_TEXT = "Answer the question with a short span copied from the context. Reply with the answer only."
ANSWER_USER = ("Context: ${context}\n"
               "Question: ${question}")

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.S)


class ReplyError(ValueError):
    """A grader's reply (or the request for it) cannot be read as the asked-for output; the message is the row's
    error text."""


def template_fields(template: str) -> set[str]:
    """The placeholders ``template`` uses."""
    return set(_PLACEHOLDER.findall(template))


def check_template(template: str, key: str) -> str:
    """``template``, or :class:`ValueError` naming an unknown placeholder, ``key`` and the allowed ones."""
    allowed = (*TEMPLATE_FIELDS, *(s for s in input_slots() if s not in TEMPLATE_FIELDS))
    bad = sorted(template_fields(template) - set(allowed))
    if bad:
        raise ValueError(f"{key} uses ${{{bad[0]}}}, which is not a template field (allowed: "
                         f"{', '.join('${' + f + '}' for f in allowed)}; the input slots registered tasks declare "
                         "are fields too)")
    return template


def check_regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    return pattern


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def render(template: str, values: Mapping[str, str | None]) -> str:
    """``template`` with its placeholders filled; a line using a missing (``None``) value is dropped."""
    lines = []
    for line in template.split("\n"):
        names = _PLACEHOLDER.findall(line)
        if any(values.get(n) is None for n in names):
            continue
        lines.append(_PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), line))
    return "\n".join(lines)


def snippet(text: str, limit: int = SNIPPET) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _load_json(content: str) -> Any:
    text = content.strip()
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1).strip()] if fenced else []
    candidates.append(text)
    a, b = text.find("{"), text.rfind("}")
    if 0 <= a < b:
        candidates.append(text[a:b + 1])
    for c in candidates:
        try:
            return json.loads(c)
        except (json.JSONDecodeError, ValueError):
            continue
    raise ReplyError(f"unparseable reply (not JSON): {snippet(content)}")


class ChatReading(BaseModel):
    """The chat keys shared by ``openai`` and ``hf`` text generation (:mod:`callbluff.targets.chat`): templates
    and how the reply is read."""

    system: str | None = None
    user: str | None = None
    score_path: str | None = None
    score_regex: str | None = None
    answer_path: str | None = None
    answer_regex: str | None = None
    max_tokens: int | None = Field(None, ge=1)

    @field_validator("system", "user")
    @classmethod
    def _template(cls, v: str | None, info: Any) -> str | None:
        return None if v is None else check_template(v, info.field_name)

    @field_validator("score_regex", "answer_regex")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        return None if v is None else check_regex(v)

    @model_validator(mode="after")
    def _one_way(self) -> Any:
        for a, b in (("score_path", "score_regex"), ("answer_path", "answer_regex")):
            if getattr(self, a) is not None and getattr(self, b) is not None:
                raise ValueError(f"keys {a!r} and {b!r}: give one of them, not both")
        return self


@dataclass(frozen=True)
class ChatSpec:
    """The templates and the reading of a chat grader's reply (see the module docstring). ``system``/``user`` of
    ``None`` mean the built-in defaults for the kind of output asked for."""

    system: str | None = None
    user: str | None = None
    response_format: str = "none"
    score_path: str | None = None
    score_regex: str | None = None
    answer_path: str | None = None
    answer_regex: str | None = None
    output: str = "auto"

    def __post_init__(self) -> None:
        if self.response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {', '.join(RESPONSE_FORMATS)}, got "
                             f"{self.response_format!r}")
        for key in ("system", "user"):
            if getattr(self, key) is not None:
                check_template(getattr(self, key), key)
        for a, b in (("score_path", "score_regex"), ("answer_path", "answer_regex")):
            if getattr(self, a) is not None and getattr(self, b) is not None:
                raise ValueError(f"give {a} or {b}, not both")
        for key in ("score_regex", "answer_regex"):
            if getattr(self, key) is not None:
                check_regex(getattr(self, key))

    def identity(self) -> list[Any]:
        """What decides how a reply is read (part of the target's fingerprint)."""
        return [self.response_format, self.score_path, self.score_regex, self.answer_path, self.answer_regex,
                self.output]

    # -- what is asked --------------------------------------------------------------------------------------
    def kind(self, inp: Input, prompt: Prompt | None) -> str:
        """``score``, ``answer`` or ``both``: the declared ``output``, or for ``auto`` a score when the input is
        bound to a prompt, else an answer."""
        if self.output != "auto":
            return self.output
        return "score" if prompt is not None else "answer"

    def values(self, inp: Input, prompt: Prompt | None) -> dict[str, str | None]:
        """The template fields for ``inp`` (``None`` where the data has nothing). ``context`` is the input's own
        paragraph (QA), else the prompt's source passage (``Prompt.source``: an ASAP-AES source-dependent essay
        set's reading passage), so an essay grader can be shown what the students read."""
        context = inp.context
        if prompt is not None:
            question: str | None = prompt.text or None
            rubric, reference = prompt.rubric, prompt.reference
            lo, hi = _fmt(prompt.score_min), _fmt(prompt.score_max)
            if context is None:
                context = prompt.source or None
        else:
            question, rubric, reference, lo, hi = inp.text, None, None, None, None
        return {**dict(inp.extra), "question": question, "rubric": rubric, "reference": reference, "text": inp.text,
                "context": context, "score_min": lo, "score_max": hi, "prompt_id": inp.prompt_id}

    def messages(self, inp: Input, prompt: Prompt | None) -> list[dict[str, str]]:
        """The chat messages for ``inp`` (system first, when its rendering is not empty)."""
        kind = self.kind(inp, prompt)
        if kind in ("score", "both") and prompt is None:
            raise ReplyError(f"no prompt bound for prompt_id {inp.prompt_id!r}: a chat grader needs the prompt's "
                             "scale (the engine binds the dataset's prompts; from Python call "
                             "target.bind_prompts(dataset.prompts))")
        answer = kind == "answer"
        vals = self.values(inp, prompt)
        if self.system is not None:
            system_template = self.system
        elif self.response_format == "none":  # free text: ask for the bare number or answer, read as such
            system_template = ANSWER_SYSTEM_TEXT if answer else SCORE_SYSTEM_TEXT
        else:
            system_template = ANSWER_SYSTEM if answer else SCORE_SYSTEM
        system = render(system_template, vals)
        user = render(self.user if self.user is not None else (ANSWER_USER if answer else SCORE_USER), vals)
        msgs = [{"role": "system", "content": system}] if system.strip() else []
        msgs.append({"role": "user", "content": user})
        return msgs

    def schema(self, kind: str, prompt: Prompt | None) -> dict[str, Any]:
        """The JSON schema of the reply asked for."""
        props: dict[str, Any] = {}
        if kind in ("score", "both"):
            assert prompt is not None
            lo, hi = float(prompt.score_min), float(prompt.score_max)
            if lo.is_integer() and hi.is_integer() and hi - lo <= MAX_ENUM:
                props["score"] = {"type": "integer", "enum": list(range(int(lo), int(hi) + 1))}
            else:
                props["score"] = {"type": "number", "minimum": lo, "maximum": hi}
        if kind in ("answer", "both"):
            props["answer"] = {"type": "string"}
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    def request_fields(self, kind: str, prompt: Prompt | None) -> dict[str, Any]:
        """The body fields that ask for structured output in this target's dialect (empty for ``none``)."""
        if self.response_format == "none":
            return {}
        schema = self.schema(kind, prompt)
        if self.response_format == "json_schema":
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": "grade", "strict": True, "schema": schema}}}
        if self.response_format == "json_object":
            return {"response_format": {"type": "json_object", "schema": schema}}
        return {"structured_outputs": {"json": schema}}

    # -- reading the reply ----------------------------------------------------------------------------------
    def _path_or_regex(self, field: str) -> tuple[str | None, str | None]:
        path, regex = getattr(self, f"{field}_path"), getattr(self, f"{field}_regex")
        if path is None and regex is None:
            if self.response_format != "none":
                return field, None
            return None, (DEFAULT_SCORE_REGEX if field == "score" else None)
        return path, regex

    def _read(self, content: str, field: str) -> Any:
        path, regex = self._path_or_regex(field)
        if path is not None:
            data = _load_json(content)
            try:
                return resolve_path(data, _parse_path(path))
            except PathNotFound as exc:
                raise ReplyError(f"unparseable reply: {field}_path {path!r} not found ({exc}) in "
                                 f"{snippet(content)}") from None
        if regex is None:
            return content.strip()
        matches = list(re.finditer(regex, content))
        if not matches:
            raise ReplyError(f"unparseable reply: {field}_regex {regex!r} does not match {snippet(content)}")
        m = matches[-1]
        return m.group(1) if m.re.groups else m.group(0)

    def parse(self, content: str, kind: str) -> Output:
        """The :class:`Output` one reply gives, or :class:`ReplyError`."""
        if content is None or not str(content).strip():
            raise ReplyError("unparseable reply: the grader returned no text")
        score: float | None = None
        answer: str | None = None
        if kind in ("score", "both"):
            value = self._read(content, "score")
            try:
                score = _as_score(value)
            except CoercionError as exc:
                raise ReplyError(f"unparseable reply: the score is not a number ({exc}) in {snippet(content)}") \
                    from None
        if kind in ("answer", "both"):
            value = self._read(content, "answer")
            if isinstance(value, (dict, list)):
                raise ReplyError(f"unparseable reply: the answer is not text in {snippet(content)}")
            answer = str(value).strip()
        return Output(score=score, answer=answer)


def aggregate(outs: Sequence[Output]) -> Output:
    """One output from the ``n`` samples of an input (see the module docstring)."""
    if len(outs) == 1:
        return outs[0]
    failed = [(k, o) for k, o in enumerate(outs) if o.error is not None]
    if failed:
        k, o = failed[0]
        return Output(error=f"{len(failed)} of {len(outs)} samples failed; sample {k + 1}: {o.error}")
    score = None
    samples: tuple[float, ...] = ()
    if all(o.score is not None for o in outs):
        samples = tuple(float(o.score) for o in outs)  # type: ignore[arg-type]
        score = math.fsum(samples) / len(samples)
    answer = None
    cands: tuple[Candidate, ...] = ()
    if all(o.answer is not None for o in outs):
        votes = Counter(o.answer for o in outs)
        order = sorted(votes, key=lambda a: (-votes[a], [o.answer for o in outs].index(a)))
        answer = order[0]
        cands = tuple(Candidate(a, votes[a] / len(outs)) for a in order)  # type: ignore[arg-type]
    return Output(score=score, answer=answer, candidates=cands, samples=samples)


def request_key(parts: Any) -> str:
    """SHA-256 of the canonical JSON of ``parts`` (a chat target's cache key)."""
    return hashlib.sha256(canonical_json(parts).encode("utf-8", "surrogatepass")).hexdigest()
