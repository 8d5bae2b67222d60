"""Compile a Triton version's knob configurations ahead of their measurements, in parallel.

A search over knobs (`kbopt ablate`) measures one configuration at a time, and a Triton
kernel compiles on its first call at each new configuration.  For most kernels that is a
second or two; for some (a GEMM that unrolls its whole depth, a fused kernel with many
constexpr branches) it is 10 to 40 s, so a wall-time budget buys two or three trials and
the verdict rests on nothing.  Compilation runs on the CPU (the backend's LLVM passes and
ptxas, one thread each) and the GPU machine has many cores, so the configurations a search
is about to measure are compiled first, several at once, in worker processes: each worker
calls the version once at the trial's dimensions, which leaves the compiled kernel in
Triton's on-disk cache, where the measuring process finds it on its own first call.

Nothing is measured here and nothing a worker finds is trusted: a configuration that fails
to compile or run in a worker is measured (and recorded as failed) by the search as usual.
Workers use the GPU only for their single call, and the search does not measure while a
batch runs (`warm` blocks, and stops the workers it does not wait for), so timings are not
disturbed.

Only Triton versions gain (CuTe DSL and torch versions keep no shared on-disk cache), and
only with the real backend.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kbopt.bench.harness import tensor_bytes

# Workers beyond this compile little faster (the measuring process and the GPU are shared)
# and each holds a CUDA context of a few hundred MB.
MAX_WORKERS = 8


def default_workers() -> int:
    """One worker per core, leaving one for the measuring process, at most MAX_WORKERS."""
    return max(0, min(MAX_WORKERS, (os.cpu_count() or 1) - 1))


# A worker compiles many configurations of one version at one shape: it keeps the inputs
# it made (making some takes seconds of host time: an int4 weight packed on the CPU), up to
# this size per input maker, so that eight workers cannot fill the GPU with copies.  A
# kernel that writes into its inputs leaves them changed; compiling does not care.
KEEP_INPUTS_BYTES = 2 << 30
_worker_inputs: dict[tuple[Any, ...], Any] = {}


def kept_inputs(key: tuple[Any, ...], make: Any) -> Any:
    """The inputs this worker made for `key` before, or `make()`'s, kept when small enough."""
    inputs = _worker_inputs.get(key)
    if inputs is None:
        inputs = make()
        if tensor_bytes(inputs) <= KEEP_INPUTS_BYTES:
            _worker_inputs[key] = inputs
    return inputs


def compile_once(
    root: str,
    locator: str,
    version: str,
    dims: Mapping[str, int],
    params: Mapping[str, Any],
    device: str = "cuda",
) -> tuple[bool, str, float]:
    """One call of `version` with knob values `params` at `dims`: (ran, why not, seconds).

    Runs in a worker process.  Both input makers the measurement uses (the check's and the
    timing's) are called through, since each may specialise the kernel differently."""
    began = time.monotonic()
    if sys.path[:1] != [root]:  # the project's `kernels` package before any other on the path
        sys.path.insert(0, root)
    try:
        import torch

        from kbopt.bench.harness import call, torch_dtype
        from kbopt.bench.real import RealBackend, _params_applied
        from kbopt.kernel import load_spec

        spec = load_spec(locator, root)
        dtype = torch_dtype(spec.dtype)
        makers = [m for m in (spec.make_check_inputs, spec.make_inputs) if m is not None]
        with _params_applied(spec, version, params or None):
            entry = RealBackend(root)._version(spec, version)
            for which, make in enumerate(dict.fromkeys(makers)):
                key = (root, locator, tuple(sorted(dims.items())), spec.dtype, device, which)
                call(
                    entry,
                    kept_inputs(key, lambda m=make: m(dict(dims), dtype=dtype, device=device)),
                )
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        return True, "", time.monotonic() - began
    except Exception as exc:  # the search measures it anyway and records why it failed
        return False, f"{type(exc).__name__}: {exc}".splitlines()[0][:300], time.monotonic() - began


def worker_threads(workers: int) -> int:
    """CPU threads each worker's torch may use: the cores shared out among the workers.
    Making a trial's inputs can be CPU work (a reference that builds a triangular inverse
    per chunk, or sorts every row, on the host), and eight workers whose torch each spawns
    a thread per core would run eight times as many threads as there are cores."""
    return max(1, (os.cpu_count() or 1) // max(1, workers))


def _init_worker(threads: int) -> None:
    """A worker's initializer: lead a new process group (where the platform has them) and
    hold torch to `threads` CPU threads (every worker imports torch for its calls anyway)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)  # for libraries that read it at import
    import torch

    torch.set_num_threads(threads)
    _own_process_group()


def _own_process_group() -> None:
    """Lead a new process group (where the platform has them)."""
    if hasattr(os, "setpgrp"):
        os.setpgrp()


def _kill_group(pgid: int) -> None:
    """Kill what is left of a stopped worker's process group (its compilers)."""
    if not hasattr(os, "killpg"):
        return
    # ProcessLookupError: nothing is left of the group
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@dataclass
class WarmStats:
    """What warming did in one search, for its results file."""

    workers: int
    batches: int = 0
    configs: int = 0
    failed: int = 0
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)  # why a batch was cut short

    def as_dict(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "batches": self.batches,
            "configs": self.configs,
            "failed_in_worker": self.failed,
            "seconds": round(self.seconds, 1),
            "cut_short": self.skipped,
        }


