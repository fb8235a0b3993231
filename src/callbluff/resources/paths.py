"""Where callbluff keeps files it obtains or builds for the user (never inside the repository)."""

from __future__ import annotations

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
