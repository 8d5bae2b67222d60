"""SGLang's KV index gather (python/sglang/srt/layers/attention/utils.py, v0.5.9:
`create_flashinfer_kv_indices_triton`), launched as SGLang's FlashInfer attention backend
launches it (an int32 list; the Triton backend asks for int64), so that its launch choices
are knobs.

Before every decode step (and every extend, over the cached prefixes) SGLang's Triton and
FlashInfer attention backends flatten the batch's KV cache slots into one list: for
request b, the first seq_lens[b] entries of its row of the req_to_token pool, written at
kv_indptr[b].  One program per request loads its pool row index, offset and length, then
copies its slots in 512-wide masked steps (BLOCK_SIZE = 512 is a constant inside the
kernel, not a parameter).  SGLang's launch: a (batch,) grid, no kv_start_idx (None: no
sliding window), the pool's row stride as a constexpr, Triton's default 4 warps and 3
stages.  Knobs: `num_warps`, `num_stages` (the copy loop can be pipelined), None keeping
Triton's defaults.

SGLang's FlashInfer backend allocates kv_indices per step (or writes a CUDA-graph buffer);
here it is allocated in `prepare`, outside the timed call, at its exact size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
BLOCK_SIZE = 512  # inside the kernel, for the record only


@dataclass(frozen=True)
class KvIndicesConfig:
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def prepare(
    cfg: KvIndicesConfig, req_to_token: torch.Tensor, req_pool_indices: torch.Tensor,
    seq_lens: torch.Tensor, kv_indptr: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_kv_indices")
    if req_to_token.dim() != 2 or req_to_token.stride(1) != 1:
        raise ValueError("req_to_token must be a row-major [pool rows, max_context] table")
    batch = req_pool_indices.shape[0]
    if seq_lens.shape != (batch,) or kv_indptr.shape != (batch + 1,):
        raise ValueError("seq_lens must be [batch] and kv_indptr [batch + 1]")
    total = int(kv_indptr[-1])
    out = torch.empty(total, device=req_to_token.device, dtype=torch.int32)
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    stride = req_to_token.stride(0)

    def launch() -> torch.Tensor:
        handle = mod.create_flashinfer_kv_indices_triton[(batch,)](
            req_to_token, req_pool_indices, seq_lens, kv_indptr, None, out, stride,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["create_flashinfer_kv_indices_triton"],
            block_size=BLOCK_SIZE, num_warps=warps, num_stages=stages, programs=batch,
        )  # fmt: skip
        return out

    return launch
