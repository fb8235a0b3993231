"""HTTP JSON endpoints as targets (body template, response path, ``${ENV}`` headers,
single/batch mode, concurrency limit, timeout, retries with exponential backoff and jitter, rate limit).

Request body
    ``body_template`` is a JSON value (dict/list, or a JSON string) whose strings may contain placeholders.
    Single mode: ``${text}``, ``${prompt_id}``, ``${context}``, ``${task}``. Batch mode: ``${inputs}`` (a list
    of ``{"text", "task", "prompt_id"?, "context"?}`` dicts) or ``${texts}`` (a list of strings). A string
    that *is* a placeholder is replaced by the value with its JSON type (``null`` for a missing context, a
    list for ``${inputs}``); a placeholder inside a longer string is replaced by its text. Defaults:
    ``{"text": "${text}", "task": "${task}", "prompt_id": "${prompt_id}", "context": "${context}"}`` and
    ``{"inputs": "${inputs}"}``.

Response path
    Dotted keys into the JSON reply: ``"score"``, ``"answer"``, ``"data.0.label"``, ``"results.*.score"``
    (``*`` maps over a list; ``[*]``/``[0]`` and a leading ``$.`` are accepted too). Empty (the default in
    single mode) means the whole reply, read as ``{"score"|"answer"|"candidates"|"error": ...}``. In batch
    mode the path must give a list with one item per input (default ``"results"``).

Secrets
    Header values (and the URL) may reference environment variables as ``${NAME}``. They are expanded for
    each request only; the expanded values are kept out of ``repr``, :meth:`HttpTarget.to_config`, the
    fingerprint, pickles, log records and error messages (any occurrence in an error text, e.g. a server
    echoing a header back, is replaced by ``***``, in its raw, percent-encoded and base64 forms:
    :func:`callbluff.targets.validate.secret_forms`). A reply is scrubbed before any of it is quoted, cut or
    read (an error text quotes at most 160 characters of it; ``model`` and the other fields a chat server
    answers with reach run.json), so a cut can never leave part of a secret behind. A value substituted into
    the URL's path or query is percent-encoded as one component (``?key=${API_KEY}`` sends a key with ``#``,
    ``&`` or spaces whole).

Faults
    5xx, 408, 429 (honouring the server's wait: ``retry-after-ms``, or ``Retry-After`` in seconds or as an
    HTTP date, :func:`retry_after`; the pause is never shorter than that wait, capped at ``retry_after_max``,
    60 s by default, nor shorter than the jittered backoff), timeouts, connection errors (refused, dropped),
    malformed JSON and a missing response path are retried up to ``retries`` times with exponential backoff
    ``min(backoff_max, backoff * 2**attempt)`` times a jitter factor drawn uniformly from [0.5, 1]
    ("equal jitter"; ``seed`` fixes the jitter stream, which only affects timing). Other 4xx answers are not
    retried, nor followed when a redirect (``"HTTP 302 redirect to 'URL' (not followed: ...)"``: the headers,
    ``Authorization`` included, would be sent to wherever it points), nor is a reply larger than ``max_response_bytes`` (default 10 MiB), which is read as a stream and
    counted after decoding (a gzip bomb stops at the cap): ``"reply larger than max_response_bytes = N bytes"``. After the last attempt every input of the request becomes ``Output(error=cause)``, e.g.
    ``"HTTP 500 after 4 attempts"``, ``"timeout after 2.0s x4"``,
    ``"malformed JSON (Expecting value: line 1 column 1 (char 0)): 'oops' after 4 attempts"``.
    Assumption (the issue is silent): a batch request that still fails marks all of its inputs failed; it is
    not split, since a failing server would otherwise be hit ``batch_size`` times more.

Concurrency
    Requests are made with ``httpx.AsyncClient`` on a private event loop running in a background thread (one
    per process; re-created after ``fork`` so targets work in worker processes, and the target pickles
    without its loop, client or secrets). ``concurrency`` bounds requests in flight (an asyncio semaphore),
    ``rate_limit`` spaces request starts at least ``1/rate_limit`` seconds apart (per target per process).
    :meth:`HttpTarget.predict` is synchronous and thread-safe.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import os
import random
import re
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal
from urllib.parse import quote

from pydantic import Field, field_validator, model_validator
from callbluff.targets._common import (  # noqa: F401  (PathNotFound, resolve_path: re-exported)
    CoercionError,
    PathNotFound,
    TargetBase,
    _parse_path,
    resolve_path,
    coerce_output,
    config_hash,
    exception_cause,
)
from callbluff.targets.base import Input, Output, TargetStats, TargetUnavailable, input_slots
from callbluff.targets.config import (
    DEFAULT_MAX_RESPONSE_BYTES,
    RetryBounds,
    TargetConfigError,
    TargetSettings,
    placeholders,
    register_target,
)
from callbluff.targets.config import settings as target_settings
from callbluff.targets.validate import scrub_forms, scrub_text, scrub_value

log = logging.getLogger("callbluff.targets.http")

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))
DEFAULT_SINGLE_BODY: dict[str, Any] = {"text": "${text}", "task": "${task}", "prompt_id": "${prompt_id}",
                                       "context": "${context}"}
DEFAULT_BATCH_BODY: dict[str, Any] = {"inputs": "${inputs}"}
_SNIPPET = 160


def _snippet(text: str, limit: int = _SNIPPET) -> str:
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return repr(text)


def render_template(obj: Any, values: dict[str, Any]) -> Any:
    """Substitute ``${name}`` placeholders in a JSON structure (see the module docstring)."""
    if isinstance(obj, str):
        m = _PLACEHOLDER.fullmatch(obj)
        if m and m.group(1) in values:
            return values[m.group(1)]

        def repl(mm: re.Match[str]) -> str:
            if mm.group(1) not in values:
                return mm.group(0)
            v = values[mm.group(1)]
            return "" if v is None else (v if isinstance(v, str) else json.dumps(v))

        return _PLACEHOLDER.sub(repl, obj)
    if isinstance(obj, dict):
        return {render_template(k, values): render_template(v, values) for k, v in obj.items()}
    if isinstance(obj, list):
        return [render_template(v, values) for v in obj]
    return obj


def retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds a 429/503 reply asks the client to wait, or ``None``: ``retry-after-ms`` (milliseconds, as OpenAI
    and Azure send), else ``Retry-After`` as delay-seconds or an HTTP date (RFC 9110 Sec. 10.2.3; a date in the
    past is 0). An unreadable or negative value is ignored (the backoff applies)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            v = float(ms) / 1000.0
            if v >= 0 and v == v:
                return v
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        v = float(ra)
        return v if v >= 0 and v == v else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        import datetime as _dt

        when = when.replace(tzinfo=_dt.UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _authority_end(url: str) -> int:
    """Where the path (or query, or fragment) of ``url`` starts: the end of ``scheme://host:port``."""
    start = url.find("://")
    start = 0 if start < 0 else start + 3
    ends = [i for i in (url.find(c, start) for c in "/?#") if i >= 0]
    return min(ends) if ends else len(url)


