"""A llama.cpp build that runs on every x86-64 CPU of the machine kind, checked before anything trusts it.

``llama-cpp-python`` ships as source on PyPI; by default its CMake build compiles llama.cpp with
``-march=native`` (``GGML_NATIVE=ON``), which takes every instruction set the build machine's CPUID reports.
On a virtual machine that reports AMX (or AVX-512) without the operating system enabling it, the library then
dies at the first matrix product with ``Illegal instruction`` (SIGILL), and pip's wheel cache hands the same
broken wheel to every later set-up on that machine. This module builds it so that it cannot:

* **Portable flags** (:data:`FLAG_SETS`): ``GGML_NATIVE=OFF`` and an explicit baseline that every CPU of the
  kind has (AVX, AVX2, FMA, F16C, BMI2: AMD EPYC and the Intel Xeons alike), AVX-512 and AMX switched off.
  If that build fails its smoke test, a second set without any AVX (SSE4.2 only) is tried: slower, but it
  runs anywhere x86-64-v2 does. llama.cpp's own run-time dispatch (``GGML_BACKEND_DL`` +
  ``GGML_CPU_ALL_VARIANTS``) was not taken: it compiles the CPU backend about ten times over (the set-up's
  compile would grow from minutes to far longer on two cores) and its variant for Sapphire Rapids chooses AMX
  by CPUID, the very test that fails on these virtual machines.
* **Our own wheel cache**: the wheel is built with ``pip wheel --no-cache-dir`` into
  ``<callbluff cache>/wheels/llama-cpp-python-<version>-<flag set>-<hash>/`` (:func:`wheel_dir`) and installed
  from there, so pip's cache never holds (or hands back) a build whose flags nobody chose. A cached wheel that
  fails its smoke test is deleted and built once more from source before the next flag set is tried.
* **Text only**: ``LLAVA_BUILD=OFF`` leaves out llama.cpp's multimodal library (``mtmd``), which callbluff never
  loads (``llama_cpp`` imports it only for image chat formats): about a fifth less to compile.
* **A smoke test in a child process** (:func:`smoke_test`) right after the install: load the GGUF model,
  evaluate a prompt and decode a few tokens. A build that dies (a signal) or fails is uninstalled and its
  wheel deleted, then the next flag set is built. If none works, llama-cpp-python is left uninstalled and the
  status file says why (:func:`runtime_problem`), so the local grader, AddSent's language-model ranking and
  their tests say one clear line instead of crashing.
* **The status file** ``<venv>/callbluff-llama.json`` (:func:`status_path`) records the flag set, the smoke
  test's result and the count of AVX-512 (``zmm``) and AMX (``tile*``) instructions that ``objdump -d`` finds
  in ``libggml-cpu`` (:func:`scan_instructions`; 0 and 0 for a portable build).

``python -m callbluff.resources.llama_runtime`` (:mod:`.llama_runtime`, the command) does all of this
(``scripts/setup.sh --full`` runs it); ``... --check`` only re-runs the smoke test.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from callbluff.resources.paths import cache_dir

VERSION = "0.3.36"
PACKAGE = "llama-cpp-python"
SERVER_SPEC = f"{PACKAGE}[server]=={VERSION}"


@dataclasses.dataclass(frozen=True)
class FlagSet:
    """One way to compile llama.cpp: a name (part of the wheel cache's folder) and its CMake arguments."""

    name: str
    cmake_args: str


_OFF = ("-DLLAVA_BUILD=OFF "  # no multimodal library (mtmd): text only, a fifth less to compile
        "-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF "
        "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_AVX_VNNI=OFF")
FLAG_SETS: tuple[FlagSet, ...] = (
    FlagSet("x86-64-avx2", "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
                           f"-DGGML_BMI2=ON {_OFF}"),
    FlagSet("x86-64-sse42", "-DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF "
                            f"-DGGML_BMI2=OFF {_OFF}"),
)
"""Tried in order; the first whose smoke test passes is kept."""

SMOKE_CODE = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_threads=1, n_threads_batch=1, n_ctx=256, verbose=False, seed=0)
out = llm.create_completion("The capital of France is", max_tokens=4, temperature=0.0)
print("decoded", repr(out["choices"][0]["text"]))
"""
"""Load the model, evaluate a prompt (the matrix products that an unsupported instruction breaks) and decode."""


@dataclasses.dataclass(frozen=True)
class SmokeResult:
    ok: bool
    detail: str  # what it decoded, or why it failed ("killed by SIGILL (illegal instruction)", ...)
    seconds: float


def describe_exit(code: int) -> str:
    """``exit status 1`` or ``killed by SIGILL (Illegal instruction)`` for a child's return code."""
    if code < 0:
        try:
            sig = signal.Signals(-code)
            return f"killed by {sig.name} ({signal.strsignal(sig)})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def smoke_test(model: str | os.PathLike[str], *, python: str | None = None, timeout: float = 180.0,
               env: dict[str, str] | None = None) -> SmokeResult:
    """Run :data:`SMOKE_CODE` in a child process (``python``, this interpreter by default), so that a build
    that dies takes only the child with it."""
    t0 = time.monotonic()
    child_env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    try:
        proc = subprocess.run([python or sys.executable, "-c", SMOKE_CODE, str(model)], capture_output=True,
                              text=True, timeout=timeout, env=child_env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return SmokeResult(False, f"no answer within {timeout:g} s", time.monotonic() - t0)
    seconds = time.monotonic() - t0
    if proc.returncode == 0 and "decoded" in proc.stdout:
        return SmokeResult(True, proc.stdout.strip().splitlines()[-1], seconds)
    tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
    return SmokeResult(False, describe_exit(proc.returncode) + (f": {tail}" if tail else ""), seconds)


def status_path(prefix: str | os.PathLike[str] | None = None) -> Path:
    """``<venv>/callbluff-llama.json``: what the last set-up found (this interpreter's ``sys.prefix``)."""
    return Path(prefix or sys.prefix) / "callbluff-llama.json"


def read_status(prefix: str | os.PathLike[str] | None = None) -> dict[str, object] | None:
    path = status_path(prefix)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def runtime_problem(prefix: str | os.PathLike[str] | None = None) -> str | None:
    """Why llama.cpp must not be used in this environment (the set-up found no build that runs here), or
    ``None``: no status file (a build callbluff did not make: used, in a child process where it can die) or a
    build whose smoke test passed."""
    status = read_status(prefix)
    if status is None or status.get("ok"):
        return None
    return (f"llama-cpp-python has no working build on this machine ({status.get('reason', 'unknown')}); "
            "re-run `python -m callbluff.resources.llama_runtime` (or `make setup-full`) after fixing the cause")


def scan_instructions(prefix: str | os.PathLike[str] | None = None) -> dict[str, object]:
    """Counts of AVX-512 (``zmm`` registers) and AMX (``tile*`` instructions) in the installed llama.cpp shared
    libraries (:func:`_ggml_cpu_libs`), by ``objdump -d`` (Debian's binutils); ``{"objdump": "missing"}`` when
    it is not there. A native build on a Sapphire Rapids CPU has thousands of each; ours has none."""
    objdump = shutil.which("objdump")
    libs = _ggml_cpu_libs(prefix)
    if objdump is None:
        return {"objdump": "missing", "libraries": [str(p) for p in libs]}
    zmm = tile = 0
    for lib in libs:
        out = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                             check=False).stdout
        zmm += len(re.findall(r"%zmm\d+", out))
        tile += len(re.findall(r"^\s*[0-9a-f]+:\s+tile\w+", out, flags=re.M))
    return {"libraries": [str(p) for p in libs], "zmm": zmm, "tile": tile}


