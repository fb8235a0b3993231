"""The errors of a run directory and its one lock (``RUN/.lock``): who holds it, and the messages that name the
file and the fix. :mod:`callbluff.engine.store` (the run directory) re-exports them."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any


class RunDirError(ValueError):
    """A run directory that cannot be used as it is: the message names the file and the fix."""


class LocalIOError(RunDirError):
    """The machine's own I/O failed (the run directory, a file callbluff writes or reads as its state): not the
    target's fault, so bad input (exit 2), with the path and the cause. Built by :func:`local_io_error`."""


def local_io_error(e: OSError, path: str | Path) -> LocalIOError:
    """The one translation of a local :class:`OSError` (``--out`` is a file or under one, a full disk, no
    permission) into the message the user gets: the path (the error's own, else ``path``) and the cause."""
    where = e.filename if getattr(e, "filename", None) else path
    cause = e.strerror or str(e) or type(e).__name__
    if e.errno is not None and os.strerror(e.errno) not in cause:
        cause = f"{cause} ({os.strerror(e.errno)})"
    return LocalIOError(f"{where}: {cause}. This is a local I/O error (the run directory or a file callbluff keeps), "
                        "not a target's: fix the path, its permissions or the free space, then re-run (a run "
                        "resumes where it stopped)")


class RunDirLocked(RunDirError):
    """Another process holds the run directory's lock: the message names it (pid, host, start) and the fix."""


class RunLock:
    """The one lock of a run directory: an exclusive :func:`fcntl.flock` on ``RUN/.lock``, whose content names
    the holder (pid, host, start time, command) for the message another process gets.

    The operating system releases a flock when its process dies (kill -9 included), so a lock left by a dead
    process is stale by construction and taken over (:attr:`stale` then holds what it said). The file is never
    removed (removing it would let two processes lock two different files); releasing empties it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.stale: dict[str, Any] | None = None

    def acquire(self) -> None:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise RunDirLocked(
                f"{self.path.parent} is in use by another callbluff process ({_describe_holder(holder)}); two runs "
                "into one directory would mix their examples. Fix: wait for it to finish (or stop it), or use "
                "another --out directory.") from None
        except BaseException:
            os.close(fd)
            raise
        previous = _read_holder(fd)
        self.stale = previous or None
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": " ".join(sys.argv)}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        import fcntl

        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)  # empty: no holder
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 65536, 0)
        holder = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _describe_holder(holder: dict[str, Any]) -> str:
    if not holder:
        return "holder unknown: it is still starting"
    return (f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}: "
            f"{holder.get('command')}")
