"""vLLM's batch-invariant persistent matmul (vllm/model_executor/determinism/
batch_invariant.py, v0.34.0: `matmul_kernel_persistent`), launched as vLLM's
`matmul_persistent` launches it, so that its launch choices are knobs.

With VLLM_BATCH_INVARIANT=1 (a token's output must not depend on the batch around it, e.g.
RL rollouts matched to a trainer) vLLM's unquantized linear layers and lm_head call
`linear_batch_invariant(x, weight, bias)`, i.e. this kernel on `x @ weight.t()`: a
persistent grid of min(SMs, tiles) programs, each walking the output tiles
tile_id = pid, pid + SMs, ... (GROUP_SIZE_M row tiles swizzled together), each tile a full
K loop of BLOCK_SIZE_K-deep tl.dot steps into an fp32 accumulator.  Row and column indices
past M and N are clamped to 0 (unmasked loads), K is masked; the weight is read through
the transposed view (K-contiguous columns).

vLLM's launch: for bf16 on Hopper, the tuned table of batch_invariant_configs.py picked by
(N, K) and an M bucket (the first bucket at or above M, else the largest): BLOCK_M x
BLOCK_N, warps and stages per bucket, BLOCK_K per shape, GROUP_SIZE_M 8; shapes not in the
table (and other dtypes) take the per-dtype defaults (bf16 128 x 128 x 64, fp16
128 x 256 x 64, fp32 128 x 128 x 32; GROUP_SIZE_M 8, 3 stages, 8 warps).  NUM_SMS is the
device's multiprocessor count.  Knobs: the tile sizes, the group size, the programs of the
persistent grid, warps and stages, None keeping vLLM's.  The output (allocated by vLLM's
wrapper on every call) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
H100_SMS = 132  # the programs on a machine without CUDA (the interpreter)

# vLLM's per-dtype defaults (matmul_persistent's `configs`, on a GPU with more than
# 104 KiB of shared memory per block, as Hopper: fp16 BLOCK_N 256; fp32 N != 1)
VLLM_DEFAULTS = {
    torch.bfloat16: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64,
                     "GROUP_SIZE_M": 8, "num_stages": 3, "num_warps": 8},
    torch.float16: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64,
                    "GROUP_SIZE_M": 8, "num_stages": 3, "num_warps": 8},
    torch.float32: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32,
                    "GROUP_SIZE_M": 8, "num_stages": 3, "num_warps": 8},
}  # fmt: skip

# vLLM's Hopper table (batch_invariant_configs.py, "hopper"), bf16 only: (N, K) ->
# (BLOCK_K, ((max M, (BLOCK_M, BLOCK_N, warps, stages)), ...)); the trials' two shapes
HOPPER_TUNED = {
    (4096, 12288): (128, (  # Qwen3-8B down_proj
        (1, (16, 64, 4, 5)), (4, (16, 64, 4, 5)), (8, (16, 64, 4, 5)), (16, (16, 32, 4, 5)),
        (32, (16, 64, 4, 5)), (64, (64, 32, 4, 5)), (256, (64, 128, 4, 4)),
        (512, (128, 128, 4, 3)), (1024, (128, 128, 4, 3)), (2048, (128, 128, 4, 3)),
    )),
    (6144, 4096): (128, (  # Qwen3-8B / Llama-3.1-8B qkv_proj
        (1, (16, 128, 4, 5)), (4, (16, 64, 4, 5)), (8, (16, 64, 4, 5)), (16, (16, 64, 4, 5)),
        (32, (16, 128, 4, 5)), (64, (64, 64, 4, 5)), (256, (128, 128, 4, 3)),
        (512, (64, 128, 4, 4)), (1024, (128, 128, 4, 3)), (2048, (128, 128, 4, 3)),
    )),
}  # fmt: skip


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return H100_SMS


def vllm_config(m: int, n: int, k: int, dtype: torch.dtype) -> dict[str, int]:
    """`_get_matmul_config` on Hopper: the tuned entry for bf16 shapes in the table, else
    the dtype's default."""
    tuned = HOPPER_TUNED.get((n, k)) if dtype == torch.bfloat16 else None
    if tuned is None:
        return dict(VLLM_DEFAULTS[dtype])
    block_k, buckets = tuned
    cfg = buckets[-1][1]
    for max_m, bucket in buckets:
        if max_m >= m:
            cfg = bucket
            break
    bm, bn, warps, stages = cfg
    return {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": block_k,
            "GROUP_SIZE_M": 8, "num_warps": warps, "num_stages": stages}  # fmt: skip


@dataclass(frozen=True)
class MatmulConfig:
    block_m: int | None = None  # None: vLLM's (tuned: 16-128; default 128)
    block_n: int | None = None  # None: vLLM's (tuned: 32-256; default 128, fp16 256)
    block_k: int | None = None  # None: vLLM's (tuned: 64 or 128; default 64, fp32 32)
    group_m: int | None = None  # None: vLLM's 8
    programs: int | None = None  # None: the device's SMs (at most the tiles)
    num_warps: int | None = None  # None: vLLM's (tuned: 4 or 8; default 8)
    num_stages: int | None = None  # None: vLLM's (tuned: 2-5; default 3)


def prepare(cfg: MatmulConfig, x: torch.Tensor, w_t: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_bi_matmul")
    if x.dtype != w_t.dtype or x.shape[1] != w_t.shape[0]:
        raise ValueError("x [M, K] and w_t [K, N] must share the dtype and K")
    m, k = x.shape
    n = w_t.shape[1]
    base = vllm_config(m, n, k, x.dtype)
    bm, bn, bk, gm, warps, stages = _common.gemm_tiles(
        cfg, base, base["num_warps"], base["num_stages"]
    )
    c = torch.empty((m, n), device=x.device, dtype=x.dtype)
    sms = cfg.programs or sm_count(x.device)
    tiles = _cdiv(m, bm) * _cdiv(n, bn)
    grid = (min(sms, tiles),)

    def launch() -> torch.Tensor:
        handle = mod.matmul_kernel_persistent[grid](
            x, w_t, c, None, m, n, k,
            x.stride(0), x.stride(1), w_t.stride(0), w_t.stride(1),
            c.stride(0), c.stride(1), 1,
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm,
            NUM_SMS=sms, A_LARGE=x.numel() > 2**31, B_LARGE=w_t.numel() > 2**31,
            C_LARGE=c.numel() > 2**31, HAS_BIAS=False, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["matmul_kernel_persistent"],
            block_m=bm, block_n=bn, block_k=bk, group_m=gm, num_warps=warps,
            num_stages=stages, programs=grid[0], tiles=tiles, k_steps=_cdiv(k, bk),
        )  # fmt: skip
        return c

    return launch
