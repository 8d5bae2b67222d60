"""SGLang's fused MoE router, tensor-core kernel (python/sglang/srt/layers/moe/router.py,
v0.5.9: `fused_moe_router_tensorcore_kernel`), launched as SGLang's `fused_moe_router_shim`
launches it for Grok, so that its launch choices are knobs.

One program per BLOCK_SIZE_M tokens (a 1-D grid; BLOCK_SIZE_N covers every expert, so the
grid has one column).  It walks the hidden size in BLOCK_SIZE_K steps, loading a token tile
in the activations' dtype and an expert tile of the fp32 router weight, both cast to fp32,
and accumulates their product with `tl.dot` (TF32 on sm_90) into a BLOCK_M x BLOCK_N fp32
tile of router logits.  Then, per token: Grok's logit soft-capping (cap * tanh(l / cap),
tanh written with one exp), the top-1 expert and 1 / sum(exp(l - max)) as its weight, the
top-2 expert and its softmax probability, stored as fp32 weights and int32 ids.

SGLang's launch (`fused_moe_router_shim`, taken when the batch has 512 tokens or more or
there are more than 8 experts, and the hidden size is a multiple of BLOCK_SIZE_K): 32
tokens per program, max(experts, 16) expert columns, 256-deep K steps (64 from 256 experts
up), Triton's default 4 warps and 3 stages (SGLang passes none), no correction bias, and
the DP-attention NaN workaround off (no DP attention).  Knobs: the three tiles, the warps
and the stages, None keeping SGLang's; the launcher refuses an expert tile below the
expert count and a K step that does not divide the hidden size (the kernel has no K mask).
SGLang allocates the two outputs per call; here they are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOFTCAP = 30.0  # Grok's router_logit_softcapping
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class MoeRouterConfig:
    block_m: int | None = None  # None: SGLang's 32 tokens per program
    block_n: int | None = None  # None: SGLang's max(experts, 16)
    block_k: int | None = None  # None: SGLang's 256 (64 from 256 experts up)
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3 (SGLang passes none)


def prepare(
    cfg: MoeRouterConfig, x: torch.Tensor, router_weight: torch.Tensor, topk: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("sglang_moe_router")
    if x.dim() != 2 or router_weight.dim() != 2 or x.shape[1] != router_weight.shape[1]:
        raise ValueError("x must be [tokens, hidden] and router_weight [experts, hidden]")
    if not (x.is_contiguous() and router_weight.is_contiguous()):
        raise ValueError("x and router_weight must be contiguous")
    if topk not in (1, 2):
        raise ValueError("the tensor-core router supports top-1 and top-2 only")
    bs, hidden = x.shape
    experts = router_weight.shape[0]
    block_m = cfg.block_m or 32
    block_n = cfg.block_n or max(experts, 16)
    block_k = cfg.block_k or (256 if experts < 256 else 64)
    if block_n < experts:
        raise ValueError(f"block_n {block_n} is below the {experts} experts (one N tile)")
    if hidden % block_k:
        raise ValueError(f"block_k {block_k} does not divide the hidden size {hidden}")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    topk_weights = torch.empty((bs, topk), dtype=torch.float32, device=x.device)
    topk_ids = torch.empty((bs, topk), dtype=torch.int32, device=x.device)
    grid = (triton.cdiv(bs, block_m) * triton.cdiv(experts, block_n),)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.fused_moe_router_tensorcore_kernel[grid](
            a_ptr=x, b_ptr=router_weight, topk_weights_ptr=topk_weights,
            topk_ids_ptr=topk_ids, bs=bs, num_experts=experts, topk=topk,
            moe_softcapping=SOFTCAP, moe_renormalize=False, K=hidden,
            correction_bias_ptr=None, is_correction_bias=False, BLOCK_SIZE_M=block_m,
            BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=block_k, stride_am=hidden, stride_bn=hidden,
            dp_attn_workaround_flag=False, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["fused_moe_router_tensorcore_kernel"],
            block_m=block_m, block_n=block_n, block_k=block_k, num_warps=warps,
            num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return topk_weights, topk_ids

    return launch
