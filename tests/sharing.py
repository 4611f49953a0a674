"""What the test workers of one session share: a folder and a lock.

``make test`` runs pytest with one worker per core (pytest-xdist). The book
is still built once and every chapter still executed once: the first worker
that needs a result computes it under a file lock and leaves it in the
session's shared folder, and the others wait for it and read it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


def shared_folder(tmp_path_factory) -> Path:
    """The session's folder seen by every worker (the base temp folder without xdist)."""
    base = tmp_path_factory.getbasetemp()
    # Each xdist worker gets base/../popen-gwN; their parent belongs to this session alone.
    folder = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    shared = folder / "bersama"
    shared.mkdir(exist_ok=True)
    return shared


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive lock on ``path`` (created if missing) for the block."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
