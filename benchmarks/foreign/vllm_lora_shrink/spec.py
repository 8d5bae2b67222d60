"""vLLM's multi-LoRA shrink (vLLM v0.34.0, Apache-2.0; after Punica's SGMV), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by `scripts/
fetch_third_party.py vllm_lora_shrink vllm_lora_kernel_utils` and never committed.

Why this one as the set's skinny tl.dot kernel: every LoRA-wrapped linear layer of a
multi-adapter vLLM server runs it at every step, before the base layer's output gets the
expand's contribution: each token's hidden state times its own adapter's A matrix (hidden
-> rank 16), for every output slice of the layer (q, k and v of a fused QKV projection).  A
segmented GEMM whose N is the LoRA rank and whose rows are gathered per adapter: far too
narrow for the tensor cores to be the limit, so vLLM splits the hidden size across programs
(64 ways below 128 tokens, 8 ways above) and adds the partial sums atomically into a zeroed
fp32 buffer; at a decode step most of its 64 splits of a 4096-wide K find no work and add
zeros.  Both trials are Llama-3.1-8B's QKV projection (3 slices, hidden 4096) with 8
adapters of rank 16 loaded: a 64-token decode step and an 8192-token prefill.  Output: the
fp32 [slices, tokens, rank] buffer.  The floor is the larger of reading the hidden states
and every adapter's A matrices once and writing the buffer once, and the projections' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_lora_shrink", "vllm_lora_kernel_utils")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # per-adapter row groups of a rank-16 GEMM, split-K


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The hidden states read once, every adapter's A matrix of every slice read once (the
    tokens use all of them), the fp32 buffer written once, the int32 adapter map and sorted
    token indices read once (the per-adapter counts are a few bytes)."""
    es = ELEMENT_SIZE[dtype]
    return (
        es * d["tokens"] * d["hidden"]
        + es * d["slices"] * d["loras"] * d["rank"] * d["hidden"]
        + 4 * d["slices"] * d["tokens"] * d["rank"]
        + 8 * d["tokens"]
    )


def flops(d: Mapping[str, int]) -> int:
    """One hidden -> rank projection per token and slice."""
    return 2 * d["slices"] * d["tokens"] * d["hidden"] * d["rank"]


_make_inputs = _common.forward_make_inputs(
    "vllm_lora_shrink", "tokens", "hidden", "rank", "loras", "slices"
)
_reference = _common.forward_reference("vllm_lora_shrink")
_baselines = _common.forward_baselines(
    "vllm_lora_shrink",
    (
        "torch",
        "torch",
        "the same projections by torch: tokens sorted by adapter, one matmul per slice "
        "and adapter, scattered back",
        "torch_lora_shrink",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_lora_shrink.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "tokens of one adapter per program; None: vLLM's 32"),
    Knob("block_n", "int", (None, 16, 32, 64), "tile_n",
         "rank columns per program; None: vLLM's 16"),
    Knob("block_k", "int", (None, 16, 32, 64, 128, 256, 512), "tile_k",
         "hidden-size depth of one tl.dot step; None: vLLM's 256 below 128 tokens, else 32"),
    Knob("split_k", "int", (None, 1, 2, 4, 8, 16, 32, 64), "splits",
         "programs sharing the hidden size, their partial sums added atomically (1: a plain "
         "store); None: vLLM's 64 below 128 tokens, else 8"),
    Knob("group_size_m", "int", (None, 1, 2, 4, 8, 16), "grouping",
         "token tiles launched together before the rank tile moves on; None: vLLM's 8"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden-size loop; None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_lora_shrink",
    description=(
        "vLLM's multi-LoRA shrink (v0.34.0, after Punica's SGMV): tokens grouped by adapter, "
        "each group's hidden states times its adapter's A matrix (hidden -> rank) per output "
        "slice in tl.dot tiles, the hidden size split across programs and added atomically "
        "into a zeroed fp32 buffer"
    ),
    dims=(
        Dim("tokens", "tokens in the step (decode: one per sequence)", "rows"),
        Dim("hidden", "the layer's input width (the products' depth)"),
        Dim("rank", "LoRA rank (the products' width)"),
        Dim("loras", "adapter slots loaded (max_loras; the grid has one more)"),
        Dim("slices", "output slices of the layer sharing the input (QKV: 3)"),
    ),
    trials=(
        Trial(
            "decode_llama8b_qkv",
            {"tokens": 64, "hidden": 4096, "rank": 16, "loras": 8, "slices": 3},
            "a 64-sequence decode step through Llama-3.1-8B's QKV projection with 8 rank-16 "
            "adapters: 3456 programs (64 splits of K, 48 of them past the 4096-wide hidden "
            "size), 25 MFLOP, 3.7 MB moved (the adapters' weights most of it)",
        ),
        Trial(
            "prefill_llama8b_qkv",
            {"tokens": 8192, "hidden": 4096, "rank": 16, "loras": 8, "slices": 3},
            "an 8192-token prefill through the same projection and adapters: 55296 programs "
            "(8 splits of K, 16 steps of 32 each), 3.2 GFLOP, 72 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over hidden terms of the same rounded inputs (split-K sums in any
    # order); fp32 inputs go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 5e-3},
    entry_point="lora_shrink",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
