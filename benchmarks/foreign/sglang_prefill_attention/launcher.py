"""SGLang's Triton prefill attention (python/sglang/srt/layers/attention/triton_ops/
prefill_attention.py, v0.5.9, adapted there from LightLLM), launched by our copy of SGLang's
`context_attention_fwd` so that its launch choices are knobs.

A flash-attention forward over packed variable-length sequences ([total tokens, heads,
head_dim], each sequence's start and length given): the grid is (sequences, query heads,
query tiles); a program loads BLOCK_M query rows once, walks the KV of its sequence in
BLOCK_N-row steps up to the causal diagonal, computing QK^T and PV with tl.dot and an online
softmax in fp32, and writes its rows.  Query heads share KV heads (GQA) by head index; each
program reads its KV itself.  SGLang's choices: BLOCK_M = BLOCK_N = 128 on compute
capability above 8 (64 otherwise, and under the CPU interpreter), num_warps 4 up to a
64-wide head and 8 above, num_stages 1, causal.  Knobs: `block_m`, `block_n`, `num_warps`,
`num_stages`, None keeping SGLang's.

The sequence starts and lengths are the batch's metadata (built once per batch by SGLang's
scheduler) and the output is allocated by the caller: both happen in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class PrefillAttentionConfig:
    block_m: int | None = None  # None: SGLang's 128 above capability 8.x, else 64
    block_n: int | None = None  # None: SGLang's, equal to block_m
    num_warps: int | None = None  # None: SGLang's 4 for head_dim <= 64, else 8
    num_stages: int | None = None  # None: SGLang's 1


def sglang_block(device: torch.device) -> int:
    """SGLang's tile: 128 when CUDA reports a capability above 8.x, else 64."""
    if device.type == "cuda" and torch.cuda.get_device_capability(device)[0] > 8:
        return 128
    return 64


def prepare(
    cfg: PrefillAttentionConfig,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    start_loc: torch.Tensor,
    seq_len: torch.Tensor,
    max_len: int,
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_prefill")
    if q.dim() != 3 or k.shape != v.shape or k.dim() != 3:
        raise ValueError("q [tokens, q heads, head_dim], k and v [tokens, kv heads, head_dim]")
    if q.shape[1] % k.shape[1]:
        raise ValueError("query heads must be a multiple of KV heads")
    block = sglang_block(q.device)
    block_m = cfg.block_m or block
    block_n = cfg.block_n or block
    head_dim = k.shape[-1]
    warps = cfg.num_warps or (4 if head_dim <= 64 else 8)
    stages = cfg.num_stages or 1
    batch, heads = seq_len.shape[0], q.shape[1]
    group = heads // k.shape[1]
    sm_scale = 1.0 / (q.shape[-1] ** 0.5)
    out = torch.empty_like(q)
    grid = (batch, heads, triton.cdiv(max_len, block_m))

    def launch() -> torch.Tensor:
        handle = mod._fwd_kernel[grid](
            q, k, v, sm_scale, start_loc, seq_len, out,
            q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            out.stride(0), out.stride(1), kv_group_num=group, BLOCK_M=block_m,
            BLOCK_DMODEL=triton.next_power_of_2(head_dim), BLOCK_N=block_n, IS_CAUSAL=True,
            num_warps=warps, num_stages=stages, Lk=head_dim,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fwd_kernel"], block_m=block_m,
            block_n=block_n, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
