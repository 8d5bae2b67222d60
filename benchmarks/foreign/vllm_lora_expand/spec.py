"""vLLM's multi-LoRA expand (vLLM v0.34.0, Apache-2.0; after Punica's SGMV), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by `scripts/
fetch_third_party.py vllm_lora_expand vllm_lora_expand_utils` and never committed.

Why this one: every LoRA-wrapped linear layer of a multi-adapter vLLM server runs it at
every step right after `vllm_lora_shrink`, adding each token's LoRA term to the base
layer's output: the shrink's fp32 rank-16 row times its own adapter's B matrix (rank ->
width), for every output slice of the layer (q 4096, k and v 1024 columns of Llama-3.1-8B's
fused QKV projection).  A segmented GEMM only 16 deep, whose rows are gathered per adapter
and whose output is read and written in place: memory-bound at any batch, the base output
most of the traffic.  vLLM's default tile on Hopper is 64 tokens by 64 columns, one
32-deep step that the rank 16 leaves half masked, 4 warps and a single stage (vLLM's SM90
workaround whenever the fp32 buffer is cast to the 16-bit weights); its grid is sized by
the widest slice and every adapter slot, so the k and v slices' programs past 1024 columns
and the slots' programs past their tokens exit at once.  vLLM's own code base, unlike
`sglang_lora_expand` (SGLang's chunked SGMV: fixed 16-token segments): per-adapter token
lists, per-slice pointer and stride tables, the cast of the fp32 buffer inside the loop.
Both trials are the same projection with 8 rank-16 adapters loaded, as `vllm_lora_shrink`'s:
an 8192-token prefill and a 64-token decode step.  Output: the base output updated in
place.  The floor is the larger of reading the buffer and every adapter's B matrices once
and the base output read and written once, and the projections' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_lora_expand", "vllm_lora_expand_utils")

ELEMENT_SIZE = _common.ELEMENT_SIZE
FP32 = 4
# per-adapter row groups of a rank-deep GEMM added in place: the base output dominates
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")


def out_width(d: Mapping[str, int]) -> int:
    return d["first_out"] + (d["slices"] - 1) * d["other_out"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The shrink's fp32 buffer read once, every adapter's B matrix of every slice read once
    (the tokens use all of them), the base output read and written once, the int32 sorted
    token indices read once (the per-adapter counts and the slices' tables are a few
    bytes)."""
    es = ELEMENT_SIZE[dtype]
    return (
        FP32 * d["slices"] * d["tokens"] * d["rank"]
        + es * d["loras"] * out_width(d) * d["rank"]
        + 2 * es * d["tokens"] * out_width(d)
        + 4 * d["tokens"]
    )


def flops(d: Mapping[str, int]) -> int:
    """One rank -> width projection per token and slice; the add into the base is not
    counted."""
    return 2 * d["tokens"] * out_width(d) * d["rank"]


_make_inputs = _common.forward_make_inputs(
    "vllm_lora_expand", "tokens", "loras", "rank", "slices", "first_out", "other_out"
)
_reference = _common.forward_reference("vllm_lora_expand")
_baselines = _common.forward_baselines(
    "vllm_lora_expand",
    (
        "torch",
        "torch",
        "the same projections by torch: per slice and adapter, its tokens' rows times its "
        "B^T in the weights' dtype, written into the base in place",
        "torch_lora_expand",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_lora_expand.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "tokens of one adapter per program; None: vLLM's 64"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "output columns per program; None: vLLM's 64 (several slices) or 128 (one)"),
    Knob("block_k", "int", (None, 16, 32, 64), "tile_k",
         "rank depth of one tl.dot step (a rank it does not divide takes the masked path); "
         "None: vLLM's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the rank loop; None: vLLM's 1 on SM90 with the fp32 "
         "buffer cast to 16-bit weights, else 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_lora_expand",
    description=(
        "vLLM's multi-LoRA expand (v0.34.0, after Punica's SGMV): tokens grouped by adapter, "
        "each group's fp32 shrink rows cast to the weights' dtype times its adapter's B "
        "matrix (rank -> width) per output slice in tl.dot tiles, rounded and added in place "
        "to the base layer's output"
    ),
    dims=(
        Dim("tokens", "tokens in the step (decode: one per sequence)", "batch"),
        Dim("loras", "adapter slots loaded (max_loras; the grid has one more)"),
        Dim("rank", "LoRA rank (the products' depth)"),
        Dim("slices", "output slices of the layer (QKV: 3, gate-up: 2)"),
        Dim("first_out", "output width of the first slice (q, or gate)"),
        Dim("other_out", "output width of each later slice (k and v, or up)"),
    ),
    # A large prefill first (the base output's 201 MB dominate), then a decode step (the
    # adapters' B matrices as large as the base output); both Llama-3.1-8B's fused QKV with
    # 8 rank-16 adapters, the pair of vllm_lora_shrink's trials.
    trials=(
        Trial(
            "prefill_llama8b_qkv",
            {
                "tokens": 8192,
                "loras": 8,
                "rank": 16,
                "slices": 3,
                "first_out": 4096,
                "other_out": 1024,
            },
            "an 8192-token prefill through Llama-3.1-8B's QKV projection with 8 rank-16 "
            "adapters (1024 tokens each): 128 x 64 x 3 x 9 = 221,184 programs, 12,288 of "
            "them working (16 token tiles per adapter by 64 q, 16 k and 16 v column tiles), "
            "one masked 32-deep step each; 1.6 GFLOP, 204.5 MB moved (bf16; the base output "
            "read and written, 201 MB of it)",
        ),
        Trial(
            "decode_llama8b_qkv",
            {
                "tokens": 64,
                "loras": 8,
                "rank": 16,
                "slices": 3,
                "first_out": 4096,
                "other_out": 1024,
            },
            "a 64-sequence decode step through the same projection and adapters (8 tokens "
            "each): 64 x 3 x 9 = 1728 programs, 768 working with 8 of their 64 rows live; "
            "12.6 MFLOP, 3.2 MB moved (the adapters' B matrices half of it)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the buffer rounded to the dtype, an fp32 sum over 16 terms rounded once, then added to
    # the base and rounded again; fp32 weights go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="lora_expand",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
