"""SGLang's unified extend attention (python/sglang/srt/layers/attention/triton_ops/
extend_attention.py, v0.5.9: `_fwd_kernel_unified`), launched as SGLang's
`extend_attention_fwd_unified` launches it, so that its launch choices are knobs.

The Triton attention backend's extend (prefill with a cached prefix) under
`--enable-deterministic-inference`: the new tokens' keys and values are written to the KV
pool first, `build_unified_kv_indices` lists each sequence's prefix slots followed by its new
tokens' slots, and one program per (sequence, head, BLOCK_M new tokens) walks that whole
list in BLOCK_N steps, every key and value row gathered from the pool through it, with an
online softmax in fp32.  The causal mask (a key past the prefix is seen by the queries at or
after it) is applied by masking each tile, not by bounding the loop, so every row block
walks all of its sequence's keys; the sink logit of the head joins the denominator at the
end.  SGLang's choices (`_get_block_sizes_for_extend_attention` on a Hopper GPU, CUDA
capability 9): BLOCK_DMODEL the head size rounded up to a power of two (no rope split for
these head sizes), BLOCK_M 128 and BLOCK_N 64 for heads up to 256 (32 x 64 above), 4 warps
for heads up to 64 (8 above), and 1 stage; causal, sinks, no custom mask, sliding window,
logit cap or xai temperature.  Knobs: BLOCK_M, BLOCK_N, `num_warps`, `num_stages`, None
keeping SGLang's.

SGLang allocates o per forward; here it is allocated in `prepare`, outside the timed call,
as is max_len_extend (SGLang has it on the host from the batch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_extend_attention import launcher as _extend

LAST_INFO: dict[str, Any] = {}
# SGLang picks the unified kernel's tiles, warps and stages with the same helper as the
# two-phase kernel's (`_get_block_sizes_for_extend_attention`, a fixed 1 stage).
SGLANG_STAGES = _extend.SGLANG_STAGES
sglang_blocks = _extend.sglang_blocks


@dataclass(frozen=True)
class ExtendUnifiedConfig:
    block_m: int | None = None  # None: SGLang's 128 (32 for heads over 256)
    block_n: int | None = None  # None: SGLang's 64
    num_warps: int | None = None  # None: SGLang's 4 for heads up to 64 (8 above)
    num_stages: int | None = None  # None: SGLang's 1


def prepare(
    cfg: ExtendUnifiedConfig, q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor,
    qo_indptr: torch.Tensor, kv_indptr: torch.Tensor, kv_indices: torch.Tensor,
    prefix_lens: torch.Tensor, sinks: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_extend_unified")
    if q.dim() != 3 or k_buffer.dim() != 3 or v_buffer.shape[:2] != k_buffer.shape[:2]:
        raise ValueError("q must be [tokens, heads, headdim], the pools [slots, kvheads, headdim]")
    lq, lv = q.shape[-1], v_buffer.shape[-1]
    if lq in (576, 288, 192):
        raise ValueError("MLA head sizes (a rope split) are not wrapped here")
    heads = q.shape[1]
    if sinks.shape != (heads,):
        raise ValueError("sinks must be [heads]")
    seqs = qo_indptr.numel() - 1
    max_len_extend = int((qo_indptr[1:] - qo_indptr[:-1]).max())
    bm0, bn0, w0 = sglang_blocks(lq)
    bm, bn = cfg.block_m or bm0, cfg.block_n or bn0
    warps = cfg.num_warps or w0
    stages = cfg.num_stages or SGLANG_STAGES
    o = torch.empty((*q.shape[:2], lv), dtype=q.dtype, device=q.device)
    grid = (seqs, heads, triton.cdiv(max_len_extend, bm))
    args = (
        q, o, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, None, None,
        sinks, None, 1.0 / (lq**0.5), heads // k_buffer.shape[1],
        q.stride(0), q.stride(1), o.stride(0), o.stride(1), k_buffer.stride(0),
        k_buffer.stride(1), v_buffer.stride(0), v_buffer.stride(1),
    )  # fmt: skip

    def launch() -> torch.Tensor:
        with _common.interpreter_float_scalars():
            handle = mod._fwd_kernel_unified[grid](
                *args, SLIDING_WINDOW_SIZE=-1, logit_cap=0.0, xai_temperature_len=-1,
                BLOCK_DMODEL=triton.next_power_of_2(lq), BLOCK_DPE=0,
                BLOCK_DV=triton.next_power_of_2(lv), BLOCK_M=bm, BLOCK_N=bn, Lq=lq, Lv=lv,
                IS_CAUSAL=True, USE_CUSTOM_MASK=False, HAS_SINK=True, num_warps=warps,
                num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fwd_kernel_unified"], block_m=bm,
            block_n=bn, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return o

    return launch
