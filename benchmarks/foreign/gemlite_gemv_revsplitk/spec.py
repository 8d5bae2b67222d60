"""GemLite's reverse split-K GEMV (GemLite 0.6.0.post2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
gemlite_gemv_revsplitk gemlite_utils` and never committed.

Why this one: GemLite (the Triton low-bit matmul library behind HQQ, and one of the quantized
linear backends of SGLang, vLLM and TorchAO) runs it for every linear layer of a 4-bit (or
2-, 1-bit) weight-only model at a decode step of 1 to 4 rows (`get_matmul_type`:
GEMV_REVSPLITK is its default below 8 bits), and it is none of the wrapped families: no
tl.dot and no loop, but a GEMV cut into tiny work items, each program unpacking and
dequantizing two [8 x 256] slices of packed int4 weights (one fp16 fma per weight with its
group's scale and shift), multiplying by the row's activations in fp32 and adding its
[1 x 256] partial into the fp16 output with relaxed atomics: K / 16 atomic adds land on every
output element, after a zero fill.  Its nearest specs are `vllm_awq_gemm` and
`vllm_w4a16_gemm` (int4 weights dequantized in registers, tl.dot tiles over a K loop, splits
summed by torch or none) and `flaggems_mv` (a dense GEMV reducing whole rows in a loop); it
differs in having neither the loop nor tl.dot nor a separate reduction: the split of K is the
whole grid's second axis (256 to 896 programs deep) and the reduction across it is the
atomics.  Both trials are Meta-Llama-3-8B-Instruct quantized by HQQ to 4 bits, group 64, the
A16W4 configuration GemLite's H100 table is tuned for, one sequence's decode step (M = 1):
through the fused gate and up projection (4096 -> 28672) and the down projection (14336 ->
4096).  Output: [tokens, n] in fp16.  The floor is the larger of reading the activations,
the packed weights and their fp16 scales and shifts once and writing the output once, and
the GEMV's flops; the zero fill and the atomics' read-modify-writes are not counted.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "gemlite_gemv_revsplitk", "gemlite_utils")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "reduction", "memory-bound")  # a GEMV over int4 weights, K split by atomics


def bytes_moved(d: Mapping[str, int], dtype: str = "float16") -> int:
    """The activations read once, the 4-bit weights (k n / 2 bytes) read once, one scale and
    one shift per group and output channel read once (in the spec's dtype), the output
    written once.  The zero fill, the atomic adds' K / (2 block_k) read-modify-writes of
    each output and the activations' re-reads by every column tile are not counted."""
    es = ELEMENT_SIZE[dtype]
    tokens, k, n = d["tokens"], d["k"], d["n"]
    groups = k // d["group"]
    return es * tokens * k + k * n // 2 + 2 * es * groups * n + es * tokens * n


def flops(d: Mapping[str, int]) -> int:
    """The product's multiply-adds (2 tokens k n); the dequantization's fma per weight (per
    row of the activations) is not counted."""
    return 2 * d["tokens"] * d["k"] * d["n"]


_make_inputs = _common.forward_make_inputs("gemlite_gemv_revsplitk", "tokens", "k", "n", "group")
_reference = _common.forward_reference("gemlite_gemv_revsplitk")
_baselines = _common.forward_baselines(
    "gemlite_gemv_revsplitk",
    (
        "torch",
        "torch",
        "the same product by torch: the packed weight unpacked and dequantized every call, "
        "then one dense matmul in fp16",
        "torch_gemv",
    ),
)


_launch_info = _common.triton_launch_info("foreign.gemlite_gemv_revsplitk.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 32, 64, 128, 256, 512, 1024), "tile_n",
         "output columns per program; None: GemLite's H100 table (256 at both trials), else "
         "its default 32"),
    Knob("block_k", "int", (None, 8, 16, 32), "tile_k",
         "depth of each of the program's two K slices (a multiple of the 8 values per packed "
         "word, at most half the group: the slices share one scale row); None: GemLite's "
         "table (8 at both trials), else its default 16 pruned to the group"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: GemLite's table (2 at both trials), else 1"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "Triton's pipeline depth; the kernel has no loop to pipeline (its two K slices are "
         "written out); None: GemLite's table (2 for gate and up, 1 for down), else 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="gemlite_gemv_revsplitk",
    description=(
        "GemLite's reverse split-K GEMV (0.6.0.post2, its default below 8 bits for 1 to 4 "
        "rows): fp16 activations times 4-bit weights packed eight to an int32 down K, "
        "dequantized per group with an fp16 scale and shift, each program two K slices of "
        "block_k x block_n in fp32, its partial added atomically into the zero-filled fp16 "
        "output; GemLite's H100 config table"
    ),
    dims=(
        Dim("tokens", "activation rows (sequences at the decode step, 1 to 4)", "rows"),
        Dim(
            "k",
            "input features (the row each output's dot product reduces, split across the grid)",
            "row_len",
        ),
        Dim("n", "output features"),
        Dim("group", "rows of the weight per scale and shift (HQQ's 64)"),
    ),
    # A decode step of one sequence through Meta-Llama-3-8B-Instruct in HQQ 4-bit (group 64)
    # on one H100: the fused gate and up projection first (the largest weight of a layer,
    # 28,672 programs), then the down projection (half the weight, K 3.5 times deeper: 896
    # atomic adds on every output element).
    trials=(
        Trial(
            "llama3_8b_hqq4_decode1_gate_up",
            {"tokens": 1, "k": 4096, "n": 28672, "group": 64},
            "one sequence's decode step through Meta-Llama-3-8B-Instruct (HQQ 4-bit, group "
            "64)'s fused gate and up projection (4096 -> 2 x 14336): GemLite's 256-column, "
            "2 x 8-deep programs (activations after the weights, 2 warps, 2 stages), 112 x 256 "
            "= 28,672 programs, 235 MFLOP, 66 MB moved (the packed weight 59 MB of it)",
        ),
        Trial(
            "llama3_8b_hqq4_decode1_down",
            {"tokens": 1, "k": 14336, "n": 4096, "group": 64},
            "the same step through the down projection (14336 -> 4096): 256-column, 2 x "
            "8-deep programs (activations first, 2 warps, 1 stage), 16 x 896 = 14,336 "
            "programs, 117 MFLOP, 33 MB moved (the packed weight 29 MB of it)",
        ),
    ),
    backoff_dim="n",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 partials of 2 block_k products each, added atomically into the fp16 output: one
    # fp16 rounding per atomic add (K / (2 block_k) of them, 256 to 896 at the trials)
    tolerances={"float16": 2e-2, "float32": 1e-4},
    entry_point="gemv_revsplitk",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="float16",
)
