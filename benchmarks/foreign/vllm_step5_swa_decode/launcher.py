"""Step5's sliding-window GQA decode (vllm/models/step5/nvidia/ops/swa_decode.py, v0.34.0:
`_swa_decode_split`, `_store_gated`, `_swa_decode_combine`), launched as vLLM's
`swa_decode_gated` launches them, so that their launch choices are knobs.

Split launch, grid (tokens / PACK x KV heads, SPLITS): a program takes PACK consecutive
tokens of one request and all GROUP query heads of one KV head as the rows (BLOCK_M =
max(16, next power of 2 of PACK x GROUP)) of a FlashAttention-style loop over its share of
the window (window + PACK - 1 keys cut in SPLITS chunks): BLOCK_N keys at a time, each
key's page gathered through the request's block table, Q.K^T as two tl.dots over the head
dim's 128 + 64 halves, the causal window mask per row, an online base-2 softmax, P.V as two
more tl.dots.  With one split it stores the attention, rounded to the output dtype, times
the head's sigmoid gate (`_store_gated`; `_gate`, Step5's DSA decode helper, rounds the
sigmoid to the gate's dtype); with several, fp32 partials and base-2 log-sum-exps, and the
combine launch, grid (tokens, heads), merges the splits (up to the next power of 2 of
SPLITS at once) and applies the gate.

vLLM's choices: PACK and SPLITS from `swa_decode_plan` (MTP tokens packed once (token, KV
head) programs reach 128 and PACK x GROUP <= 64; the window split in two until programs x
splits reach about twice the SMs, at most 8, each split keeping 64 keys), BLOCK_N 64, 4
warps and Triton's default stages for both launches, no autotuning.  PDL (launch_pdl and
the kernels' gdc_wait) is off here: USE_PDL=False, as on a GPU without it.  Knobs: BLOCK_N,
SPLITS, PACK, the split launch's warps and stages and the combine's warps, None keeping
vLLM's choice.  The fp32 split buffers, allocated per call by vLLM, and the output, made by
the attention layer, are made in `prepare`: the timed call is the launches alone.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common, _libdevice_cpu

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_N = 64  # swa_decode_gated's literal
VLLM_WARPS = 4  # both launches
HEAD = 192
H100_SMS = 132  # the plan's SM count when the inputs are not on a GPU (CPU tests)
# _gate's libdevice exp under the CPU interpreter (which returns None for it); CPU tests only
_CPU_LIBDEVICE = types.SimpleNamespace(exp=_libdevice_cpu.exp)


@dataclass(frozen=True)
class SwaDecodeConfig:
    block_n: int | None = None  # None: vLLM's 64 keys per step
    splits: int | None = None  # None: swa_decode_plan's (from the device's SM count)
    pack: int | None = None  # None: swa_decode_plan's (q_len for MTP batches, else 1)
    num_warps: int | None = None  # None: vLLM's 4 (split launch)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)
    merge_warps: int | None = None  # None: vLLM's 4 (combine launch)


def plan(
    tokens: int, kv_heads: int, group: int, query_len: int, num_sms: int, window: int
) -> tuple[int, int]:
    """vLLM's `swa_decode_plan` and `swa_decode_splits` (pure Python, v0.34.0)."""
    pack = (
        query_len if query_len > 1 and tokens * kv_heads >= 128 and query_len * group <= 64 else 1
    )
    programs = tokens // pack * kv_heads
    splits = 1
    while splits < 8 and programs * splits * 2 <= 2 * num_sms and window // (splits * 2) >= 64:
        splits *= 2
    return pack, splits


def prepare(
    cfg: SwaDecodeConfig, q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor,
    seq_lens: torch.Tensor, gate: torch.Tensor, scale: float, window: int, q_len: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_step5_swa_decode")
    helper = _common.load_source("vllm_step5_decode_gate")
    # The extracted kernels call _gate (sparse_decode_attention.py) by global name.
    mod._gate = helper._gate
    tokens, heads, dim = q.shape
    if kv.dim() != 4 or kv.shape[3] != 2 * HEAD or dim != HEAD:
        raise ValueError("q must be [tokens, heads, 192], kv [pages, kv_heads, block, 384]")
    # Step5's _split_kv_cache: [pages, block, kv_heads, 192] views of K and V
    key_cache, value_cache = kv.transpose(1, 2).split(HEAD, dim=-1)
    kv_heads = key_cache.shape[2]
    group = heads // kv_heads
    if heads != group * kv_heads or group > 16 or tokens != seq_lens.shape[0] * q_len:
        raise ValueError("heads must be kv_heads x group (<= 16), tokens reqs x q_len")
    if q.device.type == "cuda":
        sms = torch.cuda.get_device_properties(q.device).multi_processor_count
    else:
        sms = H100_SMS
    plan_pack, plan_splits = plan(tokens, kv_heads, group, q_len, sms, window)
    pack = cfg.pack or plan_pack
    splits = cfg.splits or plan_splits
    if q_len % pack or pack * group > 64:
        raise ValueError(f"pack {pack} must divide q_len {q_len}, pack x group <= 64")
    block_n = cfg.block_n or VLLM_BLOCK_N
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or 3
    merge_warps = cfg.merge_warps or VLLM_WARPS
    output = torch.empty_like(q)
    partial = torch.empty(
        (tokens * kv_heads * splits * group if splits > 1 else 1, HEAD),
        dtype=torch.float32,
        device=q.device,
    )
    lse = torch.empty(partial.shape[0], dtype=torch.float32, device=q.device)
    block_m = max(16, triton.next_power_of_2(pack * group))
    grid1 = (tokens // pack * kv_heads, splits)
    grid2 = (tokens, heads)
    args1 = (
        q, key_cache, value_cache, block_table, seq_lens, partial, lse, gate, output, scale,
        output.stride(0), output.stride(1), gate.stride(0), gate.stride(1), q.stride(0),
        q.stride(1), key_cache.stride(0), key_cache.stride(1), key_cache.stride(2),
        value_cache.stride(0), value_cache.stride(1), value_cache.stride(2),
        block_table.stride(0), kv_heads, group, pack, block_m, q_len, key_cache.shape[1],
        window, splits, block_n, False,
    )  # fmt: skip
    args2 = (
        partial, lse, gate, output, output.stride(0), output.stride(1), gate.stride(0),
        gate.stride(1), kv_heads, group, splits, triton.next_power_of_2(splits), False,
    )  # fmt: skip

    def launch() -> torch.Tensor:
        with _common.interpreter_libdevice(helper, tldevice=_CPU_LIBDEVICE):
            h1 = mod._swa_decode_split[grid1](*args1, num_warps=warps, num_stages=stages)
            if splits > 1:
                mod._swa_decode_combine[grid2](*args2, num_warps=merge_warps)
        _common.record(
            LAST_INFO, h1, kernels=2 if splits > 1 else 1,
            kernel_names=["_swa_decode_split"] + (["_swa_decode_combine"] if splits > 1 else []),
            block_n=block_n, splits=splits, pack=pack, block_m=block_m, num_warps=warps,
            num_stages=stages, merge_warps=merge_warps, programs=grid1[0] * grid1[1],
        )  # fmt: skip
        return output

    return launch
