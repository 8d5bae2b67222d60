"""SGLang's MoE top-k sum reduction (SGLang v0.5.9, Apache-2.0; modified there from
LightLLM), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_moe_sum_reduce` and never committed.

Why this one as the set's memory-bound reduction: the last launch of every MoE layer on
SGLang's Triton MoE runner (the path of unquantized, fp8 and int8 MoE alike, on CUDA above
32 tokens): the down projection leaves one hidden-wide row per (token, expert) pair, and
this kernel sums each token's top-k rows in fp32, scales by the routed scaling factor and
writes the layer's output.  A reduction across a short middle axis (top-k = 8), each step a
whole row slice per program; no reuse, reading top-k times what it writes.  SGLang's launch
gives every token its own 16-warp programs (one per 2048 columns), so a decode step is a
few hundred programs and a prefill chunk tens of thousands.  Output: [tokens, hidden] in
the input dtype.  The floor is reading the top-k rows once and writing the sums once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_moe_sum_reduce")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The [tokens, topk, hidden] expert outputs read once and the [tokens, hidden] sums
    written once, in the spec's dtype."""
    return ELEMENT_SIZE[dtype] * d["tokens"] * d["hidden"] * (d["topk"] + 1)


def flops(d: Mapping[str, int]) -> int:
    """One add per expert output element and one multiply (the scale) per output element."""
    return d["tokens"] * d["hidden"] * (d["topk"] + 1)


_make_inputs = _common.forward_make_inputs("sglang_moe_sum_reduce", "tokens", "topk", "hidden")
_reference = _common.forward_reference("sglang_moe_sum_reduce")
_baselines = _common.forward_baselines(
    "sglang_moe_sum_reduce",
    (
        "torch",
        "torch",
        "the same combine by torch.sum over the top-k in the input dtype, then the scale",
        "torch_moe_sum",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_moe_sum_reduce.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8, 16), "rows_per_program",
         "tokens per program; None: SGLang's 1"),
    Knob("block_dim", "int", (None, 256, 512, 1024, 2048, 4096), "tile_n",
         "hidden columns per program (loaded per top-k step); None: SGLang's 2048"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the top-k loop (the kernel's NUM_STAGE); None: "
         "SGLang's 1"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: SGLang's 16"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_moe_sum_reduce",
    description=(
        "SGLang's MoE top-k sum reduction (v0.5.9, from LightLLM): one 16-warp program per "
        "token and 2048 columns sums the token's top-k router-weighted expert rows in fp32, "
        "scales by the routed scaling factor, bf16 in and out"
    ),
    dims=(
        Dim("tokens", "tokens in the step (decode: one per sequence)", "rows"),
        Dim("topk", "experts per token (the reduced axis)"),
        Dim("hidden", "model hidden size (columns of each row)", "row_len"),
    ),
    trials=(
        Trial(
            "decode_deepseek_v3",
            {"tokens": 64, "topk": 8, "hidden": 7168},
            "a 64-sequence decode step of DeepSeek-V3 (top-8 of 256 routed experts, hidden "
            "7168): 256 programs (the last column slice of each token half used), 8.3 MB moved",
        ),
        Trial(
            "prefill_qwen3_235b",
            {"tokens": 4096, "topk": 8, "hidden": 4096},
            "a 4096-token prefill chunk of Qwen3-235B-A22B (top-8 of 128 experts, hidden "
            "4096): 8192 programs, 302 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of topk terms, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="moe_sum_reduce",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
