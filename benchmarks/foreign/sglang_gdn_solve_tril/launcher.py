"""SGLang's chunk-wise inverse of I + A (python/sglang/srt/layers/attention/fla/
solve_tril.py, v0.5.9, adapted there from flash-linear-attention: `solve_tril_16x16_kernel`
then `merge_16x16_to_64x64_inverse_kernel`), launched by our copy of SGLang's `solve_tril`
(varlen, 64-token chunks, output in the spec's dtype) so that its launch choices are knobs.

The third step of Qwen3-Next's chunked gated-delta-rule prefill, right after the scaled
K K^T (`sglang_gdn_kkt`): every 64-token chunk's strictly lower triangular A becomes
(I + A)^-1, the WY representation's T matrix.  Two launches.  The first inverts the four
16 x 16 diagonal blocks of every chunk by forward substitution, one program per (16-token
block, head): a 15-step loop, each step loading one row of A and updating the 16 x 16
inverse in registers (a serial dependence, no tl.dot), into an fp32 scratch Ad [tokens,
heads, 16].  The second, one program per (64-token chunk, head), loads the six 16 x 16
blocks below the diagonal and the four diagonal inverses and builds the off-diagonal
blocks of the inverse by block substitution (sixteen 16 x 16 x 16 tl.dot in fp32, "ieee"
precision: no tf32), storing all sixteen blocks (the upper ones as zeros).  SGLang's
choices: 1 warp and 4 stages for the first launch, 4 warps and 3 stages for the second.
Knobs: `diag_warps`, `diag_stages` (the first launch has a loop to pipeline), `merge_warps`
(the second has none, so its stages change nothing and are no knob), None keeping SGLang's.
The 16-row blocks and the 64-token chunk are the algorithm's, not tiles.

SGLang builds the (sequence, block) index pairs at 16 and at 64 tokens once per batch
(fla.index's `prepare_chunk_indices`, shimmed out of the fetched file) and allocates Ad and
the output per call; here they are made in `prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from foreign.sglang_gdn_cumsum.launcher import chunk_indices

LAST_INFO: dict[str, Any] = {}
SGLANG_DIAG_WARPS = 1
SGLANG_DIAG_STAGES = 4
SGLANG_MERGE_WARPS = 4
SGLANG_MERGE_STAGES = 3


@dataclass(frozen=True)
class SolveTrilConfig:
    diag_warps: int | None = None  # None: SGLang's 1
    diag_stages: int | None = None  # None: SGLang's 4
    merge_warps: int | None = None  # None: SGLang's 4


def prepare(
    cfg: SolveTrilConfig, a: torch.Tensor, cu_seqlens: torch.Tensor, out_dtype: torch.dtype
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_gdn_solve_tril")
    if a.dim() != 4 or a.shape[0] != 1 or not a.is_contiguous():
        raise ValueError("A must be a contiguous [1, tokens, heads, chunk] tensor (packed)")
    _, tokens, heads, chunk = a.shape
    if chunk != 64:
        # SGLang's gated delta rule always chunks by 64; its 32-token merge leaves the
        # upper block unwritten and its 16-token path is one launch: neither is wrapped
        raise ValueError("the chunk must be 64 tokens (the gated delta rule's)")
    diag_warps = cfg.diag_warps or SGLANG_DIAG_WARPS
    diag_stages = cfg.diag_stages or SGLANG_DIAG_STAGES
    merge_warps = cfg.merge_warps or SGLANG_MERGE_WARPS
    blocks = chunk_indices(cu_seqlens, 16)
    ad = torch.empty(1, tokens, heads, 16, device=a.device, dtype=torch.float32)
    chunks = chunk_indices(cu_seqlens, chunk)
    ai = torch.empty(1, tokens, heads, chunk, device=a.device, dtype=out_dtype)
    merge = mod.merge_16x16_to_64x64_inverse_kernel
    diag_grid = (blocks.shape[0], heads)
    merge_grid = (chunks.shape[0], heads)

    def launch() -> torch.Tensor:
        diag = mod.solve_tril_16x16_kernel[diag_grid](
            A=a, Ad=ad, cu_seqlens=cu_seqlens, chunk_indices=blocks, T=tokens, H=heads,
            BT=chunk, IS_VARLEN=True, num_warps=diag_warps, num_stages=diag_stages,
        )  # fmt: skip
        handle = merge[merge_grid](
            A=a, Ad=ad, Ai=ai, cu_seqlens=cu_seqlens, chunk_indices=chunks, T=tokens, H=heads,
            BT=chunk, IS_VARLEN=True, num_warps=merge_warps, num_stages=SGLANG_MERGE_STAGES,
        )  # fmt: skip
        # the second launch's registers and shared memory (the first's are in diag_*)
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["solve_tril_16x16_kernel", "merge_16x16_to_64x64_inverse_kernel"],
            chunk=chunk, diag_warps=diag_warps, diag_stages=diag_stages,
            merge_warps=merge_warps, merge_stages=SGLANG_MERGE_STAGES,
            programs=diag_grid[0] * diag_grid[1] + merge_grid[0] * merge_grid[1],
        )  # fmt: skip
        for key in ("n_regs", "n_spills"):
            val = getattr(diag, key, None)
            if isinstance(val, int):
                LAST_INFO[f"diag_{key}"] = val
        return ai

    return launch
