"""Where callbluff keeps files it obtains or builds for the user (never inside the repository), and a file's
content hash (:func:`file_sha256`; inside :func:`hashing_once` each file's bytes are read once, e.g. a model file
two targets of one run name)."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

_ONCE: contextvars.ContextVar[dict[tuple[str, int, int, int], str] | None] = contextvars.ContextVar(
    "callbluff_file_hashes", default=None)


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


@contextlib.contextmanager
def hashing_once() -> Iterator[None]:
    """Within this block (one run's target building), :func:`file_sha256` reads each file's bytes once: a second
    request for the same file (same path, inode, size and modification time) gets the digest computed moments
    earlier. The memo ends with the block, so the next run reads the bytes again: size and time alone never
    stand for a file's identity across runs."""
    token = _ONCE.set({} if _ONCE.get() is None else _ONCE.get())
    try:
        yield
    finally:
        _ONCE.reset(token)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks (once per :func:`hashing_once` block)."""
    memo = _ONCE.get()
    if memo is not None:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in memo:
            memo[key] = _sha256(path)
        return memo[key]
    return _sha256(path)


def tree_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 over every file under directory ``path`` (relative names and each file's :func:`file_sha256`, in
    sorted order; symbolic links followed): a model directory's content identity."""
    root = Path(path)
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(f.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        h.update(file_sha256(f).encode())
    return h.hexdigest()


def _sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
