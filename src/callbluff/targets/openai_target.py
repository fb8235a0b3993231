"""An OpenAI-compatible chat endpoint as a target (``type = "openai"``): an LLM grader or answerer behind
``POST {base_url}/chat/completions`` (OpenAI, vLLM, llama.cpp / llama-cpp-python, Ollama, hosted APIs).

Request
    ``{"model", "messages", "temperature", "max_tokens", "seed"?, <structured-output fields>}``: the messages are
    the ``system``/``user`` templates rendered for the input and its prompt, the structured-output fields are the
    ``response_format`` dialect's (:mod:`callbluff.targets.chat`, which also reads the reply). The key is read
    from the environment variable ``api_key_env`` names and sent as ``Authorization: Bearer ...``; like the HTTP
    target's ``${VAR}`` headers it is expanded per request only and kept out of ``repr``, :meth:`to_config`, the
    fingerprint, the cache, pickles, logs and error texts (scrubbed in its raw, percent-encoded and base64
    forms). Extra ``headers`` may reference ``${VAR}`` as the HTTP target's do.

Samples
    ``n`` > 1 sends ``n`` requests per input (sample ``k`` with ``seed + k`` when ``seed`` is set) rather than
    OpenAI's ``n`` parameter, which llama.cpp servers do not honour; the readings are combined by
    :func:`callbluff.targets.chat.aggregate` (mean score with the samples kept in ``Output.samples``, majority
    answer with the vote shares as candidates).

Faults
    The HTTP target's machinery (:class:`~callbluff.targets.http_target.HttpTarget`, subclassed): ``concurrency``
    requests in flight, ``timeout``, ``retries`` with jittered exponential backoff for 408/425/429/5xx, timeouts,
    dropped connections and malformed JSON, honouring ``retry-after-ms`` and ``Retry-After`` (seconds or an HTTP
    date, capped at ``retry_after_max``), no redirects followed, a reply cap, streaming hand-over so the cache
    wrapper commits each answer before the next request takes its slot. A reply that arrives but cannot be read
    (no JSON where a path is asked for, no regex match, a score that is not a number, a refusal, an empty
    reply) is an error row with the cause and a snippet of the reply; it is not retried (the grader would most
    likely say the same again: at temperature 0 it is a property of the grader, counted as a parse failure).

Accounting
    ``stats.usage`` sums the replies' ``usage.prompt_tokens`` and ``completion_tokens``, counts
    ``finish_reason`` values and lists the distinct ``system_fingerprint`` and ``model`` values the server
    answered with; the caching wrapper shares this dict, so it reaches ``run.json``'s ``target_stats``.

Cache identity
    ``fingerprint`` = ``openai:`` + hash of (``base_url``, or for a running
    :class:`~callbluff.resources.local_llm.LocalLLMServer` its identity, model file and settings, not its port;
    ``model``, how the reply is read); :meth:`cache_key`
    = hash of (``model``, the rendered messages, the sampling settings ``temperature``, ``seed``,
    ``max_tokens``, ``n``, and the structured-output fields), so a changed template, rubric or reference answer
    is asked again and an unchanged one is never asked twice.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator
from callbluff.records import Prompt
from callbluff.resources.local_llm import death_of, identity_of
from callbluff.targets._common import config_hash
from callbluff.targets.base import Input, Output, TargetStats
from callbluff.targets.chat import ChatSpec, ReplyError, aggregate, request_key, snippet
from callbluff.targets.config import DEFAULT_MAX_RESPONSE_BYTES, RetryBounds, TargetSettings
from callbluff.targets.chat import ChatReading
from callbluff.targets.defence_settings import GraderDefence
from callbluff.targets.config import settings as target_settings
from callbluff.targets.http_target import HttpTarget, _Failure

DEFAULT_MAX_TOKENS = 256  # a grader's JSON verdict is a few tokens; a bound keeps a rambling model from the context's end


class OpenAIConfig(ChatReading, RetryBounds, TargetSettings):
    """An OpenAI-compatible chat endpoint as a grader or answerer (see :mod:`callbluff.targets.openai_target`).
    ``api_key_env`` names the environment variable holding the key (callbluff never writes its value; an echo of it
    is scrubbed: :mod:`callbluff.targets.validate`)."""

    ENV_KEYS: ClassVar[tuple[str, ...]] = ("headers",)
    type: Literal["openai"] = "openai"
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = Field(0.0, ge=0)
    seed: int | None = None
    n: int = Field(1, ge=1, le=64)
    response_format: Literal["json_schema", "json_object", "structured_outputs", "none"] = "json_schema"
    headers: dict[str, str] = Field(default_factory=dict)
    concurrency: int = Field(4, ge=1)
    timeout: float = Field(60.0, gt=0)
    retries: int = Field(3, ge=0)
    backoff: float = Field(0.5, ge=0)
    backoff_max: float = Field(8.0, ge=0)
    retry_after_max: float = Field(60.0, ge=0)
    rate_limit: float | None = Field(None, gt=0)
    max_response_bytes: int = Field(DEFAULT_MAX_RESPONSE_BYTES, ge=1)
    defence: GraderDefence | None = Field(None, description="the grader's own defences (spotlight, sandwich, "
                                          "known_answer, erase_budget): callbluff.targets.grader_defences")

    @field_validator("base_url")
    @classmethod
    def _base(cls, v: str) -> str:
        if not re.match(r"^https?://", v):
            raise ValueError(f"base_url must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1), "
                             f"got {v!r}")
        if v.rstrip("/").endswith("/chat/completions"):
            raise ValueError("base_url is the API root (e.g. https://api.openai.com/v1); /chat/completions is "
                             "added to it")
        return v.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(f"must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not its value; "
                             f"got a value that is not a variable name ({len(v)} characters, not shown)")
        return v



class OpenAITarget(HttpTarget):
    """A chat-completions endpoint as a grader (scores on the prompt's scale) or answerer (see the module
    docstring). ``OpenAITarget(OpenAIConfig(...))`` or ``OpenAITarget(base_url, model, **settings)``."""

    def __init__(self, base_url: str | OpenAIConfig, model: str | None = None, *, trust_env: bool = True,
                 **settings: Any) -> None:
        given = base_url if isinstance(base_url, OpenAIConfig) else None
        cfg = target_settings(OpenAIConfig, given, {} if given else {"type": "openai", "base_url": base_url,
                                                                      "model": model, **settings}, "OpenAITarget")
        self.config = cfg
        self.spec = ChatSpec(system=cfg.system, user=cfg.user, response_format=cfg.response_format,
                             score_path=cfg.score_path, score_regex=cfg.score_regex, answer_path=cfg.answer_path,
                             answer_regex=cfg.answer_regex, output=cfg.output)
        # the HttpTarget machinery's settings
        self.url = self.base_url + "/chat/completions"
        self.method = "POST"
        self.mode = "single"
        self.body_template: Any = None
        self.response_path = ""
        self._path: list[str] = []
        headers = dict(cfg.headers)
        if cfg.api_key_env:
            headers["Authorization"] = "Bearer ${" + cfg.api_key_env + "}"
        self.header_templates = headers
        self.batch_size = 1
        self._transport(cfg, trust_env)
        self.name = cfg.name or f"{cfg.model}@{cfg.base_url}"
        # a LocalLLMServer's identity is its model file and settings, not the port it got this time
        self.fingerprint = cfg.identity(lambda: "openai:" + config_hash(
            [identity_of(self.base_url) or self.base_url, self.model, self.spec.identity()]))
        self.stats = TargetStats()
        self.prompts: dict[str, Prompt] = {}
        self._init_runtime()

    # the chat settings, read from the validated config (never copied)
    base_url = property(lambda self: self.config.base_url)
    model = property(lambda self: self.config.model)
    api_key_env = property(lambda self: self.config.api_key_env)
    temperature = property(lambda self: self.config.temperature)
    max_tokens = property(lambda self: self.config.max_tokens or DEFAULT_MAX_TOKENS)
    n = property(lambda self: self.config.n)
    version_url = None  # a chat endpoint has none (HttpTarget reads it from an HttpConfig)

    def _init_runtime(self) -> None:
        super()._init_runtime()
        self._usage_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_usage_lock", None)
        return state

    def __repr__(self) -> str:
        return (f"OpenAITarget(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r}, "
                f"response_format={self.spec.response_format!r}, n={self.n}, fingerprint={self.fingerprint!r})")

    def to_config(self) -> dict[str, Any]:
        """The settings for ``run.json``: the key's variable name, never its value."""
        return {"type": "openai", "name": self.name, "base_url": self.base_url, "model": self.model,
                "api_key_env": self.api_key_env, "system": self.spec.system, "user": self.spec.user,
                "response_format": self.spec.response_format, "score_path": self.spec.score_path,
                "score_regex": self.spec.score_regex, "answer_path": self.spec.answer_path,
                "answer_regex": self.spec.answer_regex, "temperature": self.temperature, "seed": self.seed,
                "max_tokens": self.max_tokens, "n": self.n, "headers": dict(self.config.headers),
                "concurrency": self.concurrency, "timeout": self.timeout, "retries": self.retries,
                "output": self.output, "fingerprint": self.fingerprint}

    # -- hooks the engine calls -----------------------------------------------------------------------------
    def bind_prompts(self, prompts: Mapping[str, Prompt]) -> None:
        """The dataset's prompts: each input's question, rubric, reference answer and scale come from here."""
        self.prompts = dict(prompts)

    def _prompt(self, inp: Input) -> Prompt | None:
        return self.prompts.get(inp.prompt_id) if inp.prompt_id is not None else None

    def _request_parts(self, inp: Input) -> tuple[str, list[dict[str, str]], dict[str, Any]]:
        prompt = self._prompt(inp)
        kind = self.spec.kind(inp, prompt)
        return kind, self.spec.messages(inp, prompt), self.spec.request_fields(kind, prompt)

    def cache_key(self, inp: Input) -> str:
        """Model + rendered messages + sampling settings + structured-output fields (module docstring)."""
        try:
            kind, messages, fields = self._request_parts(inp)
        except ReplyError:  # cannot be asked (no prompt bound): an error row, never cached
            return "unasked:" + inp.key()
        return request_key([self.model, messages, {"temperature": self.temperature, "seed": self.seed,
                                                   "max_tokens": self.max_tokens, "n": self.n}, fields, kind])

    async def _attempt(self, body: Any, url: str, headers: dict[str, str], secrets: Any = ()) -> Any:
        """One request (:meth:`HttpTarget._attempt`); a connection failure to a local LLM server callbluff started
        that has died says so, with its exit status and the last lines of its log, and is not retried."""
        result = await super()._attempt(body, url, headers, secrets)
        if isinstance(result, _Failure) and result.kind == "connection":
            died = await asyncio.to_thread(death_of, url)
            if died is not None:
                return _Failure("died", died, retry=False)
        return result

    def _status_message(self, status: int, text: str) -> str:
        """``HTTP 500: <the server's error message>``, with a hint when the server refuses the structured-output
        dialect (llama-cpp-python 0.3.36 answers ``json_schema`` with a 500 naming ``response_format``)."""
        reason = text
        try:
            data = json.loads(text)
            err = data.get("error") if isinstance(data, Mapping) else None
            reason = str(err.get("message", err) if isinstance(err, Mapping) else (err or text))
        except (json.JSONDecodeError, ValueError):
            pass
        reason = " ".join(reason.split())
        msg = f"HTTP {status}: {snippet(reason, 160)}" if reason else f"HTTP {status}"
        if "response_format" in reason and self.spec.response_format == "json_schema":
            msg += (' (the server may not accept response_format = "json_schema": llama.cpp servers take '
                    '"json_object", vLLM "structured_outputs")')
        return msg

    # -- one input ------------------------------------------------------------------------------------------
    def _body(self, messages: list[dict[str, str]], fields: dict[str, Any], k: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature,
                                "max_tokens": self.max_tokens}
        if self.seed is not None:
            body["seed"] = self.seed + k
        body.update(fields)
        return body

    def _account(self, reply: Mapping[str, Any]) -> None:
        usage = reply.get("usage") if isinstance(reply.get("usage"), Mapping) else {}
        with self._usage_lock:
            u = self.stats.usage
            u["replies"] = u.get("replies", 0) + 1
            for key in ("prompt_tokens", "completion_tokens"):
                if isinstance(usage.get(key), int):
                    u[key] = u.get(key, 0) + usage[key]
            for key, field in (("system_fingerprints", "system_fingerprint"), ("models", "model")):
                value = reply.get(field)
                if isinstance(value, str) and value not in u.setdefault(key, []):
                    u[key].append(value)
            choices = reply.get("choices")
            reason = choices[0].get("finish_reason") if isinstance(choices, list) and choices and \
                isinstance(choices[0], Mapping) else None
            if isinstance(reason, str):
                reasons = u.setdefault("finish_reasons", {})
                reasons[reason] = reasons.get(reason, 0) + 1

    def read_reply(self, reply: Any, kind: str) -> Output:
        """The output of one chat-completion reply (its first choice's message), or an error row."""
        if not isinstance(reply, Mapping):
            return Output(error=f"unreadable reply: expected a chat completion object, got "
                                f"{snippet(json.dumps(reply, ensure_ascii=False))}")
        self._account(reply)
        try:
            message = reply["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            return Output(error="unreadable reply: no choices[0].message in "
                                f"{snippet(json.dumps(reply, ensure_ascii=False))}")
        if not isinstance(message, Mapping):
            return Output(error=f"unreadable reply: choices[0].message is {type(message).__name__}")
        if message.get("refusal"):
            return Output(error=f"the model refused: {snippet(str(message['refusal']))}")
        content = message.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        if not isinstance(content, str):
            return Output(error=f"unparseable reply: no text content in {snippet(json.dumps(message))}")
        try:
            return self.spec.parse(content, kind)
        except ReplyError as exc:
            cut = reply["choices"][0].get("finish_reason") == "length"
            return Output(error=f"{exc}; the reply was cut at max_tokens = {self.max_tokens}" if cut else str(exc))

    async def _single(self, inp: Input, url: str, headers: dict[str, str], secrets: list[str]) -> Output:
        try:
            kind, messages, fields = self._request_parts(inp)
        except ReplyError as exc:
            return Output(error=str(exc))

        async def sample(k: int) -> Output:
            result = await self._request(self._body(messages, fields, k), url, headers, secrets)
            if isinstance(result, _Failure):
                return Output(error=result.msg)
            return self.read_reply(result, kind)

        outs = await asyncio.gather(*(sample(k) for k in range(self.n)))
        return aggregate(outs)
