"""A time limit on importing a user's module (a kernel spec or one of its versions): one that
waits for a device at import would otherwise hold a command until Ctrl-C.

The limit is `KBOPT_SPEC_IMPORT_TIMEOUT_S` seconds (default `DEFAULT_S`).  It is a
`SIGALRM` interval timer, so it applies in the main thread of a Unix process only (elsewhere
the import runs unbounded, as before).  A `kbopt --timeout` already running keeps its own
deadline: when it is due first the limit is not set, and otherwise it is set again, less the
time the import took, once the import is over.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kbopt.errors import KbError

ENV = "KBOPT_SPEC_IMPORT_TIMEOUT_S"
DEFAULT_S = 120.0  # importing torch and triton takes seconds; minutes mean a wait


class ImportTooSlow(BaseException):
    """The limit ran out (a BaseException, so the module's own `except Exception` cannot
    swallow it)."""


def limit_s() -> float:
    """The configured limit, refused with a clear message when it is not a positive number."""
    text = os.environ.get(ENV)
    if text is None:
        return DEFAULT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 86400:  # NaN fails this too
        raise KbError(f"{ENV}={text!r}: give a number of seconds above 0, at most 86400")
    return value


@contextmanager
def import_deadline(seconds: float) -> Iterator[None]:
    """Raise `ImportTooSlow` in the main thread once `seconds` have passed inside the block."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    if outer_left and outer_left <= seconds:
        yield  # an earlier deadline (kbopt --timeout) fires first: leave it alone
        return

    def expire(signum: int, frame: object) -> None:
        raise ImportTooSlow

    began = time.monotonic()
    outer_handler = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_left:
            left = outer_left - (time.monotonic() - began)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))
