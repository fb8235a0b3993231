"""The findings scripts' one harness: what every ``scripts/findings/*.py`` needs besides its own experiment.

- :data:`REPO`, :data:`SHARED` (``$CALLBLUFF_SHARED``, else ``../shared`` beside the clone) and :data:`DATA`;
  importing this module puts ``REPO/src`` first on ``sys.path``, so a script runs the clone's own package (a
  fresh clone's findings are that clone's code, whatever is installed);
- :func:`log`: a timestamped progress line (``[HH:MM:SS] message``; a ``tag`` names the script when several
  write to one log);
- :func:`require_shared`: stop with exit status 2 and one line per missing file or folder, naming it and where
  ``../shared`` is looked for, before any work (the scripts read the shared data and models, never copies);
- :func:`machine` and :func:`pkg`: the machine and package versions a document states beside its figures;
- :func:`write_section`: replace one marked section of a findings document (several scripts write into one
  file, e.g. docs/findings/llm-graders.md), leaving every other byte as it was.

A script imports it as ``from harness import ...`` (run as ``python scripts/findings/NAME.py``, its own folder is
on ``sys.path``; a test that loads a script by path puts the folder there first).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TextIO

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("CALLBLUFF_SHARED", REPO.parent / "shared"))
DATA = SHARED / "data"
MODELS = SHARED / "models"

if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))


def log(msg: str, tag: str | None = None, stream: TextIO | None = None) -> None:
    """``[HH:MM:SS] msg`` (``[tag HH:MM:SS] msg`` with a tag) on ``stream`` (stdout), flushed at once."""
    stamp = time.strftime("%H:%M:%S")
    print(f"[{tag + ' ' if tag else ''}{stamp}] {msg}", file=stream or sys.stdout, flush=True)


def missing_shared(paths: Sequence[Path]) -> list[Path]:
    """The paths of ``paths`` that do not exist."""
    return [p for p in paths if not Path(p).exists()]


def require_shared(paths: Sequence[Path], script: str) -> None:
    """Exit with status 2 when any of ``paths`` (shared data or models) is absent, naming each and the fix."""
    gone = missing_shared(paths)
    if gone:
        lines = [f"{script}: the shared data this document is measured on is not here:"]
        lines += [f"  missing: {p}" for p in gone]
        lines.append(f"  (looked under {SHARED}; set CALLBLUFF_SHARED to the folder that holds data/ and models/)")
        print("\n".join(lines), file=sys.stderr)
        raise SystemExit(2)


def machine() -> dict[str, Any]:
    """CPUs, the load averages when called, Python and the platform: what a document says its figures ran on."""
    load1, load5, load15 = os.getloadavg()
    return {"cpus": os.cpu_count(), "load": [round(load1, 2), round(load5, 2), round(load15, 2)],
            "python": platform.python_version(), "platform": platform.platform()}


def pkg(name: str) -> str:
    """The installed version of distribution ``name``, or ``"not installed"``."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def write_section(path: Path, block: str, marks: tuple[str, str], before: Sequence[str] = ()) -> None:
    """Put ``block`` (which starts with ``marks[0]`` and ends with ``marks[1]``) into the document ``path`` in place
    of the block between the marks; when the document has none yet, before the first heading of ``before`` found in
    it, else at the end (a missing document is created). Nothing else in the file changes."""
    start, end = marks
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if start in text and end in text:
        a, b = text.index(start), text.index(end) + len(end)
        text = text[:a] + block.rstrip("\n") + text[b:]
    else:
        for anchor in before:
            i = text.find("\n" + anchor)
            if i >= 0:
                text = text[:i + 1] + block.rstrip("\n") + "\n\n" + text[i + 1:]
                break
        else:
            text = text.rstrip("\n") + ("\n\n" if text else "") + block.rstrip("\n") + "\n"
    path.write_text(text, encoding="utf-8")
