"""The share of vLLM's LoRA programs that find work, as the launchers record it: the grid
gives every adapter slot every token block and the widest slice's column blocks; only an
adapter's own token blocks over each slice's own column blocks work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from foreign import _common
from foreign.vllm_lora_expand import launcher as expand
from foreign.vllm_lora_expand.reference import make_inputs, slice_widths
from foreign.vllm_lora_shrink import launcher as shrink


def test_live_programs_count_each_adapters_own_token_blocks():
    mapping = torch.tensor([0] * 5 + [2] * 17 + [-1] * 3, dtype=torch.int32)
    # adapter 0: one 8-token block, adapter 2: three; no-adapter tokens never work
    assert shrink.live_programs(mapping, 8, [2, 1, 1]) == (1 + 3) * 4


def test_the_prefill_trials_share_is_the_specs_count():
    """Llama-3.1-8B's QKV, 8 adapters of 1024 tokens, vLLM's 64 x 64 tiles: 12,288 of
    221,184 programs (the counts the trial's description gives)."""
    mapping = (torch.arange(8192) % 8).to(torch.int32)
    widths = slice_widths(3, 4096, 1024)
    live = shrink.live_programs(mapping, 64, [triton.cdiv(w, 64) for w in widths])
    grid = triton.cdiv(8192, 64) * triton.cdiv(max(widths), 64) * 3 * (8 + 1)
    assert (live, grid) == (12288, 221184)


@pytest.mark.parametrize("block_m,block_n", [(8, 16), (64, 64)])
def test_the_expand_launch_records_its_share(block_m, block_n):
    if _common.missing_sources("vllm_lora_expand"):
        pytest.skip("third_party/ lacks vLLM's LoRA expand (scripts/fetch_third_party.py)")
    x, lora_b, base, mapping, first, other = make_inputs(
        37, 3, 16, 3, 40, 24, dtype=torch.float16, device="cpu", seed=1
    )
    cfg = expand.LoraExpandConfig(block_m=block_m, block_n=block_n, block_k=16, num_warps=2)
    expand.prepare(cfg, x, lora_b, base, mapping, first, other)()
    info = expand.LAST_INFO
    # 13, 12 and 12 tokens; slices of 40, 24 and 24 columns
    live = sum(-(-n // block_m) for n in (13, 12, 12)) * sum(-(-w // block_n) for w in (40, 24, 24))
    assert info["metrics"]["live_program_fraction"] == pytest.approx(live / info["programs"])
    assert info["programs"] == -(-37 // block_m) * -(-40 // block_n) * 3 * 4


def test_silu_quant_programs_past_their_experts_rows_do_not_count():
    from foreign.vllm_silu_mul_colmajor_quant import launcher as silu

    # segments at 0 (20 rows), 128 (none), 128 (3 rows): 8-row programs, 4 per expert
    assert silu.live_programs([20, 128, 131], 128, 8, 4) == 3 + 0 + 1
    # a segment longer than the grid's row programs: they loop, all of them work
    assert silu.live_programs([100], 128, 8, 4) == 4


def test_the_silu_quant_decode_trial_is_almost_all_idle():
    """The 64-sequence decode step: 512 rows over 256 experts, one live row program per
    expert with rows, of 16 (vLLM's grid)."""
    if _common.missing_sources("vllm_silu_mul_colmajor_quant"):  # the spec loads it
        pytest.skip("third_party/ lacks vLLM's SiLU-mul quant (scripts/fetch_third_party.py)")
    from foreign.vllm_silu_mul_colmajor_quant import launcher as silu
    from foreign.vllm_silu_mul_colmajor_quant import spec as silu_spec

    counts = silu_spec.expert_counts(64, 8, 256, 256)
    starts = silu_spec.segment_starts(counts, 128)
    ends = [s + c for s, c in zip(starts, counts, strict=True)]
    grid = silu.vllm_grid(silu_spec.m_sum(64, 8, 256, 128), 2, 256, 8, 8192)
    live = silu.live_programs(ends, 128, 8, grid[0]) * grid[1]
    assert grid == (16, 2, 256)
    assert live == 2 * sum(1 for c in counts if c) == 440  # 36 of the 256 experts empty