def _ggml_cpu_libs(prefix: str | os.PathLike[str] | None = None) -> list[Path]:
    """Every shared library the installed ``llama_cpp`` ships (libggml-cpu, libggml-base, libllama, ...), each
    once (a wheel holds the ``.so`` / ``.so.0`` / ``.so.0.x.y`` names as copies of one file)."""
    from callbluff.resources.paths import file_sha256

    root = Path(prefix or sys.prefix)
    found: dict[str, Path] = {}
    for p in sorted(root.glob("lib/python3*/site-packages/llama_cpp/lib/lib*.so*"), key=lambda q: len(q.name)):
        if p.is_file():
            found.setdefault(file_sha256(p), p)
    return sorted(found.values())


# --- building and installing -------------------------------------------------------------------------------

Builder = Callable[[FlagSet, Path], Path]
"""Makes the wheel for a flag set in a folder and returns its path."""
Installer = Callable[[Path | None], None]
"""Installs the given wheel (``None``: uninstalls)."""


def wheel_dir(flags: FlagSet) -> Path:
    """``<callbluff cache>/wheels/llama-cpp-python-<version>-<flag set>-<hash of its CMake arguments>``: a
    change of the arguments is a new folder, never an old wheel."""
    digest = hashlib.sha256(flags.cmake_args.encode()).hexdigest()[:8]
    return cache_dir("wheels", f"{PACKAGE}-{VERSION}-{flags.name}-{digest}")


