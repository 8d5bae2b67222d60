"""vLLM's multi-LoRA expand (vllm/lora/ops/triton_ops/lora_expand_op.py and kernel_utils.py,
v0.34.0: `_lora_expand_kernel` with its `do_expand_kernel` and `mm_k`), launched as vLLM's
`_lora_expand` launches it on Hopper (no tuned table, no programmatic dependent launch) so
that its launch choices are knobs.

The second half of every LoRA-wrapped linear layer of a multi-adapter server (Punica's SGMV
expand, `PunicaWrapperGPU.add_lora_linear` with `add_inputs=True`): for each token and each
output slice of the layer (q, k and v of a fused QKV projection), the shrink's fp32 rank-wide
row times the B matrix of that token's adapter, a rank -> width projection added in place to
the base layer's output.  The tokens are grouped by adapter once per step (vLLM's
`LoRAKernelMeta.prepare_tensors`, the same metadata the shrink reads); one program per
(BLOCK_M tokens of one adapter, BLOCK_N output columns), per slice and per adapter slot
gathers its tokens' rows of the buffer, loops over the rank in BLOCK_K-deep steps (each
loading the adapter's [BLOCK_K, BLOCK_N] B tile and the [BLOCK_M, BLOCK_K] rows, cast from
fp32 to the weights' dtype, into one tl.dot; a rank that BLOCK_K does not divide takes the
masked path), rounds the fp32 sum to the dtype, loads the base tile, adds and stores it.
Programs of an adapter slot with no adapter, past their adapter's tokens or past their
slice's width (the grid is sized by the widest slice) exit at once; a slice's columns are
taken modulo its width, so a partial column tile loads wrapped-around B columns and masks
their stores.  The grid's last axis is max_loras + 1 adapter slots (vLLM's launch shape
unless `specialize_active_lora` is set).  Slices of unequal widths (a GQA QKV) pass
per-slice strides and widths as int64 tables (SAME_STRIDE off); more than one slice passes
the slices' weight pointers and column offsets as uint64 tables (`_get_lora_b_ptr`, cached
by vLLM across steps).

vLLM's choice without a tuned table (`get_lora_op_configs("expand", ...)`, the default):
BLOCK_M 64, BLOCK_N 64 with several slices (128 with one), BLOCK_K 32, 4 warps, 2 stages,
and on SM90 1 stage whenever the buffer is fp32 and the weights 16-bit (CAST_TYPE; vLLM's
workaround for ptxas miscompiling a pipelined wgmma with a register A operand), which is
always the case in serving.  Knobs: the three tile sizes, the warps and the stages, None
keeping vLLM's.  fp32 weights (which vLLM refuses) are accepted for the CPU tests: no cast,
2 stages.  The adapter grouping, the pointer and stride tables happen in `prepare`; the
base output is updated in place (restored between timed calls by the harness).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.vllm_lora_expand.reference import slice_widths, split_weights
from foreign.vllm_lora_shrink.launcher import kernel_meta, live_programs

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_M = 64
VLLM_BLOCK_N_SLICES = 64  # several slices
VLLM_BLOCK_N_ONE = 128  # one slice
VLLM_BLOCK_K = 32
VLLM_WARPS = 4
VLLM_STAGES = 2
VLLM_SM90_CAST_STAGES = 1  # fp32 buffer, 16-bit weights on SM90 (triton-lang/triton#9433)


@dataclass(frozen=True)
class LoraExpandConfig:
    block_m: int | None = None  # None: vLLM's 64
    block_n: int | None = None  # None: vLLM's 64 (several slices) or 128 (one)
    block_k: int | None = None  # None: vLLM's 32
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 1 on SM90 with a cast, else 2


def vllm_default_config(slices: int, cast_type: bool) -> dict[str, int]:
    """vLLM's default expand configuration on Hopper (lora/ops/triton_ops/utils.py, no tuned
    table; the SM90 stage override of lora_expand_op.py)."""
    return {
        "block_m": VLLM_BLOCK_M,
        "block_n": VLLM_BLOCK_N_SLICES if slices > 1 else VLLM_BLOCK_N_ONE,
        "block_k": VLLM_BLOCK_K,
        "num_warps": VLLM_WARPS,
        "num_stages": VLLM_SM90_CAST_STAGES if cast_type else VLLM_STAGES,
    }


def prepare(
    cfg: LoraExpandConfig, x: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor,
    mapping: torch.Tensor, first_out: int, other_out: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    expand = _common.load_source("vllm_lora_expand")
    utils = _common.load_source("vllm_lora_expand_utils")
    # The extracted expand kernel calls do_expand_kernel (and it mm_k) by global name.
    expand.do_expand_kernel = utils.do_expand_kernel
    if x.dim() != 3 or x.dtype != torch.float32 or not x.is_contiguous():
        raise ValueError("x must be the shrink's contiguous fp32 [slices, tokens, rank] buffer")
    slices, tokens, rank = x.shape
    widths = slice_widths(slices, first_out, other_out)
    if lora_b.dim() != 1 or lora_b.numel() % (sum(widths) * rank):
        raise ValueError("lora_b must pack the slices' [loras, width, rank] blocks")
    if base.shape != (tokens, sum(widths)) or not base.is_contiguous():
        raise ValueError("base must be the contiguous [tokens, sum of widths] output")
    if mapping.shape != (tokens,) or base.dtype != lora_b.dtype:
        raise ValueError("mapping must be [tokens], base in the weights' dtype")
    loras = lora_b.numel() // (sum(widths) * rank)
    weights = split_weights(lora_b, loras, rank, widths)
    order, lora_ids, per_lora, start = kernel_meta(mapping, loras)
    cast_type = lora_b.dtype in (torch.float16, torch.bfloat16)
    c = {
        **vllm_default_config(slices, cast_type),
        **{k: v for k, v in vars(cfg).items() if v is not None},
    }
    # `_get_lora_b_ptr`: scalars when every slice has the same shape, else int64 tables;
    # the weight pointers and the slices' first columns as uint64 tables past one slice
    dev = x.device
    same = len(set(widths)) == 1
    if slices > 1:
        ptrs: Any = torch.tensor([w.data_ptr() for w in weights], dtype=torch.uint64, device=dev)
        offs = [sum(widths[:j]) for j in range(slices)]
        starts: Any = torch.tensor(offs, dtype=torch.uint64, device=dev)
    else:
        ptrs, starts = weights[0], 0
    d0: Any
    d1: Any
    d2: Any
    if same:
        d0, d1, d2 = weights[0].stride()
        hs: Any = widths[0]
    else:
        d0, d1, d2 = (
            torch.tensor([w.stride(i) for w in weights], dtype=torch.int64, device=dev)
            for i in range(3)
        )
        hs = torch.tensor(widths, dtype=torch.int64, device=dev)
    max_n = max(widths)
    even_k = rank % c["block_k"] == 0
    grid = (triton.cdiv(tokens, c["block_m"]) * triton.cdiv(max_n, c["block_n"]), slices, loras + 1)
    programs = grid[0] * grid[1] * grid[2]
    live = live_programs(mapping, c["block_m"], [triton.cdiv(w, c["block_n"]) for w in widths])

    def launch() -> torch.Tensor:
        handle = expand._lora_expand_kernel[grid](
            x, ptrs, base, tokens, max_n, rank, order, per_lora, start, lora_ids, starts,
            x.stride(0), x.stride(1), x.stride(2), d0, d1, d2, base.stride(0), base.stride(1),
            hs, c["block_m"], c["block_n"], c["block_k"], even_k, True, cast_type, slices,
            same, False,
            num_warps=c["num_warps"], num_stages=c["num_stages"], launch_pdl=False,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_lora_expand_kernel"], **c,
            even_k=even_k, cast_type=cast_type, same_stride=same,
            programs=programs, metrics={"live_program_fraction": live / programs},
        )  # fmt: skip
        return base

    return launch
