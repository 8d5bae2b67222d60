"""SGLang's NSA indexer activation quantization (python/sglang/srt/layers/attention/nsa/
triton_kernel.py, v0.5.9: `_act_quant_kernel`), launched as SGLang's `act_quant` launches it
for DeepSeek-V3.2's lightning indexer on CUDA (the indexer's forward_cuda imports this
Triton `act_quant`; ROCm takes a TileLang one), once for the query and once for the key of
a layer, so that its launch choices are knobs.

`act_quant` views its input as a contiguous [M, N] matrix (the query's tokens x 64 heads
rows of 128, the key's tokens rows of 128) and launches a (cdiv(M, BLOCK_M), N / 128) grid:
each program loads a [BLOCK_M, 128] tile (rows masked), takes each row's absolute maximum
in fp32 (at least 1e-4), turns it into a power-of-two scale, exp2(ceil(log2(amax / 448)))
(the indexer passes scale_fmt "ue8m0": round_scale), divides the tile by it, clamps to
+-448, stores the tile as e4m3 (the store's cast) and the BLOCK_M scales to the row-major
[M, N / 128] fp32 scale matrix.  No loop and no tl.dot.

SGLang's choices: BLOCK_M = 32, BLOCK_N = the group (128), num_stages 0 with round_scale
(2 without), no num_warps (Triton's default 4), for the query and the key alike.  Knobs:
`q_block_m` and `q_warps` for the query launch, `k_block_m` and `k_warps` for the key's
(64 times fewer rows), None keeping SGLang's.  BLOCK_N is the quantization group, not a
tile (the scale is one group's); the kernel has no loop, so the stages are no knob (its
sm_90 PTX is the same at 0 to 4).  The indexer runs the two launches back to back on one
stream, except in a CUDA-graph decode step of at most 1024 tokens, where the key's goes to
its second stream; here they run in order on one stream.  SGLang allocates the outputs per
call; here they are made in `prepare`.  Under the CPU interpreter only, the fp32 -> e4m3
cast is done by torch (`sglang_fp8_group_quant`'s patch: round to nearest even, as the
GPU's cvt.rn.satfinite does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_fp8_group_quant.launcher import interpreter_fp8_cast

LAST_INFO: dict[str, Any] = {}
FP8 = torch.float8_e4m3fn
GROUP = 128  # the indexer's block_size: one scale per 128 columns, BLOCK_N
SGLANG_BLOCK_M = 32
DEFAULT_WARPS = 4  # act_quant passes no num_warps
SGLANG_STAGES = 0  # act_quant: num_stages=0 if round_scale else 2 (the indexer rounds)

Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class NsaActQuantConfig:
    q_block_m: int | None = None  # None: SGLang's 32
    q_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    k_block_m: int | None = None  # None: SGLang's 32
    k_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: NsaActQuantConfig, query: torch.Tensor, key: torch.Tensor
) -> Callable[[], Outputs]:
    mod = _common.load_source("sglang_nsa_act_quant")
    if query.dim() != 3 or key.dim() != 2 or key.shape != (query.shape[0], query.shape[2]):
        raise ValueError("query [tokens, heads, head_dim] and key [tokens, head_dim]")
    if not (query.is_contiguous() and key.is_contiguous()):
        raise ValueError("act_quant asserts contiguous inputs (it indexes rows * N + cols)")
    n = query.shape[-1]
    if n % GROUP:
        raise ValueError(f"head_dim must be a multiple of the {GROUP}-column group")
    q_block_m = cfg.q_block_m or SGLANG_BLOCK_M
    k_block_m = cfg.k_block_m or SGLANG_BLOCK_M
    q_warps = cfg.q_warps or DEFAULT_WARPS
    k_warps = cfg.k_warps or DEFAULT_WARPS
    # act_quant's views and outputs, the query's launch and then the key's
    launches: list[tuple[tuple[Any, ...], tuple[int, int], int, int]] = []
    outputs: list[torch.Tensor] = []
    for x, block_m, warps in ((query, q_block_m, q_warps), (key, k_block_m, k_warps)):
        rows = x.numel() // n
        y = torch.empty_like(x, dtype=FP8)
        s = torch.empty(*x.shape[:-1], n // GROUP, device=x.device, dtype=torch.float32)
        args = (x.view(rows, n), y.view(rows, n), s.view(rows, n // GROUP), rows, n)
        launches.append((args, (triton.cdiv(rows, block_m), n // GROUP), block_m, warps))
        outputs += [y, s]
    programs = sum(grid[0] * grid[1] for _, grid, _, _ in launches)

    def launch() -> Outputs:
        handles = []
        with interpreter_fp8_cast():
            for args, grid, block_m, warps in launches:
                handles.append(
                    mod._act_quant_kernel[grid](
                        *args, group_size=GROUP, round_scale=True, BLOCK_M=block_m,
                        BLOCK_N=GROUP, num_stages=SGLANG_STAGES, num_warps=warps,
                    )
                )  # fmt: skip
        _common.record(
            LAST_INFO, handles[0], kernels=2, kernel_names=["_act_quant_kernel"] * 2,
            q_block_m=q_block_m, q_warps=q_warps, k_block_m=k_block_m, k_warps=k_warps,
            programs=programs,
        )  # fmt: skip
        return outputs[0], outputs[1], outputs[2], outputs[3]

    return launch
