"""The llama.cpp build that set-up keeps (callbluff.resources.llama_runtime): a build that dies in its smoke test
(a real child process killed by SIGILL, as llama.cpp compiled with AMX did on a CPU whose OS does not enable it) is
uninstalled, its wheel deleted and the next flag set built; when none runs, nothing stays installed and one line
says why, which the local grader's and AddSent's requirement checks repeat instead of crashing.

The builds are stand-ins (a ``llama_cpp`` package written as a wheel-like zip; compiling llama.cpp takes minutes):
what is real is the child process, its death by a signal, the wheel cache on disk and the status file."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from callbluff.resources import llama_build as rt

WORKS = """
class Llama:
    def __init__(self, model_path, **kw):
        open(model_path, "rb").read(4)
    def create_completion(self, prompt, max_tokens, temperature):
        return {"choices": [{"text": " Paris"}]}
"""
DIES = """
import os, signal
class Llama:
    def __init__(self, model_path, **kw):
        os.kill(os.getpid(), signal.SIGILL)
"""


class Machine:
    """A wheel cache, an environment (a folder on the smoke test's PYTHONPATH) and the builds made."""

    def __init__(self, tmp: Path, behaviour: dict[str, str]) -> None:
        self.tmp = tmp
        self.site = tmp / "site"
        self.prefix = tmp / "venv"
        self.prefix.mkdir()
        self.behaviour = behaviour
        self.built: list[str] = []
        self.installed: list[str | None] = []
        self.model = tmp / "model.gguf"
        self.model.write_bytes(b"GGUF" + b"\0" * 16)

    def wheel_root(self, flags: rt.FlagSet) -> Path:
        return self.tmp / "wheels" / flags.name

    def build(self, flags: rt.FlagSet, out: Path) -> Path:
        self.built.append(flags.name)
        wheel = out / f"llama_cpp_python-{rt.VERSION}-{flags.name}.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("llama_cpp/__init__.py", self.behaviour[flags.name])
        return wheel

    def install(self, wheel: Path | None) -> None:
        shutil.rmtree(self.site, ignore_errors=True)
        self.installed.append(None if wheel is None else wheel.name)
        if wheel is not None:
            with zipfile.ZipFile(wheel) as zf:
                zf.extractall(self.site)

    def smoke(self) -> rt.SmokeResult:
        return rt.smoke_test(self.model, env={"PYTHONPATH": str(self.site)}, timeout=60)

    def ensure(self, log: list[str]) -> dict[str, object]:
        return rt.ensure(self.model, builder=self.build, installer=self.install, smoke=self.smoke,
                         wheel_root=self.wheel_root, prefix=self.prefix, scan=lambda: {"zmm": 0, "tile": 0},
                         log=log.append)


def test_a_build_that_dies_is_rebuilt_with_the_next_flag_set(tmp_path: Path) -> None:
    m = Machine(tmp_path, {"x86-64-avx2": DIES, "x86-64-sse42": WORKS})
    log: list[str] = []
    status = m.ensure(log)
    assert status["ok"] is True and status["flags"] == "x86-64-sse42"
    assert m.built == ["x86-64-avx2", "x86-64-sse42"]
    assert not m.wheel_root(rt.FLAG_SETS[0]).exists()  # the broken wheel is never reused
    assert any("killed by SIGILL" in line for line in log)
    assert json.loads(rt.status_path(m.prefix).read_text())["flags"] == "x86-64-sse42"
    assert rt.runtime_problem(m.prefix) is None
    # a second set-up keeps the working build after its smoke test passes again: nothing rebuilt
    log2: list[str] = []
    assert m.ensure(log2)["ok"] is True and m.built == ["x86-64-avx2", "x86-64-sse42"]
    assert "passes its smoke test" in log2[0]


def test_a_cached_wheel_that_now_dies_is_deleted_and_rebuilt(tmp_path: Path) -> None:
    m = Machine(tmp_path, {"x86-64-avx2": WORKS, "x86-64-sse42": WORKS})
    assert m.ensure([])["flags"] == "x86-64-avx2"
    # the same machine's cache, but the wheel's library now dies (as a wheel built elsewhere would)
    wheel = next(m.wheel_root(rt.FLAG_SETS[0]).glob("*.whl"))
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("llama_cpp/__init__.py", DIES)
    m.install(wheel)
    m.behaviour["x86-64-avx2"] = WORKS
    log: list[str] = []
    status = m.ensure(log)
    assert status["ok"] is True
    assert any("fails its smoke test now" in line for line in log)
    assert m.built == ["x86-64-avx2", "x86-64-avx2"]  # deleted, then built again


def test_the_background_prebuild_leaves_a_wheel_that_setup_then_installs_without_compiling(tmp_path: Path) -> None:
    """``setup.sh --full`` compiles in the background (``llama_runtime --prebuild``) while the rest installs;
    the later ``ensure`` installs that wheel and smoke-tests it, compiling nothing more; a prebuild on a machine
    that has a current build or the wheel compiles nothing; a failed prebuild leaves no folder behind."""
    m = Machine(tmp_path, {"x86-64-avx2": WORKS, "x86-64-sse42": WORKS})
    log: list[str] = []
    prebuild = lambda: rt.prebuild(builder=m.build, wheel_root=m.wheel_root, prefix=m.prefix,  # noqa: E731
                                   log=log.append)
    assert prebuild() is True and m.built == ["x86-64-avx2"] and m.installed == []  # compiled, not installed
    assert prebuild() is True and m.built == ["x86-64-avx2"]  # the wheel is cached: nothing compiled
    assert "cached already" in log[-1]
    status = m.ensure(log)
    assert status["ok"] is True and status["flags"] == "x86-64-avx2"
    assert m.built == ["x86-64-avx2"] and m.installed == [f"llama_cpp_python-{rt.VERSION}-x86-64-avx2.whl"]
    shutil.rmtree(m.wheel_root(rt.FLAG_SETS[0]))
    assert prebuild() is True and m.built == ["x86-64-avx2"]  # installed and current: nothing compiled
    assert "installed already" in log[-1]

    (tmp_path / "other").mkdir()
    other = Machine(tmp_path / "other", {})

    def failing(flags: rt.FlagSet, out: Path) -> Path:
        raise OSError("the compiler was killed")

    assert rt.prebuild(builder=failing, wheel_root=other.wheel_root, prefix=other.prefix, log=log.append) is False
    assert not other.wheel_root(rt.FLAG_SETS[0]).exists() and "background build failed" in log[-1]


def test_when_no_build_runs_nothing_stays_installed_and_one_line_says_why(tmp_path: Path) -> None:
    m = Machine(tmp_path, {"x86-64-avx2": DIES, "x86-64-sse42": DIES})
    log: list[str] = []
    status = m.ensure(log)
    assert status["ok"] is False and "killed by SIGILL" in str(status["reason"])
    assert m.installed[-1] is None and not m.site.exists()
    warnings = [line for line in log if line.startswith("WARNING")]
    assert len(warnings) == 1 and "tests are skipped" in warnings[0]
    problem = rt.runtime_problem(m.prefix)
    assert problem and "no working build" in problem and "SIGILL" in problem


def test_the_requirement_checks_repeat_the_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local grader and AddSent's fluency model read the status of this environment."""
    from callbluff.attacks.reading import fluency
    from callbluff.resources import local_llm

    if sys.modules.get("llama_cpp") is None and __import__("importlib").util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is not installed here: the status file is not consulted before the package")
    monkeypatch.setattr(rt, "status_path", lambda prefix=None: tmp_path / "callbluff-llama.json")
    (tmp_path / "callbluff-llama.json").write_text(json.dumps(
        {"ok": False, "version": rt.VERSION, "reason": "x86-64-avx2: smoke test killed by SIGILL"}))
    assert "killed by SIGILL" in (local_llm.missing() or "")
    assert "killed by SIGILL" in (fluency._check() or "")


def test_describe_exit() -> None:
    assert rt.describe_exit(-4).startswith("killed by SIGILL")
    assert rt.describe_exit(2) == "exit status 2"


def test_the_flag_sets_never_ask_for_native_avx512_or_amx() -> None:
    for flags in rt.FLAG_SETS:
        args = flags.cmake_args.split()
        assert "-DGGML_NATIVE=OFF" in args
        for opt in ("AVX512", "AMX_TILE", "AMX_INT8", "AMX_BF16"):
            assert f"-DGGML_{opt}=OFF" in args


def test_the_installed_build_has_no_avx512_or_amx_instruction() -> None:
    """The build set-up made here (when there is one): ``objdump -d`` of libggml-cpu finds no ``zmm`` register
    and no ``tile*`` instruction, so it runs on a CPU without AVX-512 and without AMX."""
    status = rt.read_status()
    if not status or not status.get("ok"):
        pytest.skip(f"no llama.cpp build made by set-up in {sys.prefix} ({rt.status_path()} absent or not ok)")
    if shutil.which("objdump") is None:
        pytest.skip("objdump (Debian's binutils) is not installed")
    found = rt.scan_instructions()
    assert found["libraries"], "libggml-cpu not found in the installed llama_cpp"
    assert found["zmm"] == 0 and found["tile"] == 0, found
