"""vLLM's one-shot fused MoE-LoRA (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_moe_lora` and never committed.

Why this one as the set's two-GEMM chain over routed experts: a vLLM server with LoRA
adapters on a MoE model adds each adapter's per-expert low-rank delta to every MoE layer's
gate/up intermediate, and since v0.34 a batch of more than 64 tokens does it in one launch
(shrink and expand fused, the rank-wide intermediate never leaving registers).  The
(token, expert) pairs of each adapter arrive grouped by expert and padded to BLOCK_M; a
program gathers its block's hidden rows, multiplies them by its expert's A matrix (hidden
-> rank, rank padded to 16) in BLOCK_K-deep tl.dot steps, rounds the [BLOCK_M, 16] tile to
the dtype, and multiplies it by B (rank -> n) one BLOCK_N tile at a time, each tile added
into its pairs' rows of the base intermediate in place.  Two GEMMs of very different
shape back to back: the shrink's depth is the hidden size, the expand's depth only the
rank, so the expand is a read-modify-write of the output paced by memory.  The large trial
is a 4096-token prefill chunk of Qwen3-30B-A3B (hidden 2048, 128 experts of 768, top-8)
with 4 rank-16 adapters: 3,064 programs, 4.7 GFLOP, 310 MB moved; the small one a
128-sequence decode step of OLMoE-1B-7B (hidden 2048, 64 experts of 1024, top-8) with 4
rank-8 adapters: 632 programs, 81 MFLOP, 34 MB moved.  The floor is the larger of reading
the hidden states, the adapters' A and B matrices and the base intermediate once and
writing the intermediate once, and the two products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_moe_lora")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("grouped-gemm", "gemm", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The hidden states once, every adapter's A and B of every expert and slice once
    (the trials' batches reach nearly all of them), the base intermediate read and written
    once, the int32 router ids, adapter map and aligned pair ids once."""
    es = ELEMENT_SIZE[dtype]
    pairs = d["tokens"] * d["top_k"]
    weights = d["slices"] * d["loras"] * d["experts"] * d["rank"] * (d["hidden"] + d["n"])
    return (
        es * d["tokens"] * d["hidden"]
        + es * weights
        + 2 * es * pairs * d["slices"] * d["n"]
        + 4 * (2 * pairs + d["tokens"])
    )


def flops(d: Mapping[str, int]) -> int:
    """Shrink (hidden -> rank) and expand (rank -> n) per pair and slice, for the pairs of
    tokens with an adapter: loras of every loras + 1 tokens on average (the inputs give the
    rest none)."""
    pairs = d["tokens"] * d["top_k"] * d["loras"] // (d["loras"] + 1)
    return 2 * pairs * d["slices"] * d["rank"] * (d["hidden"] + d["n"])


_make_inputs = _common.forward_make_inputs(
    "vllm_moe_lora", "tokens", "hidden", "n", "experts", "top_k", "rank", "loras", "slices"
)
_reference = _common.forward_reference("vllm_moe_lora")
_baselines = _common.forward_baselines(
    "vllm_moe_lora",
    (
        "torch",
        "torch",
        "the same by torch in the dtype: pairs grouped by (adapter, expert), per group and "
        "slice a shrink and an expand matmul, index_add_ into a copy of the base",
        "torch_moe_lora",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_moe_lora.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "(token, expert) pairs per program, also the alignment's padding of each expert's "
         "group; None: the fused-MoE default heuristic's (16 / 32 / 64 / 128 by tokens)"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns per expand step; None: vLLM's 128"),
    Knob("block_k", "int", (None, 16, 32, 64, 128, 256), "tile_k",
         "hidden-size depth of one shrink tl.dot step; None: vLLM's 128 (hidden >= 256)"),
    Knob("npid", "int", (None, 1, 2, 4, 8, 16), "splits",
         "programs sharing a block's n columns, each redoing the shrink; None: vLLM's "
         "occupancy heuristic over the SM count (1 when the grid has 1.5 programs per SM)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4 (8 when NPID > 1)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the shrink's hidden-size loop; None: vLLM's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_moe_lora",
    description=(
        "vLLM's one-shot fused MoE-LoRA (v0.34.0, _fused_moe_lora_one_shot_kernel) on a MoE "
        "layer's gate/up: per adapter, expert-grouped blocks of (token, expert) pairs, the "
        "gathered hidden rows times the expert's A (hidden -> rank) in registers, then "
        "times its B (rank -> n) in BLOCK_N tiles added in place into the base intermediate"
    ),
    dims=(
        Dim("tokens", "tokens in the step (decode: one per sequence)", "rows"),
        Dim("hidden", "the model's hidden size (the shrink's depth)"),
        Dim("n", "the MoE intermediate size (columns of each slice)"),
        Dim("experts", "routed experts on this rank"),
        Dim("top_k", "experts per token"),
        Dim("rank", "LoRA rank (the expand's depth, padded to >= 16)"),
        Dim("loras", "adapter slots loaded and active (max_loras)"),
        Dim("slices", "slices of the projection (w13: gate and up, 2)"),
    ),
    trials=(
        Trial(
            "decode128_olmoe_1b_7b_w13",
            {
                "tokens": 128,
                "hidden": 2048,
                "n": 1024,
                "experts": 64,
                "top_k": 8,
                "rank": 8,
                "loras": 4,
                "slices": 2,
            },
            "a 128-sequence decode step through a MoE layer of OLMoE-1B-7B (64 experts of "
            "1024, top-8) with 4 rank-8 adapters: 79 blocks of 64 pairs x 2 slices x 4 "
            "adapters = 632 programs, 81 MFLOP, 34 MB moved (bf16)",
        ),
        Trial(
            "prefill4k_qwen3_30b_a3b_w13",
            {
                "tokens": 4096,
                "hidden": 2048,
                "n": 768,
                "experts": 128,
                "top_k": 8,
                "rank": 16,
                "loras": 4,
                "slices": 2,
            },
            "a 4096-token prefill chunk through a MoE layer of Qwen3-30B-A3B (128 experts of "
            "768, top-8) with 4 rank-16 adapters: 383 blocks of 128 pairs x 2 slices x 4 "
            "adapters = 3,064 programs, 4.7 GFLOP, 310 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation of the same rounded inputs, the rank tile rounded to the dtype as
    # in the reference (an accumulation-order difference can flip one rounding); fp32 inputs
    # go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="moe_lora",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
