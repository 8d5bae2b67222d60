"""User-facing errors.

A `KbError` is a mistake of the user or of an input file: the CLI prints its message
(prefixed by `path:line:` when it has one) and exits non-zero, never a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence


class KbError(Exception):
    """An error a user can fix: bad input, bad name, missing file."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line or 1}: "
        return where + self.message


class VersionFailed(KbError):
    """A kernel version raised when called (it does not compile, launch or fit on this
    device).  The CLI prints it as one line; a cycle records it as a failed change rather
    than stopping."""


class Problem(KbError):
    """One located problem found while loading or linting (many may be collected)."""


class ProblemList(KbError):
    """Several problems at once; `str()` lists them one per line."""

    def __init__(self, problems: Sequence[KbError]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in problems))

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)
