"""SGLang's Double Sparsity approximate attention
(python/sglang/srt/layers/attention/triton_ops/double_sparsity_attention.py, v0.5.9:
`_sparse_fwd_kernel_flash_decode_stage1`), launched as SGLang's `sparse_flash_decode_stage1`
launches it, so that its launch choices are knobs.

A 3-D grid of [batch, heads, ctx / BLOCK] programs: each program takes BLOCK context
positions of one request and query head; if its first position is inside the request, it
loads the query's label (channels values), gathers the positions' token slots from the
request's req_to_token row and their KV head's label rows from the pool (channels values
each, masked past the request's length), multiplies in fp16 (SGLang's reduce dtype),
sums each row and scales; it stores BLOCK scores, -inf past the length, unmasked.  Each
label row is read by the `heads / kv_heads` query heads of its group.

SGLang's launch: BLOCK 32, 4 warps for MHA and 2 with grouped KV heads, 1 stage (no
autotune).  Knobs: the positions per program and the warps, None keeping SGLang's choice;
the stages are no knob (the loop runs once or not at all).  The store is unmasked, so a
block that does not divide the longest context would write -inf into the next request's
row (and past the last): the launcher refuses one.  SGLang's output (its reduce dtype,
allocated once per batch in `init_forward_metadata`) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG = {"block_n": 32, "num_stages": 1}
LOGIT_CAP = 0.0  # Llama's attention has no soft cap


@dataclass(frozen=True)
class DsLabelScoresConfig:
    block_n: int | None = None  # None: SGLang's BLOCK, 32 context positions per program
    num_warps: int | None = None  # None: SGLang's 4 (MHA) or 2 (grouped KV heads)


def prepare(
    cfg: DsLabelScoresConfig,
    q_label: torch.Tensor,
    k_label: torch.Tensor,
    req_to_token: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_ds_label_scores")
    batch, heads, channels = q_label.shape
    kv_heads = k_label.shape[1]
    if k_label.shape[2] != channels or channels not in (16, 32, 64, 128, 256, 576):
        raise ValueError("the label width must match and be one SGLang allows")
    if heads % kv_heads:
        raise ValueError("heads must be a multiple of kv_heads")
    max_len = int(seq_lens.max())
    block_n = cfg.block_n or SGLANG["block_n"]
    if max_len % block_n:
        raise ValueError(
            f"block_n {block_n} does not divide the longest context {max_len}: the kernel's "
            "unmasked store would spill -inf into the next request's row"
        )
    group = heads // kv_heads
    warps = cfg.num_warps or (4 if group == 1 else 2)
    stages = SGLANG["num_stages"]
    att_out = torch.empty(heads, batch, max_len, dtype=torch.float16, device=q_label.device)
    grid = (batch, heads, triton.cdiv(max_len, block_n))

    def launch() -> torch.Tensor:
        handle = mod._sparse_fwd_kernel_flash_decode_stage1[grid](
            q_label, k_label, sm_scale, req_to_token, seq_lens, att_out,
            req_to_token.stride(0), q_label.stride(0), q_label.stride(1), k_label.stride(0),
            k_label.stride(1), att_out.stride(0), att_out.stride(1), group, channels,
            block_n, LOGIT_CAP, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["_sparse_fwd_kernel_flash_decode_stage1"], block_n=block_n,
            num_warps=warps, num_stages=stages, programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return att_out

    return launch
