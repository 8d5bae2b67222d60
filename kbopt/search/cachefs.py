"""File operations on the search cache that survive whatever is found there.

The cache is derived data in a folder anyone (or anything) may have damaged: a pointer
file full of random bytes, a directory or a FIFO where a file should be, a file where
a folder should be, a folder that cannot be written.  These helpers never block on a
FIFO or a device, never follow what they cannot trust, and say what they could not do
by returning None or raising `OSError` (the index turns that into a rebuild, or into
an answer from the last good generation when nothing can be written).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path


def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of `path` if it is a regular file of at most `limit` bytes, else None.

    Opened non-blocking and checked with fstat on the open descriptor: a FIFO or a
    device swapped in between a check and the open cannot make the read hang.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def remove_obstacle(path: Path, *, want_dir: bool) -> None:
    """Remove whatever sits at `path` unless it is what we want there (a folder when
    `want_dir`, else a regular file).  Missing is fine; failures raise OSError."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if want_dir and stat.S_ISDIR(st.st_mode):
        return
    if not want_dir and stat.S_ISREG(st.st_mode):
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink()


def ensure_dir(path: Path, owned: Path) -> None:
    """`path` as a folder, replacing a file (or link, FIFO...) that stands in its way
    at `owned` or below it: the folders kbopt owns.  Above `owned` (a user's
    KBOPT_CACHE_DIR, the project root) nothing is removed; a bad folder there raises."""
    chain = [path, *path.parents]
    if owned not in chain:
        raise ValueError(f"{path} is not inside {owned}")
    owned.parent.mkdir(parents=True, exist_ok=True)
    for folder in reversed(chain[: chain.index(owned) + 1]):
        remove_obstacle(folder, want_dir=True)
        folder.mkdir(exist_ok=True)


def replace_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (temporary file + rename), first clearing a
    folder or special file that has taken the file's place."""
    remove_obstacle(path, want_dir=False)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
