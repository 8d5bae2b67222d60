"""vLLM's combined top-k / top-p filter (vllm/v1/sample/ops/topk_topp_triton.py, v0.34.0:
`_topk_topp_kernel`), launched as vLLM's `apply_top_k_top_p_triton` launches it from the
v1 sampler on a CUDA device when every row has a top-k (no p-only rows, so the split-row
top-p pipeline does not run), so that its launch choices are knobs.

A persistent grid of min(SMs, rows) programs strides over the rows.  Per row (Qrita's
pivot-based truncation): a sample tile's mean and deviation and a sigma table give an
outlier pivot; one pass over the row takes its maximum and minimum and compacts the values
above the pivot into the program's scratch row; a ternary search over the outliers (two
pivots per pass, at most 18 passes) finds the k-th largest value; the softmax of the kept
values is written back to the scratch row and a second search finds the top-p pivot;
a last pass stores the row with -inf below the pivot (ties at it kept in column order).

vLLM's launch on CUDA: BLOCK_SIZE 8192 (the row passes), BLOCK_SIZE_TRUNC 4096 (the passes
over the compacted outliers), 8 warps, Triton's default 3 stages, min(SMs, rows) programs,
SPLIT_COVERS_PONLY set when the batch is at most 64 rows (it only skips p-only rows, of
which these trials have none).  Knobs: both tiles, the programs (the scratch rows follow
them), the warps and the stages, None keeping vLLM's; the launcher refuses a tile of more
than 32 values per thread (vLLM's own 8192 over 8 warps): 64 spill 2.4 KB of stack and took
86 s to compile for sm_90, 16384 over 2 warps 259 s.
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
VLLM_BLOCK = 8192  # block_size on CUDA in _topk_topp
VLLM_BLOCK_TRUNC = 4096  # block_size_trunc on CUDA
VLLM_WARPS = 8  # num_warps on CUDA
TRITON_DEFAULT_STAGES = 3
NUM_SM = 132  # an H100 SXM's or an H200's SMs: vLLM's num_compute_units()
SPLIT_MAX_BATCH = 64  # _SPLIT_MAX_BATCH
MAX_PER_THREAD = 32  # values of a tile per thread: vLLM's 8192 over 8 warps
_TABLES: dict[str, list[float]] = {}


@dataclass(frozen=True)
class TopkToppConfig:
    block_size: int | None = None  # None: vLLM's 8192
    block_size_trunc: int | None = None  # None: vLLM's 4096
    num_programs: int | None = None  # None: min(132 SMs, rows)
    num_warps: int | None = None  # None: vLLM's 8
    num_stages: int | None = None  # None: Triton's default 3


def _kernel_module() -> Any:
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _common.load_source_rewritten(
            "vllm_topk_topp", _common.CastsOfNamesAsIs(("row_id",))
        )
    return _common.load_source("vllm_topk_topp")


def sigma_tables() -> dict[str, list[float]]:
    """vLLM's two module-level sigma tables, read from the fetched module with ast (the
    module itself imports vLLM at import and is never imported)."""
    if not _TABLES:
        tree = ast.parse(_common.source_path("vllm_topk_topp_tables").read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name in ("_PERCENTILE_TO_STD_TABLE", "_NORMAL_CDF_TO_SIGMA_TABLE"):
                    _TABLES[name] = [float(v) for v in ast.literal_eval(node.value)]
    return _TABLES


def prepare(
    cfg: TopkToppConfig, logits: torch.Tensor, k: torch.Tensor, p: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _kernel_module()
    if logits.dtype != torch.float32 or logits.stride(1) != 1:
        raise ValueError("logits must be fp32 with unit column stride (vLLM's sampler copy)")
    rows, vocab = logits.shape
    block = cfg.block_size or VLLM_BLOCK
    trunc = cfg.block_size_trunc or VLLM_BLOCK_TRUNC
    programs = min(cfg.num_programs or NUM_SM, rows)
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    if max(block, trunc) > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"tiles {block} / {trunc} with {warps} warps hold over {MAX_PER_THREAD} values per "
            "thread (vLLM's launch holds 32: 255 registers and a 352-byte stack already; 64 "
            "took 86 s to compile for sm_90 with a 2.4 KB stack)"
        )
    # vLLM caches the scratch rows and the tables per device: made once here
    tables = sigma_tables()
    buffer = logits.new_empty((programs, vocab))
    pct = logits.new_tensor(tables["_PERCENTILE_TO_STD_TABLE"])
    cdf = logits.new_tensor(tables["_NORMAL_CDF_TO_SIGMA_TABLE"])
    k32 = k.to(torch.int32)
    p32 = p.to(torch.float32)
    split_covers_ponly = rows <= SPLIT_MAX_BATCH
    grid = (programs,)

    def launch() -> torch.Tensor:
        handle = mod._topk_topp_kernel[grid](
            logits, logits.stride(0), buffer, pct, cdf, k32, p32, rows,
            VOCAB_SIZE=vocab, MASK_VALUE=float("-inf"), BLOCK_SIZE=block,
            BLOCK_SIZE_TRUNC=trunc, TOPK_ENABLED=True, TOPP_ENABLED=True,
            SPLIT_COVERS_PONLY=split_covers_ponly, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_topk_topp_kernel"],
            block_size=block, block_size_trunc=trunc, num_warps=warps, num_stages=stages,
            programs=programs,
        )  # fmt: skip
        return logits

    return launch
