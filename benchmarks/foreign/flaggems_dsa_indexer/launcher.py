"""FlagGems' DSA lightning indexer logits (src/flag_gems/fused/DSA/indexer_k_tiled.py,
v5.0.2: `triton_lighting_indexer_k_tiled`), launched as FlagGems'
`triton_lighting_indexer_k_tiled_interface` launches it, so that its launch choices are
knobs.

DeepSeek-V3.2's indexer scores every visible key of a ragged prefill batch for each query
token: logits[q, k] = sum_h w[q, h] * relu(q_index[q, h] . k_index[k]) for ks[q] <= k <
ke[q], -inf elsewhere.  The grid is (cdiv(Q, BQ), cdiv(K, TK)): a program takes BQ query
tokens, all H heads ([BQ * H, D], cast to fp16), and the key tile of TK positions that
starts TK * i_k past the earliest window start among its queries; it walks that tile BK
keys at a time with one [BQ * H, D] x [D, BK] tl.dot accumulated in fp16, relu, times the
head weights (fp16), a sum over the H heads (a trans/reshape of the product), and stores
the [BQ, BK] block into the fp32 logits, masked to each query's window.  FlagGems clips a
tile's end at ``bos + (i_k + 1) * TK`` where bos already holds ``i_k * TK``, so tiles past
the first reach up to 2 * TK further and overlap the next tile's keys (the same values
written twice); a program whose tile starts at or past its queries' window ends exits.

FlagGems' launch: BQ 1, BK 64, TK 2048 (literals), under a @triton.autotune over (4 warps,
2 stages) and (8 warps, 4 stages) keyed on Q, K, H, D (dropped by the fetch; `triton_v1`
takes the first).  Knobs: `bq`, `bk`, `tk`, `num_warps`, `num_stages`, None keeping
FlagGems'.  H and D are tl.arange sizes (powers of two; BQ * H at least 16 for tl.dot).
FlagGems fills the logits with -inf per call; the kernel writes only inside the windows, so
here the -inf buffer is made once in `prepare`.  The loop is `range(CK,
warp_specialize=True)`; the CPU interpreter's range takes no keyword, so under the
interpreter only the keyword is dropped.
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
# num_warps / num_stages: the first of FlagGems' two autotune configurations
FLAGGEMS_LAUNCH = {"bq": 1, "bk": 64, "tk": 2048, "num_warps": 4, "num_stages": 2}


@dataclass(frozen=True)
class DsaIndexerConfig:
    bq: int | None = None  # None: FlagGems' 1 (query tokens per program)
    bk: int | None = None  # None: FlagGems' 64 (keys per tl.dot step)
    tk: int | None = None  # None: FlagGems' 2048 (keys per program's tile)
    num_warps: int | None = None  # None: 4 (FlagGems' first autotune config)
    num_stages: int | None = None  # None: 2 (FlagGems' first autotune config)


class _DropWarpSpecialize(ast.NodeTransformer):
    """`range(n, warp_specialize=True)` -> `range(n)` (interpreter only)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "range":
            node.keywords = [k for k in node.keywords if k.arg != "warp_specialize"]
        return node


def _module() -> Any:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten("flaggems_dsa_indexer", _DropWarpSpecialize())
    return _common.load_source("flaggems_dsa_indexer")


def _pick(cfg: DsaIndexerConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_LAUNCH[name]


def prepare(
    cfg: DsaIndexerConfig,
    q: torch.Tensor,
    kv: torch.Tensor,
    weights: torch.Tensor,
    cu_seqlen_ks: torch.Tensor,
    cu_seqlen_ke: torch.Tensor,
) -> Callable[[], torch.Tensor]:
    mod = _module()
    if q.dim() != 3 or kv.dim() != 2 or weights.dim() != 2:
        raise ValueError("q [Q, H, D], kv [K, D], weights [Q, H], cu_seqlen_ks/ke [Q]")
    nq, h, d = q.shape
    k = kv.shape[0]
    cu = cu_seqlen_ks.shape[0]
    if q.stride(0) != h * q.stride(1) or weights.stride(0) != h * weights.stride(1):
        raise ValueError("q's and weights' heads must be flattenable with their tokens")
    bq, bk, tk, warps, stages = (
        _pick(cfg, n) for n in ("bq", "bk", "tk", "num_warps", "num_stages")
    )
    logits = torch.full((nq, k), float("-inf"), device=q.device, dtype=torch.float32)
    grid = (-(-nq // bq), -(-k // tk))
    kernel = mod.triton_lighting_indexer_k_tiled

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            q, kv, cu_seqlen_ks, cu_seqlen_ke, weights, logits,
            q.stride(1), q.stride(2), kv.stride(0), kv.stride(1), weights.stride(1),
            logits.stride(0), logits.stride(1),
            nq, h, k, tk, d, cu, bq, bk, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["triton_lighting_indexer_k_tiled"],
            bq=bq, bk=bk, tk=tk, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return logits

    return launch
