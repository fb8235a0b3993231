"""A long-running subprocess speaking JSON lines as a target (the ``command`` adapter).

Protocol (one line each way per input, in order, UTF-8):

* we write ``{"id": N, "task": ..., "text": ..., "prompt_id": ..., "context": ...}`` (``id`` counts up for
  the life of the process);
* the process answers ``{"score": 3}``, or ``{"answer": "...", "candidates": [[text, score], ...]}``, or
  ``{"error": "why"}``; it may echo ``"id"`` (an answer carrying another id is ignored as stale); extra keys
  are ignored. Lines that are not JSON objects (stray prints) are skipped and quoted in a later error if the
  answer never comes.

The process is started on first use and kept alive across ``predict`` calls. If it exits while answering,
that input gets ``Output(error="command exited with code C while answering (stderr: ...)")`` and the process
is restarted for the next input. If no answer arrives within ``timeout`` seconds (``startup_timeout`` for
the first answer after a start, to allow for loading a model) the process is killed, the input gets
``"timeout after Ts (command restarted)"`` and the next input starts a fresh process. The same bound covers
writing the input: lines go to stdin from a feeder thread, so a process that does not read (hung at start-up,
or never reading) fails the input with ``"timeout: the command did not read its input within Ts (command
restarted)"`` instead of blocking the run. When five fresh processes in a row exit without answering anything,
with the same error (a crash at start-up, say), or never take their input, the remaining inputs of the call fail
fast (``"not sent: the command exited 5 times in a row ..."``, ``failed`` for the latter) instead of paying a
start-up each; errors are never cached, so a later run retries them.

``env`` is added to the current environment (values are never written to ``to_config``); the default
fingerprint hashes ``argv``, ``cwd`` and the content of the executable and of every argv element that names a
file or a model directory (the scorer script, a model file: every byte, read once per run), so editing the
script or replacing the model asks every input again instead of reading stale predictions from the cache;
``version`` adds a label for what the hash cannot see (a server the command talks to).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import shlex
from pydantic import Field, field_validator
from callbluff.targets._common import (
    CoercionError,
    TargetBase,
    coerce_output,
    config_hash,
    exception_cause,
    file_sha256,
)
from callbluff.resources.paths import tree_sha256
from callbluff.targets.base import Input, Output, TargetStats
from callbluff.targets.config import TargetSettings, register_target, resolve_path
from callbluff.targets.config import settings as target_settings

_MAX_TREE_FILES = 2000
_MAX_TREE_BYTES = 2 * 2**30
_EOF = object()
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FAIL_FAST = 5


class _Sending:
    """One line on its way to a process's stdin: ``done`` is set once written (``error`` if that failed)."""

    __slots__ = ("text", "done", "error")

    def __init__(self, text: str) -> None:
        self.text = text
        self.done = threading.Event()
        self.error: BaseException | None = None


class _Proc:
    """A started process with reader threads draining stdout (to a queue) and stderr (last lines)."""

    def __init__(self, argv: list[str], cwd: str | None, env: dict[str, str] | None) -> None:
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
            text=True, encoding="utf-8", errors="replace", bufsize=1)
        self.lines: queue.Queue[Any] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=20)
        self.answered = 0
        self.next_id = 0
        self.outbox: queue.Queue[_Sending | None] = queue.Queue()
        threading.Thread(target=self._feed, daemon=True, name="callbluff-cmd-in").start()
        threading.Thread(target=self._drain_out, daemon=True, name="callbluff-cmd-out").start()
        self.err_thread = threading.Thread(target=self._drain_err, daemon=True, name="callbluff-cmd-err")
        self.err_thread.start()

    def _feed(self) -> None:
        """Write queued lines to stdin on this thread, so that a process that does not read cannot block the
        caller: it waits for :attr:`_Sending.done` at most its timeout (a kill unblocks a pending write)."""
        assert self.popen.stdin is not None
        while (item := self.outbox.get()) is not None:
            try:
                self.popen.stdin.write(item.text)
                self.popen.stdin.flush()
            except (OSError, ValueError) as exc:
                item.error = exc
            item.done.set()
            if item.error is not None:
                return

    def send(self, text: str) -> _Sending:
        """Queue ``text`` for stdin; wait on the returned :attr:`_Sending.done` (with a timeout)."""
        item = _Sending(text)
        self.outbox.put(item)
        return item

    def _drain_out(self) -> None:
        assert self.popen.stdout is not None
        try:
            for line in self.popen.stdout:
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(_EOF)

    def _drain_err(self) -> None:
        assert self.popen.stderr is not None
        try:
            for line in self.popen.stderr:
                self.stderr.append(line.rstrip("\n"))
        except (OSError, ValueError):
            pass

    def stderr_tail(self, limit: int = 400) -> str:
        text = " | ".join(s for s in self.stderr if s.strip())
        return text if len(text) <= limit else "..." + text[-(limit - 3):]

    def kill(self) -> None:
        self.outbox.put(None)
        try:
            self.popen.kill()
        except OSError:
            pass
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                if stream is not None:
                    stream.close()
            except (OSError, ValueError):  # stdin: the feeder's write may have just failed on the dead pipe
                pass


