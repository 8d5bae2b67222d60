"""SGLang's NSA fp8 K-cache dequantization through a flat page table
(python/sglang/srt/layers/attention/nsa/dequant_k_cache.py, v0.5.9:
`_dequantize_k_cache_paged_kernel`), launched as SGLang's `dequantize_k_cache_paged`
launches it, so that its launch choices are knobs.

A 2-D grid of [tokens, 5] programs: each loads its token's slot from the flat page table,
then programs 0 to 3 load one 128-byte e4m3 tile of the slot's 656-byte record and its fp32
scale, multiply in fp32 and store 128 bf16 values; program 4 copies the record's 64 bf16
rotary columns through a 128-wide masked tile.  Every record is read once per gather (a
slot gathered twice is read twice) and the output written once.

SGLang's launch: GROUP_SIZE 128 (the quantization tile: program j reads scale j, so it is no
knob), NUM_NOPE_BLOCKS 4, Triton's default warps and stages (it passes none; no autotune).
Knob: the warps; the kernel has no loop, so the stages are no knob.  SGLang's per-call
output and its views of the records (latent, scales, rotary key) are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT = {"num_warps": 4, "num_stages": 3}
DIM_NOPE, DIM_ROPE, GROUP_SIZE, RECORD = 512, 64, 128, 656


@dataclass(frozen=True)
class NsaDequantConfig:
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(
    cfg: NsaDequantConfig, cache: torch.Tensor, page_table: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_nsa_dequant_k_cache")
    if cache.dtype != torch.float8_e4m3fn or cache.shape[-1] != RECORD:
        raise ValueError("the cache must hold 656-byte float8_e4m3fn records")
    if page_table.dim() != 1:
        raise ValueError("the page table must be flat")
    warps = cfg.num_warps or TRITON_DEFAULT["num_warps"]
    stages = TRITON_DEFAULT["num_stages"]
    flat = cache.view(-1, RECORD)
    tokens = page_table.shape[0]
    tiles = DIM_NOPE // GROUP_SIZE
    nope_q = flat[:, :DIM_NOPE]
    nope_s = flat[:, DIM_NOPE : DIM_NOPE + tiles * 4].view(torch.float32)
    rope = flat[:, DIM_NOPE + tiles * 4 :].view(torch.bfloat16)
    out = torch.empty(tokens, 1, DIM_NOPE + DIM_ROPE, dtype=torch.bfloat16, device=cache.device)
    blocks = -(-(DIM_NOPE + DIM_ROPE) // GROUP_SIZE)  # 5
    grid = (tokens, blocks)

    def launch() -> torch.Tensor:
        handle = mod._dequantize_k_cache_paged_kernel[grid](
            out, nope_q, nope_s, rope, page_table, out.stride(0), nope_q.stride(0),
            nope_s.stride(0), rope.stride(0), NUM_NOPE_BLOCKS=tiles, GROUP_SIZE=GROUP_SIZE,
            DIM_NOPE=DIM_NOPE, DIM_ROPE=DIM_ROPE, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_dequantize_k_cache_paged_kernel"],
            group_size=GROUP_SIZE, num_warps=warps, num_stages=stages,
            programs=tokens * blocks,
        )  # fmt: skip
        return out

    return launch
