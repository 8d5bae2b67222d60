"""SGLang's batch-invariant persistent bmm (python/sglang/srt/batch_invariant_ops/
batch_invariant_ops.py, v0.5.9: `bmm_kernel_persistent`), launched as SGLang's
`bmm_batch_invariant` launches it, so that its launch choices are knobs.

With `--enable-deterministic-inference` SGLang replaces aten::bmm (and torch.bmm) by this
kernel so that a token's result does not depend on the batch around it: one fixed tile
configuration per dtype, and a persistent grid of min(SMs, tiles) programs, each walking
the tiles tile_id = pid, pid + SMs, ... in batch-major order (a GROUP_SIZE_M swizzle inside
each batch entry), each tile a full K loop of tl.dot steps into an fp32 accumulator.  Row
and column indices past M and N are clamped to 0 (unmasked loads), K is masked.

SGLang's launch: BLOCK_M x BLOCK_N x BLOCK_K = 128 x 128 x 64, GROUP_SIZE_M 8, 3 stages and
8 warps for bf16 (128 x 256 x 64 for fp16, 128 x 128 x 32 for fp32), NUM_SMS the device's
multiprocessor count.  Knobs: the tile sizes, the group size, the programs of the
persistent grid (at most the tiles), warps and stages, None keeping SGLang's for the
input's dtype.  The output (allocated by SGLang's wrapper on every call) is made in
`prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
H200_SMS = 132  # the programs on a machine without CUDA (the interpreter)

# SGLang's fixed configurations, by dtype
SGLANG_CONFIGS = {
    torch.bfloat16: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64,
                     "GROUP_SIZE_M": 8, "num_stages": 3, "num_warps": 8},
    torch.float16: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64,
                    "GROUP_SIZE_M": 8, "num_stages": 3, "num_warps": 8},
    torch.float32: {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32,
                    "GROUP_SIZE_M": 8, "num_stages": 3, "num_warps": 8},
}  # fmt: skip


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    return H200_SMS


@dataclass(frozen=True)
class BmmConfig:
    block_m: int | None = None  # None: SGLang's 128
    block_n: int | None = None  # None: SGLang's 128 (bf16, fp32) or 256 (fp16)
    block_k: int | None = None  # None: SGLang's 64 (bf16, fp16) or 32 (fp32)
    group_m: int | None = None  # None: SGLang's 8
    programs: int | None = None  # None: the device's SMs (at most the tiles)
    num_warps: int | None = None  # None: SGLang's 8
    num_stages: int | None = None  # None: SGLang's 3


def prepare(cfg: BmmConfig, a: torch.Tensor, b: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_bi_bmm")
    base = SGLANG_CONFIGS[a.dtype]
    bm, bn, bk, gm, warps, stages = _common.gemm_tiles(
        cfg, base, base["num_warps"], base["num_stages"]
    )
    nb, m, k = a.shape
    n = b.shape[2]
    c = torch.empty((nb, m, n), device=a.device, dtype=a.dtype)
    sms = cfg.programs or sm_count(a.device)
    tiles = nb * _cdiv(m, bm) * _cdiv(n, bn)
    grid = (min(sms, tiles),)

    def launch() -> torch.Tensor:
        handle = mod.bmm_kernel_persistent[grid](
            a, b, c, nb, m, n, k,
            a.stride(0), a.stride(1), a.stride(2),
            b.stride(0), b.stride(1), b.stride(2),
            c.stride(0), c.stride(1), c.stride(2),
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=gm,
            NUM_SMS=sms, A_LARGE=a.numel() > 2**31, B_LARGE=b.numel() > 2**31,
            C_LARGE=c.numel() > 2**31, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["bmm_kernel_persistent"],
            block_m=bm, block_n=bn, block_k=bk, group_m=gm, num_warps=warps,
            num_stages=stages, programs=grid[0], tiles=tiles,
        )  # fmt: skip
        return c

    return launch
