"""``python -m callbluff.resources.llama_runtime [--check | --prebuild]``: fetch the local grader's GGUF model,
then build, install and smoke-test llama-cpp-python for any x86-64 CPU
(:func:`callbluff.resources.llama_build.ensure`); ``--check`` only re-runs the smoke test of the installed build;
``--prebuild`` only compiles the wheel into callbluff's wheel cache (:func:`~callbluff.resources.llama_build.prebuild`:
set-up runs it in the background, before callbluff is installed, with ``PYTHONPATH=src``: this module and those it
imports need only the standard library). Exit 0 when a working build is installed (or the prebuild had nothing to
do or made its wheel), 3 when none runs here (the status file says why), 1 when ``--check`` or ``--prebuild``
fails."""

from __future__ import annotations

import sys

from callbluff.resources.llama_build import ensure, prebuild, smoke_test
from callbluff.resources.local_llm import fetch_gguf


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="only run the smoke test of the installed build")
    mode.add_argument("--prebuild", action="store_true",
                      help="only compile the wheel into callbluff's cache (no model, no install, no smoke test)")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(f"[setup] {msg}", flush=True)

    if args.prebuild:
        return 0 if prebuild(log=log) else 1
    model = fetch_gguf()
    if args.check:
        result = smoke_test(model)
        log(f"smoke test: {'passed' if result.ok else 'FAILED'} ({result.detail}; {result.seconds:.1f} s)")
        return 0 if result.ok else 1
    status = ensure(model, log=log)
    return 0 if status.get("ok") else 3


if __name__ == "__main__":
    sys.exit(main())