class _Failure:
    """One failed attempt: a kind (for retry decisions and summaries) and a human-readable message."""

    __slots__ = ("kind", "msg", "retry", "wait")

    def __init__(self, kind: str, msg: str, retry: bool = True, wait: float | None = None) -> None:
        self.kind, self.msg, self.retry, self.wait = kind, msg, retry, wait


VERSION_KEYS = ("version", "model_version", "model", "name", "id")
"""Keys of a JSON version reply whose value names the deployed model, first found first."""


def version_text(body: str, width: int = 60) -> str:
    """What a ``version_url`` reply names, for people: the value of its first :data:`VERSION_KEYS` key when it is a
    JSON object with one (``{"version": "v2.1", ...}`` -> ``v2.1``), else the reply with its whitespace collapsed;
    cut to ``width`` characters."""
    text = " ".join(body.split())
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        found = next((data[k] for k in VERSION_KEYS if isinstance(data.get(k), str | int | float)
                      and not isinstance(data.get(k), bool)), None)
        if found is not None:
            text = str(found)
    return text if len(text) <= width else text[:width - 1] + "…"


def describe_failures(failures: Sequence[_Failure]) -> str:
    """The final cause stored for inputs whose request failed on every attempt."""
    n = len(failures)
    last = failures[-1]
    if not last.retry:
        return last.msg if n == 1 else f"{last.msg} (attempt {n})"
    if all(f.msg == last.msg for f in failures):
        return f"{last.msg} x{n}" if last.kind == "timeout" else f"{last.msg} after {n} attempt{'s' * (n > 1)}"
    counts: dict[str, int] = {}
    for f in failures[:-1]:
        counts[f.msg] = counts.get(f.msg, 0) + 1
    earlier = ", ".join(f"{m} x{c}" for m, c in counts.items())
    return f"{last.msg} after {n} attempts (earlier: {earlier})"


