"""MiniMax M3's prefill index top-k in vLLM (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_block_topk` and never committed.

Why this one as the set's streaming top-k: MiniMax M3's block-sparse attention layers pick,
for every prefill query token, the 16 128-token KV blocks it attends to (the token's own
block forced in: init_blocks 0, local_blocks 1), from the per-block scores the lightning
indexer just wrote.  `minimax_m3_index_topk` launches `_topk_index_kernel` once a layer:
one program per (token, request, head) walks the token's causal prefix of block scores in
2048-block steps, bitonic-sorts each step in registers and merges it with the running best
half, so the work per program grows with the token's position (a triangular grid, most
programs one step at 32K context) and the reads are one fp32 score row per token.  Both
trials are MiniMax M3's indexer (16 blocks of 128, 4 score heads on the rank): a 32K-context
chunked prefill (4 requests each adding a 2,048-token chunk after 30,720 context tokens:
8,192 tokens, 241-256 causal blocks each, 32 MiB of scores read) and a short one (2
requests of 256 tokens after 3,840: 31-32 blocks each).  Sorting-network-bound in registers
at the large shape (a 2048-lane bitonic sort for 241 live scores), launch-bound at the
small one; the floor is reading each token's causal scores once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_block_topk")

CONTEXTS = ("reduction", "memory-bound")
SPARSE_BLOCK = 128


def causal_blocks(d: Mapping[str, int]) -> int:
    """Causal block scores of one request's chunk, summed over its tokens: token j sees
    (prefix + j) // 128 + 1 blocks."""
    return sum((d["prefix"] + j) // SPARSE_BLOCK + 1 for j in range(d["q_len"]))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each token's causal fp32 block scores read once per head, the int32 top-k written
    (the dtype plays no part: the indexer's scores are fp32; the small int32 offsets are
    not counted)."""
    del dtype
    reads = d["heads"] * d["reqs"] * causal_blocks(d) * 4
    return reads + d["heads"] * d["reqs"] * d["q_len"] * d["topk"] * 4


def flops(d: Mapping[str, int]) -> int:
    """None counted: compares and swaps only."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "vllm_block_topk", "heads", "reqs", "q_len", "prefix", "topk"
)
_reference = _common.forward_reference("vllm_block_topk")
_baselines = _common.forward_baselines(
    "vllm_block_topk",
    (
        "torch",
        "torch",
        "the same by torch ops: a per-request mask of the forced and causal blocks, one "
        "torch.topk over the score row",
        "torch_topk",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_block_topk.launcher")


TRITON_KNOBS = (
    Knob("block_k", "int", (None, 32, 64, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "block scores per loop step, each step bitonic-sorted and merged with the running "
         "best half (must exceed next_power_of_2(topk)); None: the first autotune "
         "config's 2048"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: the first autotune config's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the step loop's score loads; None: the first "
         "autotune config's 2 (all six configs use 2)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_block_topk",
    description=(
        "MiniMax M3's prefill index top-k in vLLM (v0.34.0, _topk_index_kernel): one "
        "program per query token, request and head walks the token's causal block scores "
        "in 2048-block steps, bitonic-sorts each and merges it with the running best half, "
        "the local block forced in, and writes the top-16 block ids"
    ),
    dims=(
        Dim("heads", "index score heads on this rank"),
        Dim("reqs", "prefill requests in the batch", "batch"),
        Dim("q_len", "new tokens of each request's chunk"),
        Dim("prefix", "context tokens before each request's chunk"),
        Dim("topk", "KV blocks kept per token"),
    ),
    trials=(
        Trial(
            "prefill_2x256_ctx4k_minimax_m3",
            {"heads": 4, "reqs": 2, "q_len": 256, "prefix": 3840, "topk": 16},
            "a short chunked prefill of MiniMax M3's indexer: 2 requests of 256 tokens "
            "after 3,840 context tokens (31-32 causal 128-token blocks each, one masked "
            "step), 4 heads, top-16: 2,048 programs",
        ),
        Trial(
            "prefill_4x2048_ctx32k_minimax_m3",
            {"heads": 4, "reqs": 4, "q_len": 2048, "prefix": 30720, "topk": 16},
            "a 32K-context chunked prefill of the same: 4 requests each adding 2,048 "
            "tokens after 30,720 (241-256 causal blocks each), 4 heads, top-16: 32,768 "
            "programs of one 2048-block step, 32 MiB of scores read",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    # block_k steps along a token's causal block scores, the last token's the longest row
    shape_metrics=lambda d: {"row_len": (d["prefix"] + d["q_len"] - 1) // SPARSE_BLOCK + 1},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # int32 block ids, checked exactly (one id off is ~1e-4 of the norm)
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="index_topk",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