def warmer_for(
    backend: str,
    spec: Any,
    version: str,
    root: str,
    dims: Mapping[str, int],
    workers: int | None = None,
) -> CompileWarmer | None:
    """The warmer a search of `version` uses, or None: with the fake backend, or no worker.
    `workers` None: one per core but one (at most MAX_WORKERS) for a Triton version, none
    for others (only Triton keeps compiled kernels in an on-disk cache)."""
    if backend != "real":
        return None
    if workers is None:
        workers = default_workers() if spec.version_family(version) == "triton" else 0
    return CompileWarmer(root, spec.locator, version, dims, workers) if workers > 0 else None


class CompileWarmer:
    """A pool of worker processes that compile knob configurations of one version at one
    trial's dimensions; each configuration at most once."""

    def __init__(
        self,
        root: str,
        locator: str,
        version: str,
        dims: Mapping[str, int],
        workers: int,
        *,
        device: str = "cuda",
    ):
        self.root, self.locator, self.version = root, locator, version
        self.dims, self.device = dict(dims), device
        self.stats = WarmStats(workers)
        self.done: set[frozenset] = set()
        self.longest_s = 0.0  # the longest one configuration took in a worker so far
        self._pool: Any = None

    def _workers(self) -> Any:
        if self._pool is None:
            # spawn: a forked child would inherit the parent's CUDA context, which CUDA forbids.
            # Each worker leads a process group of its own, so that stopping it also stops
            # the compilers it started (see close).
            self._pool = multiprocessing.get_context("spawn").Pool(
                self.stats.workers,
                initializer=_init_worker,
                initargs=(worker_threads(self.stats.workers),),
            )
        return self._pool

    def warm(
        self,
        configs: Sequence[Mapping[str, Any]],
        deadline: float | None = None,
        sure: Sequence[bool] | None = None,
    ) -> int:
        """Compile the configurations not compiled yet, in parallel; return how many ran.

        Those marked `sure` (all by default) are going to be measured: they are waited for
        until `deadline` (time.monotonic()).  The others are guesses at what comes after:
        they get as long again as the sure ones took (at least the longest compile seen so
        far), then the workers still compiling are stopped (a configuration that compiles for
        minutes must not hold the search, nor launch on the GPU while it measures)."""
        marks = list(sure) if sure is not None else [True] * len(configs)
        todo: list[tuple[dict[str, Any], bool]] = []
        for values, is_sure in zip(configs, marks, strict=True):
            key = frozenset(values.items())
            if key not in self.done:
                self.done.add(key)
                todo.append((dict(values), is_sure))
        if not todo or self.stats.workers <= 0:
            return 0
        began = time.monotonic()
        pool = self._workers()
        jobs = [
            (
                is_sure,
                pool.apply_async(
                    compile_once, (self.root, self.locator, self.version, self.dims, v, self.device)
                ),
            )
            for v, is_sure in todo
        ]

        def wait_until(job: Any, until: float | None) -> None:
            job.wait(None if until is None else max(0.0, until - time.monotonic()))

        for is_sure, job in jobs:
            if is_sure:
                wait_until(job, deadline)
        allowance = max(1.0, time.monotonic() - began, self.longest_s)
        guess_until = time.monotonic() + allowance
        if deadline is not None:
            guess_until = min(guess_until, deadline)
        for is_sure, job in jobs:
            if not is_sure:
                wait_until(job, guess_until)
        finished = [job for _, job in jobs if job.ready()]
        for job in finished:
            try:
                ran, _, seconds = job.get()
            except Exception:  # a worker that died (out of memory, a crash in the driver)
                ran, seconds = False, 0.0
            self.stats.failed += 0 if ran else 1
            if ran:
                self.longest_s = max(self.longest_s, float(seconds))
        if len(finished) < len(jobs):
            out_of_time = deadline is not None and time.monotonic() >= deadline
            why = "the wall-time budget ran out" if out_of_time else "slower than the round allowed"
            self.stats.skipped.append(
                f"{len(jobs) - len(finished)} of {len(jobs)} stopped before they compiled ({why})"
            )
            self.close()  # stop them now; the next round starts fresh workers
        self.stats.batches += 1
        self.stats.configs += len(finished)
        self.stats.seconds += time.monotonic() - began
        return len(finished)

    def close(self) -> None:
        """Stop the workers at once, whatever they are compiling (never wait for them), and
        the processes they started.

        Triton runs ptxas as a child process, and for a large unrolled kernel it runs for
        minutes.  Stopping only the worker left it running: on the H200 a top-k search's
        orphaned assemblers kept the CPU busy and kept the command's output pipe open for
        five minutes after its 140 s budget, so the caller's `| tail` waited for them."""
        if self._pool is None:
            return
        groups = [p.pid for p in getattr(self._pool, "_pool", []) if p.pid]
        self._pool.terminate()
        self._pool.join()
        self._pool = None
        for pid in groups:
            _kill_group(pid)

    def __enter__(self) -> CompileWarmer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
