"""Running the `kbopt` command in-process on bad input, with a hang detector.

`call(root, *argv)` runs `kbopt.cli.main` in this process (fast enough for hundreds of
cases) under a SIGALRM deadline: a command that blocks (a FIFO read, a lock waited on
forever) fails the test instead of hanging the suite.  The result keeps the exit code
and both streams; `clean_error` checks the shape every refusal must have.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kbopt.cli import main

DEADLINE_S = 10


class Hang(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: int = DEADLINE_S) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err


def call(root: Path | None, *argv: str, stdin: bytes | None = None) -> Result:
    args = (["--root", str(root)] if root is not None else []) + list(argv)
    out, err = io.StringIO(), io.StringIO()
    stdin_patch: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if stdin is not None:
        import sys
        from unittest import mock

        fake = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        stdin_patch = mock.patch.object(sys, "stdin", fake)
    with (
        deadline(),
        stdin_patch,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            rc = main(args)
        except SystemExit as exc:  # argparse refuses a bad option with exit 2
            rc = int(exc.code) if isinstance(exc.code, int) else 2
    return Result(rc, out.getvalue(), err.getvalue())


_ERROR_LINE = re.compile(r"^kbopt: error: (?P<where>[^:\n]+:\d+: )?.+$")


def clean_error(r: Result, fragment: str, *, located: str | None = None) -> None:
    """Exit 2, no traceback, every stderr line `kbopt: error: ...` (or argparse's usage),
    `fragment` said, and the first error at `located` (`path:line`) when given."""
    assert r.rc == 2, (r.rc, r.out, r.err)
    assert "Traceback" not in r.both, r.both
    assert fragment.lower() in r.both.lower(), (fragment, r.both)
    if r.err.startswith("usage:"):
        return
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert lines and all(_ERROR_LINE.match(ln) for ln in lines), r.err
    if located is not None:
        assert lines[0].startswith(f"kbopt: error: {located}"), (located, lines[0])


def strict_json(text: str) -> object:
    """Parse JSON the way strict parsers do: NaN and Infinity are errors."""

    def refuse(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def json_error(r: Result, fragment: str) -> list[str]:
    """`--json` refusals: exit 2, a valid JSON object {"error": [...]} naming `fragment`."""
    assert r.rc == 2, (r.rc, r.out, r.err)
    assert "Traceback" not in r.both, r.both
    data = strict_json(r.out)
    assert isinstance(data, dict) and isinstance(data.get("error"), list), r.out
    errors: list[str] = data["error"]
    assert any(fragment.lower() in e.lower() for e in errors), (fragment, errors)
    return errors
