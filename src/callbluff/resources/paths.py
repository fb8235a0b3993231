"""Where callbluff keeps files it obtains or builds for the user (never inside the repository), and a file's
content hash."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """The callbluff cache directory (``$CALLBLUFF_HOME`` or ``$XDG_CACHE_HOME/callbluff``), created on use."""
    root = os.environ.get("CALLBLUFF_HOME")
    if root:
        base = Path(root)
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "callbluff"
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
