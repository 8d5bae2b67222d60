"""DSpark's precomputed Gumbel noise (vllm/models/kimi_k3/nvidia/specialized_decode/
drafter/markov.py, v0.34.0: `_markov_noise_kernel` with its `_gumbel_log_arg32` helper),
launched as vLLM's `FusedMarkov.fork_noise` launches it, so that its launch choices are
knobs.

Kimi K3's DSpark speculator samples its draft tokens step by step through a Markov bias;
when a batch samples at most 32 rows (requests x draft steps), the fp32 Gumbel noise of all
the steps is computed ahead on a side stream, beside the lm_head, up to its last log: one
program per (NOISE_BLOCK token ids, row x step) loads its row's request slot and sampled
position, mixes the step into the slot's seed, hashes (seed, position + salt, token id)
with MurmurHash3 into a uniform u and stores -log1p(-u) (an 8-term series below 1/4, a log
above) for the step kernels to read.  No input read per element: integer hashing and a
polynomial or a log per value, one fp32 store.

vLLM's launch: 1024-token blocks (NOISE_BLOCK), 4 warps, Triton's default 3 stages (the
kernel has no loop).  Knobs: the block, the warps and the stages, None keeping vLLM's.  The
hash helpers (`murmur3_uniform32`, `_log1p_neg_stable`, `spec_step_seed`) come from the
fetched gumbel.py (vllm_gumbel_sample), whose module the extracted kernel imports them from
upstream.  vLLM slices the noise from a [32 x vocab] scratch allocated once; here the
[reqs, steps, vocab] output is allocated in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 1024  # NOISE_BLOCK
VLLM_WARPS = 4
TRITON_DEFAULT_STAGES = 3
DRAFT_NOISE_SALT = 1 << 30  # _DRAFT_NOISE_SALT


@dataclass(frozen=True)
class MarkovNoiseConfig:
    block_size: int | None = None  # None: vLLM's 1024 (NOISE_BLOCK)
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: Triton's default 3 (vLLM passes none)


def _module() -> Any:
    mod = _common.load_source("vllm_markov_noise")
    gumbel = _common.load_source("vllm_gumbel_sample")
    # The extracted kernel and helper call these gumbel.py helpers by global name.
    mod.murmur3_uniform32 = gumbel.murmur3_uniform32
    mod._log1p_neg_stable = gumbel._log1p_neg_stable
    mod.spec_step_seed = gumbel.spec_step_seed
    return mod


def prepare(
    cfg: MarkovNoiseConfig, idx_map: torch.Tensor, pos: torch.Tensor, seeds: torch.Tensor,
    vocab: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _module()
    if idx_map.dim() != 2 or pos.shape != idx_map.shape:
        raise ValueError("idx_map and pos are [reqs, steps]")
    reqs, steps = idx_map.shape
    block = cfg.block_size or VLLM_BLOCK
    warps = cfg.num_warps or VLLM_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    noise = torch.empty(reqs, steps, vocab, dtype=torch.float32, device=idx_map.device)
    grid = (triton.cdiv(vocab, block), reqs * steps)

    def launch() -> torch.Tensor:
        handle = mod._markov_noise_kernel[grid](
            noise, noise.stride(0), noise.stride(1),
            idx_map, idx_map.stride(0), pos, pos.stride(0), seeds, vocab,
            K=steps, BLOCK=block, SALT=DRAFT_NOISE_SALT, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_markov_noise_kernel"],
            block_size=block, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return noise

    return launch