def _small_tree(path: Path) -> bool:
    """A directory small enough to hash whole (at most ``_MAX_TREE_FILES`` files and ``_MAX_TREE_BYTES``)."""
    files = size = 0
    for f in path.rglob("*"):
        if f.is_file():
            files += 1
            size += f.stat().st_size
            if files > _MAX_TREE_FILES or size > _MAX_TREE_BYTES:
                return False
    return True


class CommandConfig(TargetSettings):
    """A long-running subprocess speaking JSON lines (see :mod:`callbluff.targets.command`). ``env`` values
    may reference ``${VAR}`` from the environment (secrets: never written by callbluff, an echo scrubbed)."""

    ENV_KEYS: ClassVar[tuple[str, ...]] = ("env",)
    type: Literal["command"] = "command"
    argv: list[str]
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(30.0, gt=0)
    startup_timeout: float = Field(60.0, gt=0)

    @field_validator("argv", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = shlex.split(v)
        if isinstance(v, list) and not v:
            raise ValueError("argv is empty; give the command to run, e.g. ['python', 'scorer.py']")
        return v


class CommandTarget(TargetBase):
    """Drive a JSON-lines subprocess (see the module docstring for the protocol and failure handling)."""

    def __init__(self, argv: Sequence[str] | str | CommandConfig, **settings: Any) -> None:
        """``CommandTarget(CommandConfig(...))``, or ``CommandTarget(argv, **settings)`` with the keys of
        :class:`~callbluff.targets.command.CommandConfig` (validated there, in one place)."""
        given = argv if isinstance(argv, CommandConfig) else None
        values = {"type": "command", "argv": argv if isinstance(argv, str) else [str(a) for a in argv or []],
                  **{k: (str(v) if k == "cwd" and v is not None else v) for k, v in settings.items()}} \
            if given is None else {}
        cfg = target_settings(CommandConfig, given, values, "CommandTarget")
        self.config = cfg
        self.name = cfg.name or " ".join(Path(self.argv[0]).name if i == 0 else a for i, a in enumerate(self.argv))
        self.fingerprint = cfg.identity(lambda: "command:" + config_hash([self.argv, self.cwd, self._file_hashes()]))
        self.stats = TargetStats()
        self.restarts = 0
        self._proc: _Proc | None = None
        self._lock = threading.Lock()

    # the settings, read from the validated config (never copied)
    argv = property(lambda self: list(self.config.argv))
    cwd = property(lambda self: self.config.cwd)
    env = property(lambda self: dict(self.config.env))
    timeout = property(lambda self: self.config.timeout)
    startup_timeout = property(lambda self: max(self.config.startup_timeout, self.config.timeout))
    output = property(lambda self: self.config.output)

    def _file_hashes(self) -> dict[str, str]:
        """The content identity of what the command runs: the executable (``argv[0]``, a path or found on
        ``PATH``), every argument that names a file (the script, a model file: all its bytes) and every argument
        that names a directory of at most ``_MAX_TREE_FILES`` files and ``_MAX_TREE_BYTES`` bytes (a model
        directory); a larger directory is left out (declare ``version`` for it). Each file is read once per run
        (:func:`callbluff.resources.paths.hashing_once`)."""
        out: dict[str, str] = {}
        exe = self.argv[0]
        if os.sep not in exe and not (Path(self.cwd or ".") / exe).is_file():
            found = shutil.which(exe)
            if found:
                out["argv[0]"] = file_sha256(found)
        for arg in self.argv:
            p = Path(self.cwd or ".", arg) if not os.path.isabs(arg) else Path(arg)
            try:
                if p.is_file():
                    out[arg] = file_sha256(p)
                elif p.is_dir() and arg not in (".", "..") and _small_tree(p):
                    out[arg] = "dir:" + tree_sha256(p)
            except OSError:
                continue
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_proc", "_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._proc = None
        self._lock = threading.Lock()

    def to_config(self) -> dict[str, Any]:
        return {"type": "command", "name": self.name, "argv": list(self.argv), "cwd": self.cwd,
                "env_keys": sorted(self.env), "timeout": self.timeout, "startup_timeout": self.startup_timeout,
                "output": self.output, "fingerprint": self.fingerprint}

    @property
    def pid(self) -> int | None:
        """The running process id (None when not started)."""
        return None if self._proc is None else self._proc.popen.pid

    def _environment(self) -> dict[str, str] | None:
        """The process environment: ours plus ``env``, whose ``${VAR}`` references are expanded here, at start,
        and never stored (a missing variable is an error naming it)."""
        if not self.env:
            return None
        def expand(m: re.Match[str]) -> str:
            val = os.environ.get(m.group(1))
            if val is None:
                raise ValueError(f"env uses ${{{m.group(1)}}} but environment variable {m.group(1)} is not set; "
                                 "export it before running")
            return val
        return {**os.environ, **{k: _ENV_REF.sub(expand, v) for k, v in self.env.items()}}

    def _start(self) -> _Proc:
        env = self._environment()
        if self._proc is not None and self._proc.popen.pid and self._proc.popen.poll() is None:
            return self._proc
        if self._proc is not None:
            self._proc.kill()
            self.restarts += 1
        self._proc = _Proc(self.argv, self.cwd, env)
        return self._proc

    def _ask(self, inp: Input) -> tuple[Output, bool]:
        """One round trip. Returns (output, process_failed)."""
        try:
            proc = self._start()
        except (OSError, ValueError) as exc:
            return Output(error=f"cannot start command {self.argv!r}: {exception_cause(exc)}"), True
        msg_id = proc.next_id
        proc.next_id += 1
        fresh = proc.answered == 0
        payload = {"id": msg_id, **inp.to_dict()}
        payload.setdefault("prompt_id", None)
        payload.setdefault("context", None)
        self.stats.calls += 1
        limit = self.startup_timeout if fresh else self.timeout
        deadline = time.monotonic() + limit  # one bound for writing the input and reading the answer
        line = json.dumps(payload, ensure_ascii=False) + "\n"
        sending = proc.send(line)
        if not sending.done.wait(limit):
            proc.kill()
            self._proc = None
            self.restarts += 1
            # a fresh process that never takes its input counts as failed to start (the fail-fast streak)
            return Output(error=f"timeout: the command did not read its input within {limit:g}s "
                                "(command restarted)"), fresh
        if sending.error is not None:
            return self._died(proc), True
        noise: list[str] = []
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = proc.lines.get(timeout=max(remaining, 0.0)) if remaining > 0 else proc.lines.get_nowait()
            except queue.Empty:
                proc.kill()
                self._proc = None
                self.restarts += 1
                extra = f"; ignored output: {noise[-1][:120]!r}" if noise else ""
                return Output(error=f"timeout after {limit:g}s (command restarted){extra}"), False
            if line is _EOF:
                return self._died(proc), True
            text = line.strip()
            if not text:
                continue
            try:
                data = json.loads(text)
            except json.JSONDecodeError:
                noise.append(text)
                continue
            if not isinstance(data, dict):
                noise.append(text)
                continue
            if "id" in data and data["id"] != msg_id:
                continue  # a stale answer
            proc.answered += 1
            try:
                return coerce_output(data, self.output), False
            except CoercionError as exc:
                return Output(error=f"unreadable answer from command: {exc}"), False

    def _died(self, proc: _Proc) -> Output:
        try:
            code = proc.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        proc.err_thread.join(timeout=2)  # the process is gone: stderr reaches EOF once its last lines are read
        tail = proc.stderr_tail()
        proc.kill()
        self._proc = None
        self.restarts += 1
        err = f" (stderr: {tail})" if tail else ""
        return Output(error=f"command exited with code {code} while answering{err}")

    @staticmethod
    def _streak_verb(streak: Sequence[str]) -> str:
        return "failed" if streak[-1].startswith("timeout: the command did not read") else "exited"

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        return self._predict(inputs, None)

    def predict_stream(self, inputs: Sequence[Input], emit: Callable[[int, Output], None]) -> None:
        """Like :meth:`predict`, but hands each answer to ``emit(index, output)`` before the next input is
        written to the process (so a kill repeats at most the one round trip in flight)."""
        self._predict(inputs, emit)

    def _predict(self, inputs: Sequence[Input], emit: Callable[[int, Output], None] | None) -> list[Output]:
        outs: list[Output] = []
        t0 = time.perf_counter()
        with self._lock:
            try:
                streak: list[str] = []  # errors of consecutive fresh processes that died without answering
                for k, inp in enumerate(inputs):
                    if len(streak) >= _FAIL_FAST and len(set(streak[-_FAIL_FAST:])) == 1:
                        out = Output(error=f"not sent: the command {self._streak_verb(streak)} {len(streak)} "
                                           f"times in a row without answering (last: {streak[-1]})")
                    else:
                        was_fresh = self._proc is None or self._proc.answered == 0
                        out, failed = self._ask(inp)
                        if failed and was_fresh:
                            streak.append(out.error or "")
                        else:
                            streak.clear()
                    outs.append(out)
                    if emit is not None:
                        emit(k, out)
            finally:
                self.stats.seconds += time.perf_counter() - t0
        self.stats.inputs += len(inputs)
        self.stats.errors += sum(1 for o in outs if o.error is not None)
        return outs

    def close(self) -> None:
        """End the process: close its stdin (a well-behaved process exits), kill it after 2 s otherwise."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            assert proc.popen.stdin is not None
            proc.popen.stdin.close()
            proc.popen.wait(timeout=2)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        proc.kill()

    def __del__(self) -> None:
        try:
            if getattr(self, "_proc", None) is not None:
                self._proc.kill()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001, S110 - at interpreter shutdown nothing can be reported
            pass


def _build(config: CommandConfig, base_dir: Path | None) -> CommandTarget:
    """``cwd`` resolved against ``base_dir``, which it defaults to."""
    cwd = resolve_path(config.cwd, base_dir) if config.cwd is not None else (
        str(base_dir) if base_dir is not None else None)
    return CommandTarget(config.model_copy(update={"cwd": cwd}))


register_target("command", CommandConfig, _build, spec_key="argv")
