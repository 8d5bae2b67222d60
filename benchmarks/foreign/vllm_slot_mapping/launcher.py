"""vLLM's KV-cache slot mapping (vllm/v1/worker/gpu/block_table.py, v0.34.0:
`_compute_slot_mappings_kernel`), launched as vLLM's `BlockTables.compute_slot_mappings`
launches it, so that its launch choices are knobs.

The grid is (KV-cache groups, requests + 1).  Program (g, b) of a real request reads its
request-state row (`idx_mapping`), its token range (`query_start_loc`) and, through the
group's block-table pointer (a uint64 read and cast by vLLM's `_load_ptr`), walks its tokens
TRITON_BLOCK_SIZE at a time: each token's position gives its block-table entry (position //
block size, a gathered int32) and its slot, block * block size + position % block size,
stored as int64 into the group's row of the persistent [groups, max_num_batched_tokens]
slot mapping.  The last program of each group stores -1 (PAD_SLOT_ID) from the batch's
token count to the buffer's end, TRITON_BLOCK_SIZE at a time (for CUDA graphs).  No
context parallelism (CP_SIZE 1, vLLM's default), every group's mapping enabled.

vLLM's launch: TRITON_BLOCK_SIZE = 1024, Triton's default warps (4) and stages (3), no
autotuning.  Knobs: the block, the warps and the stages, None keeping that choice.  The
block tables' pointer, stride and block-size tensors and the enabled and sharded flags are
made once by vLLM's `BlockTables` (here in `prepare`), and so is the persistent slot
mapping, which the kernel overwrites whole: the timed call is the kernel alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_BLOCK_SIZE = 1024  # compute_slot_mappings' fixed block
PAD_SLOT_ID = -1  # vllm.v1.attention.backends.utils.PAD_SLOT_ID
KV_BLOCK_SIZE = 16  # tokens per KV-cache block (vLLM's default --block-size)


@dataclass(frozen=True)
class SlotMappingConfig:
    block_size: int | None = None  # None: vLLM's TRITON_BLOCK_SIZE, 1024 tokens per step
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def prepare(
    cfg: SlotMappingConfig,
    idx_mapping: torch.Tensor,
    query_start_loc: torch.Tensor,
    positions: torch.Tensor,
    block_tables: torch.Tensor,
    max_tokens: int,
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_slot_mapping")
    helper = _common.load_source("vllm_load_ptr")
    # The extracted kernel calls _load_ptr (buffer_utils.py) by global name.
    mod._load_ptr = helper._load_ptr
    if block_tables.dim() != 3 or block_tables.dtype != torch.int32:
        raise ValueError("block_tables must be int32 [groups, max_num_reqs, max_num_blocks]")
    if not block_tables.is_contiguous() or block_tables[0].data_ptr() % 16:
        raise ValueError("block_tables must be contiguous, each group's table 16-byte aligned")
    groups = block_tables.shape[0]
    reqs = idx_mapping.shape[0]
    if query_start_loc.shape != (reqs + 1,) or positions.dim() != 1:
        raise ValueError("query_start_loc must be [reqs + 1] and positions 1-D")
    dev = block_tables.device
    tables = [block_tables[g] for g in range(groups)]
    if any(t.data_ptr() % 16 for t in tables):
        raise ValueError("each group's block table must be 16-byte aligned (_load_ptr says so)")
    # BlockTables.init_block_table_layout_tensors, once per model runner
    table_ptrs = torch.tensor([t.data_ptr() for t in tables], dtype=torch.uint64, device=dev)
    table_strides = torch.tensor([t.stride(0) for t in tables], dtype=torch.int64, device=dev)
    block_sizes = torch.full((groups,), KV_BLOCK_SIZE, dtype=torch.int32, device=dev)
    enabled = torch.ones(groups, dtype=torch.bool, device=dev)
    sharded = torch.ones(groups, dtype=torch.bool, device=dev)
    # BlockTables.slot_mappings, persistent: [groups, max_num_batched_tokens]
    slot_mappings = torch.zeros(groups, max_tokens, dtype=torch.int64, device=dev)
    block = cfg.block_size or TRITON_BLOCK_SIZE
    warps = cfg.num_warps or 4
    stages = cfg.num_stages or 3
    grid = (groups, reqs + 1)

    def launch() -> torch.Tensor:
        handle = mod._compute_slot_mappings_kernel[grid](
            slot_mappings.shape[1], idx_mapping, query_start_loc, positions, table_ptrs,
            table_strides, block_sizes, enabled, sharded, slot_mappings,
            slot_mappings.stride(0), 0, CP_SIZE=1, CP_INTERLEAVE=1, PAD_ID=PAD_SLOT_ID,
            TRITON_BLOCK_SIZE=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_compute_slot_mappings_kernel"],
            block_size=block, num_warps=warps, num_stages=stages, programs=groups * (reqs + 1),
        )  # fmt: skip
        return slot_mappings

    return launch
