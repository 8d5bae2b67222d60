"""Triton launches compiled for a GPU target without a GPU, and never run.

Inside `compile_only(...)` every `@triton.jit` launch compiles for the target (PTX, then a
cubin with the ptxas Triton ships) through a stand-in for Triton's active driver, and is
recorded (kernel name, shared memory, warps, stages) instead of being launched.  What a
launch would need (shared memory over the limit raises OutOfResources, as loading it on
the GPU would) and what the launcher chose (its warps, stages and block sizes) are then
known on a machine without one: `scripts/triton_fit_check.py` checks that a wrapped
kernel fits before a GPU session, and `kbopt.bench.launch_choices` learns the values a
version leaves to the kernel for the fake backend.

Triton reads TRITON_INTERPRET when a kernel is defined: under the interpreter nothing
compiles, so callers run this in a process without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

# The most shared memory one block may use on sm_90 (an H100's or H200's 228 KiB per SM
# less the 1 KiB the system reserves per block), as Triton's OutOfResources reports it.
SM90_SHARED_LIMIT = 232_448


class CompileOnlyDriver:
    """Triton's active-driver interface, as far as a launch reaches before it runs: the
    target to compile for, a device and a stream.  Nothing is ever launched with it."""

    def __init__(self, arch: int) -> None:
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("cuda", arch, 32)

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def is_active(self) -> bool:
        return True

    def get_benchmarker(self) -> Any:
        # Triton's autotuner asks for this to time its candidate configurations
        raise RuntimeError(
            "an autotuned launch chooses its configuration by timing each one on the GPU, "
            "and nothing is run here"
        )


@contextlib.contextmanager
def compile_only(arch: int, compiled: list[dict[str, Any]], limit: int) -> Iterator[None]:
    """Inside the block every @triton.jit launch compiles for `arch` and is recorded in
    `compiled` (kernel name, shared bytes, warps, stages) instead of running; one that
    needs more than `limit` bytes of shared memory raises OutOfResources, as loading it on
    the GPU would, so a launcher that falls back to a smaller configuration does so here."""
    from triton.runtime import driver
    from triton.runtime.errors import OutOfResources
    from triton.runtime.jit import JITFunction

    original_run = JITFunction.run

    def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        kernel = original_run(self, *args, grid=grid, warmup=True, **kwargs)
        meta = kernel.metadata
        compiled.append(
            {
                "kernel": self.fn.__name__,
                "shared_bytes": int(meta.shared),
                "num_warps": int(meta.num_warps),
                "num_stages": int(meta.num_stages),
            }
        )
        if int(meta.shared) > limit:
            raise OutOfResources(int(meta.shared), limit, "shared memory")
        return _Handle(meta)

    # reset_active() would create the default driver, which fails where no GPU driver is
    # loaded: the one active before (None on such a machine) is put back as it was
    previous = driver._active
    driver.set_active(CompileOnlyDriver(arch))
    JITFunction.run = run
    try:
        yield
    finally:
        JITFunction.run = original_run
        driver._active = previous


class _Handle:
    """What a launcher reads back from a launch (its metadata), without the driver handles
    a real CompiledKernel would load on first use."""

    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata


def compile_call(
    entry: Any, inputs: tuple[Any, ...], compiled: list[dict[str, Any]], arch: int, limit: int
) -> None:
    """One call of a version (`kbopt.kernel.Version`: its `prepare` then the call it
    returns, or its function) with every Triton launch compiled and recorded, not run."""
    import torch

    with compile_only(arch, compiled, limit), torch.no_grad():
        call = entry.prepare(*inputs) if entry.prepare else None
        call() if call is not None else entry.fn(*inputs)
