"""FlagGems' top-k sparse attention with an attention sink (src/flag_gems/fused/
sparse_attention.py, v5.0.2: `sparse_attn_triton_kernel`), launched as FlagGems'
`sparse_attn_triton` launches it, so that its launch choices are knobs.

One program per (query token, batch row) holds all H heads: it loads the token's [H, D]
query block once, then walks its top-k KV indices BLOCK at a time, gathering those rows of
the batch row's shared [n, D] KV (one latent row serves every head; an index of -1 is
masked to -inf), scores them with one [H, D] x [D, BLOCK] tl.dot, updates an online
softmax per head and accumulates p (cast to bf16) x KV with a second tl.dot into an fp32
[H, D] accumulator; at the end each head's sink logit adds exp(sink - max) to the
denominator, and the normalized [H, D] block is stored in bf16.

FlagGems' launch: BLOCK 64, 8 warps ("matching tilelang"), Triton's default 3 stages (no
num_stages passed).  Knobs: `block` (KV rows per step), `num_warps`, `num_stages`, None
keeping FlagGems'.  H and D are the model's (constexpr tl.arange sizes: powers of two, H at
least 16 for tl.dot).  FlagGems allocates the output per call; here it is made in `prepare`.
The kernel casts p and the output to bf16 by name; under the CPU interpreter only (whose
bf16 tl.dot is wrong, and whose fp32 or fp16 dot refuses a bf16 operand), `tl.bfloat16` is
read as the KV's dtype, so the tests can run it in fp32 and fp16.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_LAUNCH = {"block": 64, "num_warps": 8, "num_stages": 3}  # 3: Triton's default


@dataclass(frozen=True)
class SparseAttnSinkConfig:
    block: int | None = None  # None: FlagGems' 64 (KV rows per step)
    num_warps: int | None = None  # None: FlagGems' 8
    num_stages: int | None = None  # None: Triton's default 3 (FlagGems passes none)


class _BF16AsKVDtype(ast.NodeTransformer):
    """`tl.bfloat16` -> `KV.dtype.element_ty` (interpreter only)."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "tl" and node.attr == "bfloat16":
            kv = ast.Attribute(ast.Name("KV", ast.Load()), "dtype", ast.Load())
            return ast.copy_location(ast.Attribute(kv, "element_ty", ast.Load()), node)
        return self.generic_visit(node)


def _module() -> Any:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten("flaggems_sparse_attn_sink", _BF16AsKVDtype())
    return _common.load_source("flaggems_sparse_attn_sink")


def _pick(cfg: SparseAttnSinkConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_LAUNCH[name]


def prepare(
    cfg: SparseAttnSinkConfig,
    q: torch.Tensor,
    kv: torch.Tensor,
    attn_sink: torch.Tensor,
    topk_idxs: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    mod = _module()
    if q.dim() != 4 or kv.dim() != 3 or topk_idxs.dim() != 3 or attn_sink.dim() != 1:
        raise ValueError("q [b, m, h, d], kv [b, n, d], attn_sink [h], topk_idxs [b, m, topk]")
    b, m, h, d = q.shape
    topk = topk_idxs.shape[-1]
    scale = d**-0.5
    block, warps, stages = (_pick(cfg, n) for n in ("block", "num_warps", "num_stages"))
    o = torch.empty_like(q)
    grid = (m, b)
    kernel = mod.sparse_attn_triton_kernel

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            q, kv, o, attn_sink, topk_idxs,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
            kv.stride(0), kv.stride(1), kv.stride(2),
            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
            topk_idxs.stride(0), topk_idxs.stride(1), topk_idxs.stride(2),
            scale, topk, BLOCK=block, D=d, H=h, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["sparse_attn_triton_kernel"],
            block=block, num_warps=warps, num_stages=stages, programs=m * b,
        )  # fmt: skip
        return o

    return launch