class _LoopThread:
    """A private asyncio loop in a daemon thread; re-created in a forked child (pid check)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.pid: int | None = None
        self.lock = threading.Lock()

    def alive(self) -> bool:
        return (self.loop is not None and self.pid == os.getpid() and self.thread is not None
                and self.thread.is_alive())

    def ensure(self) -> tuple[asyncio.AbstractEventLoop, bool]:
        """The loop, and whether it was (re)created just now."""
        if self.pid != os.getpid():  # forked: the parent's lock, loop and thread are not ours
            self.lock = threading.Lock()
            self.loop = self.thread = None
        with self.lock:
            if self.alive():
                assert self.loop is not None
                return self.loop, False
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="callbluff-http-loop", daemon=True)
            thread.start()
            self.loop, self.thread, self.pid = loop, thread, os.getpid()
            return loop, True

    def run(self, coro: Any) -> Any:
        loop, _ = self.ensure()
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def stop(self) -> None:
        with self.lock:
            if not self.alive():
                self.loop = self.thread = None
                return
            assert self.loop is not None and self.thread is not None
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)
            if not self.thread.is_alive():
                self.loop.close()
            self.loop = self.thread = None


SINGLE_PLACEHOLDERS = ("text", "prompt_id", "context", "task")
BATCH_PLACEHOLDERS = ("inputs", "texts")
"""The placeholders a ``body_template`` may use in single mode (besides the task's extra input slots) and in batch mode."""


class HttpConfig(RetryBounds, TargetSettings):
    """An HTTP JSON endpoint (see :mod:`callbluff.targets.http_target` for templates, paths and faults)."""

    ENV_KEYS: ClassVar[tuple[str, ...]] = ("url", "headers", "version_url")
    type: Literal["http"] = "http"
    url: str
    version_url: str | None = Field(None, description="a URL (GET, with the target's headers) whose reply names the "
                                    "deployed model, e.g. /version or /health: read once when the target is built "
                                    "and made part of its identity, so a redeploy behind the same URL is asked "
                                    "again without editing the suite")
    body_template: dict[str, Any] | list[Any] | str | None = None
    response_path: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    method: Literal["POST", "PUT", "GET"] = "POST"
    mode: Literal["single", "batch"] = "single"
    batch_size: int = Field(16, ge=1)
    concurrency: int = Field(4, ge=1)
    timeout: float = Field(10.0, gt=0)
    retries: int = Field(3, ge=0)  # at most MAX_RETRIES (RetryBounds, with a message naming the bound)
    backoff: float = Field(0.5, ge=0)
    backoff_max: float = Field(8.0, ge=0)
    rate_limit: float | None = Field(None, gt=0)
    max_response_bytes: int = Field(DEFAULT_MAX_RESPONSE_BYTES, ge=1)
    retry_after_max: float = Field(60.0, ge=0)  # the longest server-requested wait (Retry-After) honoured
    seed: int | None = None

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.upper() if isinstance(v, str) else v

    @field_validator("url", "version_url")
    @classmethod
    def _scheme(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://", v):
            raise ValueError(f"must start with http:// or https://, got {v!r}")
        return v

    @field_validator("body_template", mode="before")
    @classmethod
    def _json_string(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                return json.loads(v)
            except json.JSONDecodeError as exc:
                raise ValueError(f"body_template is not valid JSON ({exc}); write placeholders as JSON "
                                 'strings, e.g. {"text": "${text}"}') from None
        return v

    @model_validator(mode="after")
    def _template(self) -> HttpConfig:
        if self.body_template is None:
            return self
        allowed = BATCH_PLACEHOLDERS if self.mode == "batch" else (
            *SINGLE_PLACEHOLDERS, *(s for s in input_slots() if s not in SINGLE_PLACEHOLDERS))
        used = placeholders(self.body_template)
        bad = sorted(used - set(allowed))
        if bad:
            raise ValueError(f"body_template uses ${{{bad[0]}}}, which is not allowed in {self.mode} mode "
                             f"(allowed: {', '.join('${' + a + '}' for a in allowed)}; secrets belong in headers)")
        if self.mode == "batch" and not used & set(BATCH_PLACEHOLDERS):
            raise ValueError("in batch mode body_template must contain ${inputs} or ${texts}")
        return self


class HttpTarget(TargetBase):
    """A target behind an HTTP JSON endpoint (see the module docstring for templates, paths and faults)."""

    def __init__(self, url: str | HttpConfig, *, trust_env: bool = True, **settings: Any) -> None:
        """``HttpTarget(HttpConfig(...))``, or ``HttpTarget(url, **settings)`` with the keys of
        :class:`~callbluff.targets.http_target.HttpConfig` (validated there, in one place)."""
        cfg = target_settings(HttpConfig, url if isinstance(url, HttpConfig) else None,
                              {"type": "http", "url": url, **settings}, "HttpTarget")
        body_template = cfg.body_template
        if body_template is None:
            body_template = DEFAULT_BATCH_BODY if cfg.mode == "batch" else DEFAULT_SINGLE_BODY
        self.config = cfg
        self.url = cfg.url
        self.method = cfg.method  # the chat target sets its own (POST, single)
        self.mode = cfg.mode
        self.body_template = body_template
        self.response_path = cfg.response_path or ("results" if cfg.mode == "batch" else "")
        self._path = _parse_path(self.response_path)
        self.header_templates: dict[str, str] = dict(cfg.headers)
        self.batch_size = cfg.batch_size
        self._transport(cfg, trust_env)
        self.name = cfg.name or cfg.url
        self.served: str | None = None  # what version_url names, as text (run.json, notes, the report)
        self.fingerprint = cfg.identity(lambda: "http:" + config_hash(
            [self.method, self.url, body_template, self.response_path, cfg.output]) + self._served())
        self.stats = TargetStats()
        self._init_runtime()

    def _transport(self, cfg: Any, trust_env: bool) -> None:
        """Proxies from the environment (``trust_env``); the other request settings every HTTP-based target shares
        (this one and the chat target) are read from its config (the properties below), never copied."""
        self.trust_env = trust_env

    # the request settings, read from the validated config (one copy of each setting: the config)
    concurrency = property(lambda self: self.config.concurrency)
    timeout = property(lambda self: self.config.timeout)
    retries = property(lambda self: self.config.retries)
    backoff = property(lambda self: self.config.backoff)
    backoff_max = property(lambda self: self.config.backoff_max)
    rate_limit = property(lambda self: self.config.rate_limit)
    max_response_bytes = property(lambda self: self.config.max_response_bytes)
    retry_after_max = property(lambda self: self.config.retry_after_max)
    output = property(lambda self: self.config.output)
    seed = property(lambda self: self.config.seed)
    version_url = property(lambda self: self.config.version_url)

    def _served(self) -> str:
        """``|served=HASH`` of what ``version_url`` answers (its body; empty without one): the deployed model as
        the server names it, read once, when the target is built, as any call is: the reply read as a stream up
        to ``max_response_bytes`` (counted after decoding: a gzip bomb stops there), a 5xx / 408 / 429, a
        timeout or a dropped connection retried ``retries`` times with the same backoff. A server that stays
        down is :class:`~callbluff.targets.base.TargetUnavailable` (a target failure, exit 1); a 4xx, a reply
        over the cap or an unset ``${VAR}`` is :class:`~callbluff.targets.config.TargetConfigError` (the
        settings, exit 2); both name the URL and the cause, secrets scrubbed."""
        if not self.version_url:
            return ""
        import httpx

        secrets: list[str] = []
        try:
            url = self._expand(self.version_url, "version_url", secrets, url=True)
            headers = {k: self._expand(v, f"header {k!r}", secrets) for k, v in self.header_templates.items()}
        except LookupError as exc:
            raise TargetConfigError(str(exc.args[0])) from None
        rng = random.Random(self.seed)
        failures: list[_Failure] = []
        with httpx.Client(timeout=self.timeout, trust_env=self.trust_env) as client:
            for attempt in range(self.retries + 1):
                result = self._version_attempt(client, url, headers, secrets)
                if isinstance(result, bytes):
                    self.served = version_text(self._scrub(result.decode("utf-8", "replace"), secrets))
                    return "|served=" + hashlib.sha256(result).hexdigest()[:16]
                failures.append(result)
                if not result.retry or attempt == self.retries:
                    break
                time.sleep(self._delay(attempt, result, rng))
        cause = self._scrub(describe_failures(failures), secrets)
        where = self._scrub(f"version_url {self.version_url}", secrets)
        if failures[-1].retry:
            raise TargetUnavailable(f"{where}: {cause}; the target's identity is read from it before the run: "
                                    "bring the version endpoint up, or remove version_url and declare "
                                    "`version` instead")
        raise TargetConfigError(f"{where}: {cause}; it must answer what model is deployed (e.g. a /version "
                                "endpoint)")

    def _version_attempt(self, client: Any, url: str, headers: dict[str, str],
                         secrets: Sequence[str]) -> bytes | _Failure:
        """One GET of ``version_url``: the decoded body, or a :class:`_Failure` (see :meth:`_served`)."""
        import httpx

        try:
            with client.stream("GET", url, headers=headers) as resp:
                parts: list[bytes] = []
                size = 0
                for part in resp.iter_bytes():
                    size += len(part)
                    if size > self.max_response_bytes:
                        return _Failure("too-large", f"reply larger than max_response_bytes = "
                                                     f"{self.max_response_bytes:,} bytes (counted after decoding)",
                                        retry=False)
                    parts.append(part)
        except httpx.TimeoutException:
            return _Failure("timeout", f"timeout after {self.timeout:g}s")
        except httpx.TransportError as exc:
            return _Failure("connection", f"connection error ({exception_cause(exc)})")
        body = b"".join(parts)
        if resp.status_code in _RETRY_STATUS:
            return _Failure("http", f"HTTP {resp.status_code}", wait=retry_after(resp.headers))
        if resp.status_code >= 400:
            text = self._scrub(body.decode(resp.encoding or "utf-8", "replace"), secrets)
            return _Failure("http", f"HTTP {resp.status_code} (not retried): {_snippet(text)}", retry=False)
        return body

    # -- runtime state (never pickled) ------------------------------------------------------------------
    def _init_runtime(self) -> None:
        self._runner = _LoopThread()
        weakref.finalize(self, self._runner.stop)  # a forgotten target does not leave its loop thread behind
        self._client: Any = None
        self._sem: asyncio.Semaphore | None = None
        self._rate_lock: asyncio.Lock | None = None
        self._next_slot = 0.0
        self._rng = random.Random(self.seed)
        self._stats_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_runner", "_client", "_sem", "_rate_lock", "_next_slot", "_rng", "_stats_lock")}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_runtime()

    def __repr__(self) -> str:
        return (f"HttpTarget(url={self.url!r}, mode={self.mode!r}, response_path={self.response_path!r}, "
                f"headers={self.header_templates!r}, concurrency={self.concurrency}, timeout={self.timeout}, "
                f"retries={self.retries}, fingerprint={self.fingerprint!r})")

    def to_config(self) -> dict[str, Any]:
        """The adapter's settings for ``run.json``: templates as written (``${NAME}``), never their values."""
        return {"type": "http", "name": self.name, "url": self.url, "method": self.method, "mode": self.mode,
                "body_template": self.body_template, "response_path": self.response_path,
                "headers": dict(self.header_templates), "batch_size": self.batch_size,
                "concurrency": self.concurrency, "timeout": self.timeout, "retries": self.retries,
                "backoff": self.backoff, "backoff_max": self.backoff_max, "rate_limit": self.rate_limit,
                "max_response_bytes": self.max_response_bytes, "retry_after_max": self.retry_after_max,
                "output": self.output, "fingerprint": self.fingerprint}

    # -- secrets ------------------------------------------------------------------------------------------
    def _expand(self, template: str, where: str, secrets: list[str], *, url: bool = False) -> str:
        """``template`` with its ``${NAME}`` references replaced by their values (collected in ``secrets``).

        ``url=True``: a value substituted after the scheme and host (into the path or the query) is
        percent-encoded as one component (``quote(value, safe="")``), so a token with ``#``, ``&``, ``?``,
        ``/``, a space or a quote arrives whole as the value the URL names; one in the scheme or host part is
        substituted as is."""
        head = _authority_end(template) if url else len(template)

        def repl(m: re.Match[str]) -> str:
            val = os.environ.get(m.group(1))
            if val is None:
                raise LookupError(f"{where} uses ${{{m.group(1)}}} but environment variable {m.group(1)} is not "
                                  "set; export it before running")
            if val:
                secrets.append(val)
            return quote(val, safe="") if m.start() >= head else val

        return _PLACEHOLDER.sub(repl, template)

    @staticmethod
    def _scrub(text: str, secrets: Sequence[str]) -> str:
        """``text`` with every form of ``secrets`` (the values expanded for this request), whole or cut,
        replaced by ``***`` (:func:`~callbluff.targets.validate.scrub_text`)."""
        return scrub_text(text, scrub_forms(tuple(dict.fromkeys(secrets)))) if secrets else text

    # -- async machinery ----------------------------------------------------------------------------------
    async def _throttle(self) -> None:
        if not self.rate_limit:
            return
        assert self._rate_lock is not None
        async with self._rate_lock:
            loop = asyncio.get_running_loop()
            now = loop.time()
            wait = self._next_slot - now
            if wait > 0:
                await asyncio.sleep(wait)
            self._next_slot = max(now, self._next_slot) + 1.0 / self.rate_limit

    def _delay(self, attempt: int, failure: _Failure, rng: random.Random | None = None) -> float:
        """The pause before retry ``attempt + 1``: the jittered exponential backoff (jitter from ``rng``, default
        the target's stream), or the server's own wait (``Retry-After``, capped at ``retry_after_max``) when
        that is longer."""
        base = min(self.backoff_max, self.backoff * (2 ** attempt)) * (rng or self._rng).uniform(0.5, 1.0)
        if failure.wait is not None:
            return max(base, min(self.retry_after_max, failure.wait))
        return base

    async def _fetch(self, body: Any, url: str, headers: dict[str, str]) -> tuple[Any, bytes | None]:
        """The response and its decoded body, read as a stream with a running count: ``None`` instead of the
        body once it passes ``max_response_bytes`` (a compressed reply is counted inflated, so a gzip bomb
        stops there)."""
        async with self._client.stream(self.method, url, json=body, headers=headers) as resp:
            parts: list[bytes] = []
            size = 0
            async for part in resp.aiter_bytes():
                size += len(part)
                if size > self.max_response_bytes:
                    return resp, None
                parts.append(part)
            return resp, b"".join(parts)

    async def _attempt(self, body: Any, url: str, headers: dict[str, str], secrets: Sequence[str] = ()) -> Any:
        """One request; returns the value at the response path or a :class:`_Failure`. The reply is scrubbed of
        ``secrets`` before any of it is quoted (and cut) in a failure's message or returned."""
        import httpx

        assert self._sem is not None
        async with self._sem:
            await self._throttle()
            try:
                resp, content = await asyncio.wait_for(self._fetch(body, url, headers), self.timeout)
            except (TimeoutError, httpx.TimeoutException):
                return _Failure("timeout", f"timeout after {self.timeout:g}s")
            except httpx.TransportError as exc:
                return _Failure("connection", f"connection error ({exception_cause(exc)})")
        if content is None:  # a bigger reply will not shrink on a retry
            return _Failure("too-large", f"reply larger than max_response_bytes = {self.max_response_bytes:,} bytes "
                                         "(counted after decoding; raise max_response_bytes if the reply is "
                                         "legitimate)", retry=False)
        forms = scrub_forms(tuple(dict.fromkeys(secrets))) if secrets else ()
        text = scrub_text(content.decode(resp.encoding or "utf-8", "replace"), forms)
        status = resp.status_code
        if status in _RETRY_STATUS:
            return _Failure("http", self._status_message(status, text), wait=retry_after(resp.headers))
        if 300 <= status < 400 and resp.headers.get("location"):
            return _Failure("http", f"HTTP {status} redirect to {resp.headers['location']!r} (not followed: the "
                                    "request's headers, Authorization included, would go to that address too; "
                                    "set url to the final address)", retry=False)
        if not 200 <= status < 300:
            return _Failure("http", f"HTTP {status} (not retried): {_snippet(text)}", retry=False)
        try:
            data = scrub_value(json.loads(content), forms)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _Failure("malformed", f"malformed JSON ({exc}): {_snippet(text)}")
        try:
            return resolve_path(data, self._path)
        except PathNotFound as exc:
            return _Failure("path", f"response path {self.response_path!r} not found ({exc}) in "
                                    f"{_snippet(json.dumps(data, ensure_ascii=False))}")

    def _status_message(self, status: int, text: str) -> str:
        """The cause recorded for a retryable HTTP status (``"HTTP 503"``; a subclass may add the server's reason)."""
        return f"HTTP {status}"

    async def _request(self, body: Any, url: str, headers: dict[str, str], secrets: list[str]) -> Any:
        failures: list[_Failure] = []
        for attempt in range(self.retries + 1):
            with self._stats_lock:
                if attempt == 0:
                    self.stats.calls += 1
                else:
                    self.stats.retries += 1
            result = await self._attempt(body, url, headers, secrets)
            if not isinstance(result, _Failure):
                return result
            failures.append(result)
            if not result.retry or attempt == self.retries:
                break
            delay = self._delay(attempt, result)
            log.debug("%s: %s; retry %d/%d in %.2fs", self.name, self._scrub(result.msg, secrets),
                      attempt + 1, self.retries, delay)
            await asyncio.sleep(delay)
        return _Failure("final", describe_failures(failures), retry=False)

    def _read_one(self, value: Any) -> Output:
        try:
            return coerce_output(value, self.output)
        except CoercionError as exc:
            where = f" at response path {self.response_path!r}" if self.response_path else ""
            return Output(error=f"unreadable response{where}: {exc}")

    async def _single(self, inp: Input, url: str, headers: dict[str, str], secrets: list[str]) -> Output:
        values = {**dict(inp.extra), "text": inp.text, "prompt_id": inp.prompt_id, "context": inp.context,
                  "task": inp.task}
        result = await self._request(render_template(self.body_template, values), url, headers, secrets)
        if isinstance(result, _Failure):
            return Output(error=result.msg)
        if isinstance(result, list) and "*" in self._path:
            if len(result) != 1:
                return Output(error=f"response path {self.response_path!r} gave {len(result)} values for 1 input")
            result = result[0]
        return self._read_one(result)

    async def _batch(self, chunk: Sequence[Input], url: str, headers: dict[str, str],
                     secrets: list[str]) -> list[Output]:
        values = {"inputs": [i.to_dict() for i in chunk], "texts": [i.text for i in chunk]}
        result = await self._request(render_template(self.body_template, values), url, headers, secrets)
        if isinstance(result, _Failure):
            return [Output(error=result.msg)] * len(chunk)
        if not isinstance(result, list) or len(result) != len(chunk):
            got = f"{len(result)} items" if isinstance(result, list) else type(result).__name__
            return [Output(error=f"response path {self.response_path!r} gave {got} for a batch of "
                                 f"{len(chunk)} inputs")] * len(chunk)
        return [self._read_one(v) for v in result]

    async def _predict_async(self, inputs: Sequence[Input], fresh: bool,
                             emit: Callable[[int, Output], None] | None = None) -> list[Output]:
        import httpx

        if fresh or self._client is None:
            # a new loop (first use, after fork or close): new client and primitives bound to it
            self._client = httpx.AsyncClient(
                limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency),
                timeout=httpx.Timeout(self.timeout), trust_env=self.trust_env)
            self._sem = asyncio.Semaphore(self.concurrency)
            self._rate_lock = asyncio.Lock()
            self._next_slot = 0.0
        secrets: list[str] = []

        def done(first: int, outs: Sequence[Output]) -> list[Output]:
            # called with no await between the response and here: the output is handed over (and, by the
            # cache wrapper, committed) before this task yields, i.e. before a waiting request can be sent
            outs = [Output(error=self._scrub(o.error, secrets)) if o.error and secrets else o for o in outs]
            if emit is not None:
                for k, o in enumerate(outs):
                    emit(first + k, o)
            return list(outs)

        try:
            url = self._expand(self.url, "url", secrets, url=True)
            headers = {k: self._expand(v, f"header {k!r}", secrets) for k, v in self.header_templates.items()}
        except LookupError as exc:
            return done(0, [Output(error=str(exc.args[0]))] * len(inputs))

        async def one(k: int, inp: Input) -> list[Output]:
            return done(k, [await self._single(inp, url, headers, secrets)])

        async def many(k: int, chunk: Sequence[Input]) -> list[Output]:
            return done(k, await self._batch(chunk, url, headers, secrets))

        if self.mode == "single":
            parts = await asyncio.gather(*(one(k, i) for k, i in enumerate(inputs)))
        else:
            parts = await asyncio.gather(*(many(k, inputs[k:k + self.batch_size])
                                           for k in range(0, len(inputs), self.batch_size)))
        return [o for p in parts for o in p]

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        return self._predict(inputs, None)

    def predict_stream(self, inputs: Sequence[Input], emit: Callable[[int, Output], None]) -> None:
        """Like :meth:`predict`, but hands each output to ``emit(index, output)`` as soon as its response
        arrives (before another request takes its concurrency slot); returns when all are handed over."""
        self._predict(inputs, emit)

    def _predict(self, inputs: Sequence[Input], emit: Callable[[int, Output], None] | None) -> list[Output]:
        if not inputs:
            return []
        t0 = time.perf_counter()
        try:
            _, fresh = self._runner.ensure()
            if fresh:
                self._client = None
            outs = self._runner.run(self._predict_async(list(inputs), fresh, emit))
        finally:
            with self._stats_lock:
                self.stats.seconds += time.perf_counter() - t0
        with self._stats_lock:
            self.stats.inputs += len(inputs)
            self.stats.errors += sum(1 for o in outs if o.error is not None)
        return outs

    def close(self) -> None:
        """Close the connection pool and stop the background loop (a later ``predict`` starts them again)."""
        if self._runner.alive() and self._client is not None:
            try:
                self._runner.run(self._client.aclose())
            except Exception as exc:  # noqa: BLE001 - closing is best effort
                log.debug("%s: closing the HTTP client failed: %s", self.name, exception_cause(exc))
        self._client = None
        self._runner.stop()


register_target("http", HttpConfig, lambda config, base_dir: HttpTarget(config), spec_key="url")
