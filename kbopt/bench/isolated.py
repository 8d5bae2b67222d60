"""Measurements in a child process, started afresh when a launch breaks the GPU context.

A kernel launch that faults (an illegal address, a misaligned access, a trap) leaves the
CUDA context of its process unusable: every later launch there fails with the same error.
A search over knobs measures dozens of configurations in one process, so one faulting
configuration used to fail every trial after it; the gated-delta-rule chunk output of
SGLang lost 40 of its 63 trials that way, each recorded as an illegal memory access it
never made.  Here each measurement runs in one long-lived child process holding the real
backend.  After a measurement fails, the child launches one tiny kernel; if that fails too,
the context is gone: the child reports the error with that fact and exits, and the next
measurement starts a new child.  A child that dies, or does not answer within the time
limit (a kernel that never ends), is killed and replaced the same way, and its trial is
reported as failed.  Nothing else changes: the measurement, its errors (under their own
class names) and the out-of-memory backoff are those of the backend in the child.

The first child's measured ceilings (copy bandwidth, matmul rate) are handed to the
children after it, so that every trial of a run is judged against the same floor.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kbopt.bench.backend import Measurement
from kbopt.bench.ncu import NcuOutcome
from kbopt.bench.trials import TrialConfig
from kbopt.kernel import KernelSpec, load_spec

# A measurement (compile, correctness check, timing) that takes longer than this has hung.
DEFAULT_TIMEOUT_S = float(os.environ.get("KBOPT_MEASURE_TIMEOUT_S", "300"))
# Put first in the error's text: a search keeps only the first line of an error (CUDA's
# run on), cut at 300 characters.
LOST = "[GPU context lost: later measurements run in a new process]"


def real_backend(root: str) -> Any:
    """The backend a child measures with by default (a factory: children are spawned)."""
    from kbopt.bench.real import RealBackend

    return RealBackend(root)


class _RemoteError(RuntimeError):
    """An error raised in the child, re-raised here under the child's class name."""


_ERROR_TYPES: dict[str, type[_RemoteError]] = {}


def remote_error(type_name: str, message: str) -> _RemoteError:
    """An exception named like the child's (`OutOfMemoryError` keeps the backoff working;
    a search records `AcceleratorError: ...` as it would have in one process)."""
    cls = _ERROR_TYPES.get(type_name)
    if cls is None:
        cls = type(type_name, (_RemoteError,), {"__module__": __name__})
        _ERROR_TYPES[type_name] = cls
    return cls(message)


def _serve(conn: Any, make: Callable[[str], Any], root: str, ceilings: dict[str, Any]) -> None:
    """The child: measure what the parent sends until told to stop or the context is lost."""
    backend = make(root)
    if ceilings and hasattr(backend, "_ceilings"):
        backend._ceilings.update(ceilings)
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request[0] == "stop":
            return
        if request[0] == "release":
            release = getattr(backend, "release_memory", None)
            if release is not None:
                release()
            conn.send(("ok", None, {}))
            continue
        _, spec_ref, version, config, params = request
        try:
            spec = load_spec(spec_ref, root)
            m = backend.measure(spec, version, config, params)
        except Exception as exc:
            usable = getattr(backend, "device_usable", lambda: True)()
            conn.send(("error", type(exc).__name__, str(exc), not usable))
            if not usable:
                return
            continue
        conn.send(("ok", m, dict(getattr(backend, "_ceilings", {}))))


class IsolatedBackend:
    """The real backend's `measure`, run in a child process that a faulting kernel cannot
    take the rest of a search down with (see the module doc)."""

    name = "real"

    def __init__(
        self,
        root: Path | str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        make: Callable[[str], Any] = real_backend,
    ):
        self.root = str(Path(root).resolve())
        self.timeout_s = timeout_s
        self._make = make
        self._local: Any = None  # for what needs no GPU: versions, files, counters
        self._child: Any = None
        self._conn: Any = None
        self._ceilings: dict[str, Any] = {}
        self.restarts = 0  # children started after the first: faults, deaths, hangs

    # ------------------------------------------------------------------ the child

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(
            target=_serve, args=(child, self._make, self.root, dict(self._ceilings)), daemon=True
        )
        proc.start()
        child.close()
        if self._child is not None:
            self.restarts += 1
        self._child, self._conn = proc, parent

    def _drop(self) -> None:
        """Kill the child (it is hung, dead, or its context is gone)."""
        if self._child is not None:
            self._child.kill()
            self._child.join(5)
            self._conn.close()
        self._conn = None

    def _ask(self, request: tuple[Any, ...]) -> tuple[Any, ...]:
        if self._conn is None:
            self._start()
        try:
            self._conn.send(request)
            ready = self._conn.poll(self.timeout_s)
            reply = self._conn.recv() if ready else None
        except (EOFError, OSError):
            self._child.join(5)
            code = self._child.exitcode
            self._drop()
            raise remote_error(
                "MeasuringProcessDied",
                f"the measuring process died (exit code {code}); a new one measures what follows",
            ) from None
        if reply is None:
            self._drop()
            raise remote_error(
                "MeasurementTimedOut",
                f"no result within {self.timeout_s:g} s (a launch that never ends?); "
                "the measuring process was killed and a new one measures what follows",
            )
        return reply

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):  # a child already gone needs no word
                self._conn.send(("stop",))
            self._child.join(10)
            if self._child.is_alive():
                self._child.kill()
            self._conn.close()
            self._conn = None

    def __enter__(self) -> IsolatedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ interface

    def _backend_here(self) -> Any:
        if self._local is None:
            self._local = self._make(self.root)
        return self._local

    def check_device(self) -> None:
        check = getattr(self._backend_here(), "check_device", None)
        if check is not None:
            check()

    def versions(self, spec: KernelSpec) -> list[str]:
        return list(self._backend_here().versions(spec))

    def version_files(self, spec: KernelSpec, version: str) -> list[Path]:
        return list(self._backend_here().version_files(spec, version))

    def counters(self, spec: KernelSpec, version: str, config: TrialConfig) -> NcuOutcome:
        # ncu runs the version in a process of its own already.
        return self._backend_here().counters(spec, version, config)

    def release_memory(self) -> None:
        if self._conn is not None:
            self._ask(("release",))

    def measure(
        self,
        spec: KernelSpec,
        version: str,
        config: TrialConfig,
        params: Mapping[str, Any] | None = None,
    ) -> Measurement:
        if not spec.source:
            raise ValueError(f"{spec.name}'s spec has no source to load it from in a child")
        reply = self._ask(("measure", spec.source, version, config, dict(params or {}) or None))
        if reply[0] == "ok":
            self._ceilings = reply[2] or self._ceilings
            m = reply[1]
            assert isinstance(m, Measurement)
            return m
        _, type_name, message, lost = reply
        if lost:
            self._drop()
            message = f"{LOST} {message}"
        raise remote_error(type_name, message)