def pip_builder(python: str, *, jobs: int = 2, log: Callable[[str], object] = print) -> Builder:
    """``pip wheel --no-cache-dir`` of :data:`PACKAGE` with the flag set's ``CMAKE_ARGS`` (pip's wheel cache
    never sees the result)."""

    def build(flags: FlagSet, out: Path) -> Path:
        env = {**os.environ, "CMAKE_ARGS": flags.cmake_args, "FORCE_CMAKE": "1",
               "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(jobs))}
        log(f"building {PACKAGE}=={VERSION} for {flags.name} (CMAKE_ARGS={flags.cmake_args}); several minutes")
        subprocess.run([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-cache-dir", "--no-binary",
                        PACKAGE, "-w", str(out), f"{PACKAGE}=={VERSION}"], check=True, env=env)
        return _find_wheel(out)

    return build


def pip_installer(python: str) -> Installer:
    """Uninstall any ``llama-cpp-python`` (a build of unknown flags), then install the wheel with the
    ``[server]`` extra's dependencies from the package index (the package itself only from our wheel)."""

    def install(wheel: Path | None) -> None:
        subprocess.run([python, "-m", "pip", "uninstall", "-q", "-y", PACKAGE], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if wheel is not None:
            subprocess.run([python, "-m", "pip", "install", "-q", "--no-cache-dir", "--find-links",
                            str(wheel.parent), "--only-binary", PACKAGE, SERVER_SPEC], check=True)

    return install


def _find_wheel(folder: Path) -> Path:
    found = sorted(folder.glob("llama_cpp_python-*.whl"))
    if not found:
        raise FileNotFoundError(f"no llama_cpp_python wheel in {folder}")
    return found[-1]


def prebuild(*, python: str | None = None, flags: FlagSet = FLAG_SETS[0], builder: Builder | None = None,
             wheel_root: Callable[[FlagSet], Path] = wheel_dir, prefix: str | os.PathLike[str] | None = None,
             log: Callable[[str], object] = print) -> bool:
    """Compile the first flag set's wheel into callbluff's wheel cache without installing it, so that set-up can
    compile llama.cpp while it installs and prepares everything else (``setup.sh --full`` runs this in the
    background right after making the virtualenv; it needs nothing but the standard library and pip). The
    later :func:`ensure` finds the wheel, installs it and smoke-tests it as any cached wheel; a wheel that fails
    there is deleted and built again, as always. Nothing is built when the installed build is ours and current
    (:func:`ensure` keeps it) or the wheel is cached already. False when the build failed (then :func:`ensure`
    builds in the foreground and reports the cause)."""
    python = python or sys.executable
    current = installed_build(prefix)
    if current:
        log(f"{PACKAGE} {VERSION} ({current.get('flags')}) is installed already: nothing to compile")
        return True
    folder = wheel_root(flags)
    try:
        wheel = _find_wheel(folder)
        log(f"the {flags.name} wheel {wheel.name} is cached already: nothing to compile")
        return True
    except FileNotFoundError:
        pass
    builder = builder or pip_builder(python, log=log)
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        wheel = builder(flags, folder)
    except (subprocess.CalledProcessError, OSError) as exc:
        log(f"{flags.name}: the background build failed ({exc}); set-up will build in the foreground")
        shutil.rmtree(folder, ignore_errors=True)
        return False
    log(f"built {wheel.name} in {time.monotonic() - t0:.0f} s (installed and smoke-tested later in set-up)")
    return True


def installed_build(prefix: str | os.PathLike[str] | None = None,
                    flag_sets: Sequence[FlagSet] = FLAG_SETS) -> dict[str, object] | None:
    """The status of the installed build when callbluff made it, of this version, with one of ``flag_sets``
    and a passed smoke test (:func:`ensure` then only re-runs the smoke test); else ``None``."""
    previous = read_status(prefix)
    known = {(f.name, f.cmake_args) for f in flag_sets}
    if (previous and previous.get("ok") and previous.get("version") == VERSION
            and (previous.get("flags"), previous.get("cmake_args")) in known):
        return previous
    return None


def ensure(model: str | os.PathLike[str], *, python: str | None = None,
           flag_sets: Sequence[FlagSet] = FLAG_SETS, builder: Builder | None = None,
           installer: Installer | None = None, smoke: Callable[[], SmokeResult] | None = None,
           wheel_root: Callable[[FlagSet], Path] = wheel_dir, prefix: str | os.PathLike[str] | None = None,
           scan: Callable[[], dict[str, object]] | None = None,
           log: Callable[[str], object] = print) -> dict[str, object]:
    """Make sure the environment has a llama.cpp build that passes :func:`smoke_test` here; returns (and
    writes to :func:`status_path`) the status: ``ok``, ``flags``, ``smoke``, ``instructions`` or ``reason``.

    The installed build is kept when the status file says we built it with one of ``flag_sets`` and its smoke
    test still passes. Otherwise each flag set in turn: its cached wheel (or a new build), installed, smoke
    tested; a failure uninstalls it and deletes the wheel. When none passes, nothing stays installed and the
    status says why (one line in the log)."""
    python = python or sys.executable
    builder = builder or pip_builder(python, log=log)
    installer = installer or pip_installer(python)
    smoke = smoke or (lambda: smoke_test(model, python=python))
    scan = scan or (lambda: scan_instructions(prefix))
    previous = installed_build(prefix, flag_sets)
    if previous:
        result = smoke()
        if result.ok:
            log(f"{PACKAGE} {VERSION} ({previous['flags']}) passes its smoke test in a child process "
                f"({result.seconds:.1f} s)")
            return previous
        log(f"the installed {PACKAGE} build fails its smoke test now ({result.detail}); building again")

    failures: list[str] = []
    for flags in flag_sets:
        folder = wheel_root(flags)
        try:
            cached: Path | None = _find_wheel(folder)
        except FileNotFoundError:
            cached = None
        # a wheel cached on this machine first; when it fails, one fresh build of the same flags
        for wheel_or_none in ([cached] if cached else []) + [None]:
            try:
                if wheel_or_none is None:
                    folder.mkdir(parents=True, exist_ok=True)
                    t0 = time.monotonic()
                    wheel = builder(flags, folder)
                    log(f"built {wheel.name} in {time.monotonic() - t0:.0f} s")
                else:
                    wheel = wheel_or_none
                    log(f"reusing the {flags.name} wheel {wheel.name} built earlier on this machine")
                installer(wheel)
            except (subprocess.CalledProcessError, OSError) as exc:
                failures.append(f"{flags.name}: build or install failed ({exc})")
                log(f"{flags.name}: build or install failed ({exc})")
                shutil.rmtree(folder, ignore_errors=True)
                break
            result = smoke()
            if result.ok:
                status: dict[str, object] = {"ok": True, "version": VERSION, "flags": flags.name,
                                             "cmake_args": flags.cmake_args, "smoke": result.detail,
                                             "smoke_seconds": round(result.seconds, 1), "instructions": scan()}
                _write_status(status, prefix)
                log(f"{PACKAGE} {VERSION} ({flags.name}) passes its smoke test in a child process "
                    f"({result.seconds:.1f} s); instructions in libggml-cpu: {status['instructions']}")
                return status
            failures.append(f"{flags.name}{' (cached wheel)' if wheel_or_none else ''}: smoke test {result.detail}")
            log(f"{flags.name}: the build fails its smoke test ({result.detail}); uninstalled, its wheel deleted")
            installer(None)
            shutil.rmtree(folder, ignore_errors=True)

    reason = "; ".join(failures) or "no flag set to try"
    status = {"ok": False, "version": VERSION, "reason": reason}
    _write_status(status, prefix)
    log(f"WARNING: no working {PACKAGE} build on this machine ({reason}): the local LLM grader and AddSent's "
        "language-model ranking are unavailable and their tests are skipped")
    return status


def _write_status(status: dict[str, object], prefix: str | os.PathLike[str] | None) -> None:
    path = status_path(prefix)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(status, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
