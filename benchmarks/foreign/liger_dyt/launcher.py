"""Liger-Kernel's DyT forward (liger_kernel.ops.dyt, 0.8.5), launched by our copy of Liger's
`liger_dyt_fwd` so that the autotuner's choices are knobs.

A 2-D grid: cdiv(hidden, BLOCK_N) column blocks by one row each; a program loads its block
of x, gamma and beta and the scalar alpha, and writes tanh(alpha x) * gamma + beta (fp32
inside, libdevice tanh).  Liger autotunes the launch (`@triton.autotune`, key: the row
width) over BLOCK_N in {1024, 2048, 4096} x num_stages {1, 2} x num_warps {4, 8, 16}: 18
configurations timed on the first call of each width.  Knobs `block_n`, `num_stages`,
`num_warps`: None leaves that choice to the autotuner, a value fixes it; with all three
None the call is Liger's own autotuned kernel, with all three set it is one direct launch
(no tuning), otherwise an autotuner over Liger's configurations that agree with the fixed
values.  The tuning runs in `prepare` (once per width, as in Liger's first call), outside
the timed call; the launch records the configuration the autotuner chose under the knobs'
names, and how many it tried (`autotune_configs`).  The output is allocated in `prepare`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common, _libdevice_cpu
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
# Liger's autotuning space for _dyt_fwd_kernel, in its order (BLOCK_N, num_stages, num_warps)
LIGER_BLOCK_N = (1024, 2048, 4096)
LIGER_STAGES = (1, 2)
LIGER_WARPS = (4, 8, 16)
_TUNERS: dict[tuple[tuple[int, int, int], ...], Any] = {}


@dataclass(frozen=True)
class LigerDytConfig:
    block_n: int | None = None  # None: the autotuner picks from liger's 1024/2048/4096
    num_stages: int | None = None  # None: the autotuner picks from liger's 1/2
    num_warps: int | None = None  # None: the autotuner picks from liger's 4/8/16


def candidates(cfg: LigerDytConfig) -> list[tuple[int, int, int]]:
    """(BLOCK_N, num_stages, num_warps) the launch chooses among: Liger's space with the
    fixed knobs substituted."""
    return list(
        itertools.product(
            (cfg.block_n,) if cfg.block_n else LIGER_BLOCK_N,
            (cfg.num_stages,) if cfg.num_stages else LIGER_STAGES,
            (cfg.num_warps,) if cfg.num_warps else LIGER_WARPS,
        )
    )


def _tuner(liger: Any, configs: list[tuple[int, int, int]]) -> Any:
    """Liger's own autotuned kernel for its whole space, else an autotuner over the subset."""
    key = tuple(configs)
    if key == tuple(itertools.product(LIGER_BLOCK_N, LIGER_STAGES, LIGER_WARPS)):
        return liger._dyt_fwd_kernel
    if key not in _TUNERS:
        _TUNERS[key] = triton.autotune(
            configs=[
                triton.Config({"BLOCK_N": b}, num_stages=s, num_warps=w) for b, s, w in configs
            ],
            key=["N"],
        )(liger._dyt_fwd_kernel.fn)
    return _TUNERS[key]


def _cpu_bench(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> Any:
    start = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


@contextlib.contextmanager
def _interpreter_timer(tuner: Any) -> Iterator[None]:
    """Triton 3.6's CPU interpreter has no benchmarker (an autotuner raises "0 active
    drivers"); for CPU tests only, the autotuner times each configuration with one
    wall-clock call, so that every configuration still runs."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        yield
        return
    tuner.do_bench = _cpu_bench
    try:
        yield
    finally:
        del tuner.do_bench


def prepare(
    cfg: LigerDytConfig,
    x: torch.Tensor,
    alpha: torch.Tensor,
    gamma: torch.Tensor,
    beta: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import dyt as liger

    if not x.is_contiguous():
        raise ValueError("x must be contiguous (Liger's kernel indexes rows by the width)")
    shape = x.shape
    x2 = x.view(-1, shape[-1])
    n_rows, n_cols = x2.shape
    y = torch.empty_like(x2)
    configs = candidates(cfg)
    args = (x2, y, alpha, gamma, beta, True, n_cols)  # HAVE_BETA, N

    def grid(meta: dict[str, Any]) -> tuple[int, int]:
        return (triton.cdiv(n_cols, meta["BLOCK_N"]), n_rows)

    if len(configs) == 1:
        block_n, stages, warps = configs[0]
        kernel = liger._dyt_fwd_kernel.fn

        def call() -> Any:
            return kernel[grid](*args, BLOCK_N=block_n, num_stages=stages, num_warps=warps)

        def chosen() -> tuple[int, int, int]:
            return configs[0]

    else:
        tuner = _tuner(liger, configs)

        def call() -> Any:
            with _interpreter_timer(tuner):
                return tuner[grid](*args)

        def chosen() -> tuple[int, int, int]:
            best = tuner.best_config
            return int(best.kwargs["BLOCK_N"]), int(best.num_stages), int(best.num_warps)

    def launch() -> torch.Tensor:
        with _common.interpreter_libdevice(liger, tanh=_libdevice_cpu.tanh):
            handle = call()
        block_n, stages, warps = chosen()
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_dyt_fwd_kernel"], block_n=block_n,
            num_stages=stages, num_warps=warps, metrics={"autotune_configs": len(configs)},
        )  # fmt: skip
        return y.view(*shape)

    launch()  # the autotuner's timing (first call of this width), outside the timed call
    return launch
