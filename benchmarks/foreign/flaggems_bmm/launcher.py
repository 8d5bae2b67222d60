"""FlagGems' batched GEMM (src/flag_gems/ops/bmm.py, v5.0.2: `bmm_kernel`), launched as
FlagGems' `bmm_out` (aten::bmm.out) launches it, so that its launch choices are knobs.

O[b] = A[b] @ B[b] for every batch entry b, every operand taken through its three strides.
One program per (TILE_M x TILE_N output tile, batch entry): the grid is (cdiv(M, TILE_M),
cdiv(N, TILE_N), batch), the batch on the third axis.  With GROUP_M above 1 the program's
(x, y) id is renumbered so that GROUP_M consecutive row tiles walk every column tile before
the next band starts (a band past the last row tile takes the remainder, gridx % GROUP_M
rows); with GROUP_M 1 the ids are the tile's own.  A program walks K in TILE_K steps, each
loading a [TILE_M, TILE_K] tile of A and a [TILE_K, TILE_N] tile of B (masked along M, N
and K only where the shape's DIVISIBLE_M / DIVISIBLE_N / DIVISIBLE_K flag says the tile
does not divide it) and adding their tl.dot into an fp32 accumulator (allow_tf32 off); the
tile is stored once in the output's dtype, masked the same way.

FlagGems' call: `@libtuner` (its autotuner, keyed on M, N, K and A's row and B's depth
strides rounded to 32) over the `bmm` entry of its nvidia tuning YAML (the Hopper file has
none): twelve configurations, TILE_M 32 to 128, TILE_N 32 to 128, TILE_K 32, GROUP_M 1 or 2,
4 warps, 2 or 3 stages; the first is 32 x 32 x 32, GROUP_M 1, 4 warps, 2 stages, which
`triton_v1` takes, as the other FlagGems specs take their lists' first.  Its
`@triton.heuristics` sets DIVISIBLE_M/N/K as M % TILE_M == 0 and so on; the launcher
computes the same flags.  Knobs: `tile_m`, `tile_n`, `tile_k`, `group_m`, `num_warps`,
`num_stages`, None keeping that first configuration.  `bmm_out` writes into the caller's
tensor; the output here is vLLM's [tokens, heads, v_head_dim] buffer, allocated in
`prepare` and passed as its (heads, tokens, v) transposed view, as vLLM's MLA
`_v_up_proj` passes it.  The launch records, as metrics, one head per program (the batch
entry is the grid's third axis) and the tl.dot operands' width, the input dtype's (no
upcast: bf16 or fp16 operands take the tensor cores at 16 bits, fp32 at 32 without TF32).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first `bmm` entry of FlagGems' nvidia tune_configs.yaml
YAML_FIRST = {
    "tile_m": 32,
    "tile_n": 32,
    "tile_k": 32,
    "group_m": 1,
    "num_warps": 4,
    "num_stages": 2,
}


@dataclass(frozen=True)
class BmmConfig:
    tile_m: int | None = None  # None: the YAML's first, 32 (rows of A and O per program)
    tile_n: int | None = None  # None: the YAML's first, 32 (columns of B and O per program)
    tile_k: int | None = None  # None: the YAML's first, 32 (the depth of a tl.dot step)
    group_m: int | None = None  # None: the YAML's first, 1 (no renumbering)
    num_warps: int | None = None  # None: the YAML's first, 4
    num_stages: int | None = None  # None: the YAML's first, 2


def _pick(cfg: BmmConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else YAML_FIRST[name]


def prepare(cfg: BmmConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    """a is [batch, M, K] (any strides: vLLM's is a transposed view), b [batch, K, N]; the
    launch writes a [M, batch, N] buffer through its [batch, M, N] transposed view and
    returns that view."""
    mod = _common.load_source("flaggems_bmm")
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError("a [batch, M, K] and b [batch, K, N] must agree")
    batch, m, k = a.shape
    n = b.shape[2]
    tile_m, tile_n, tile_k = _pick(cfg, "tile_m"), _pick(cfg, "tile_n"), _pick(cfg, "tile_k")
    group_m = _pick(cfg, "group_m")
    warps, stages = _pick(cfg, "num_warps"), _pick(cfg, "num_stages")
    # vLLM's `out` is [tokens, heads * v_head_dim]; bmm writes its (heads, tokens, v) view
    out = torch.empty((m, batch, n), device=a.device, dtype=a.dtype).transpose(0, 1)
    grid = (triton.cdiv(m, tile_m), triton.cdiv(n, tile_n), batch)
    # FlagGems' @triton.heuristics("bmm")
    div_m, div_n, div_k = m % tile_m == 0, n % tile_n == 0, k % tile_k == 0

    def launch() -> torch.Tensor:
        handle = mod.bmm_kernel[grid](
            a, b, out, m, n, k,
            a.stride(0), a.stride(1), a.stride(2),
            b.stride(0), b.stride(1), b.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            TILE_M=tile_m, TILE_N=tile_n, TILE_K=tile_k, GROUP_M=group_m,
            DIVISIBLE_M=div_m, DIVISIBLE_N=div_n, DIVISIBLE_K=div_k,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["bmm_kernel"], tile_m=tile_m,
            tile_n=tile_n, tile_k=tile_k, group_m=group_m, num_warps=warps,
            num_stages=stages, programs=grid[0] * grid[1] * grid[2],
            steps_per_program=triton.cdiv(k, tile_k),
            metrics={"heads_per_program": 1, "matmul_operand_bits": 8 * a.element_size()},
        )  # fmt: skip
        return out

    return launch
