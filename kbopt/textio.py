"""Reading a person's or an agent's text file without surprises.

Every file kbopt parses (entries, profiles, analyses, contracts, remote contexts) comes
through `read_text`: it opens regular files only (a FIFO would block the reader
forever, a device or a folder is not a document), never reads more than a size limit,
decodes strict UTF-8 (a BOM is dropped), and refuses control characters such as NUL
that no Markdown or JSON document needs.  Every refusal is a `ProblemList` with one
`path:line: message`, so the command line prints it and exits 2.

`control_char_problem` is the same check for text that arrives as a string (an agent
tool's argument).
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

from kbopt.errors import Problem, ProblemList

# Far above any real entry, profile or contract, far below what would hurt memory.
MAX_TEXT_BYTES = 8 * 1024 * 1024
# Unicode's control characters (C0, DEL, C1) except tab, line feed and carriage return.
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _fail(shown: str, message: str, line: int = 1) -> ProblemList:
    return ProblemList([Problem(message, shown, line)])


def file_kind(mode: int) -> str:
    """A file type in words, for messages ("a FIFO", "a folder"...)."""
    for test, words in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return words
    return "not a regular file"


def read_bytes(path: Path, *, shown: str | None = None, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file (symbolic links followed), at most `limit` of them."""
    where = shown if shown is not None else str(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; we refuse it just below.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _fail(where, "cannot read: no such file") from None
    except IsADirectoryError:
        raise _fail(where, "is a folder, not a file") from None
    except OSError as exc:
        try:  # a socket, say, cannot be opened at all: name what it is
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise _fail(where, f"is {file_kind(mode)}, not a regular file; refused") from None
        raise _fail(where, f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _fail(where, f"is {file_kind(info.st_mode)}, not a regular file; refused")
        if info.st_size > limit:
            raise _fail(where, f"is {info.st_size} bytes, more than the {limit}-byte limit")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # the file grew while we read it
                raise _fail(where, f"is more than the {limit}-byte limit")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise _fail(where, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def decode(data: bytes, shown: str) -> str:
    """Strict UTF-8 (BOM dropped) without control characters, or one located problem."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start : exc.start + 1].hex()
        raise _fail(shown, f"not UTF-8 text (byte 0x{bad}); save the file as UTF-8", line) from None
    problem = control_char_problem(text, shown)
    if problem is not None:
        raise ProblemList([problem])
    return text


def control_char_problem(text: str, shown: str) -> Problem | None:
    """The first control character (NUL, ESC...) in `text` as a located problem, or None."""
    m = _CONTROL_RE.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    return Problem(f"control character U+{ord(m.group()):04X} in the text; remove it", shown, line)


def read_text(path: Path, *, shown: str | None = None, limit: int = MAX_TEXT_BYTES) -> str:
    """A regular file's text: strict UTF-8, no control characters, at most `limit` bytes."""
    where = shown if shown is not None else str(path)
    return decode(read_bytes(path, shown=where, limit=limit), where)


def read_source(source: str, *, limit: int = MAX_TEXT_BYTES) -> tuple[str, str]:
    """(text, shown name) of a file argument, `-` meaning standard input."""
    if source == "-":
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise _fail("<stdin>", f"more than the {limit}-byte limit")
        return decode(data, "<stdin>"), "<stdin>"
    return read_text(Path(source), shown=source, limit=limit), source
