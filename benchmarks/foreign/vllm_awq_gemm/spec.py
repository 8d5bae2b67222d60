"""vLLM's AWQ int4 weight-only GEMM (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_awq_gemm` and never committed.

Why this one as the set's quantized tl.dot kernel: vLLM's Triton path for AWQ models (the
path on ROCm, and on CUDA with VLLM_USE_TRITON_AWQ=1) runs it in every linear layer below
256 tokens: fp16 activations times int4 weights, eight to an int32 in AWQ's interleaved
order, unpacked in registers (three tl.interleave, shifts and masks), their group's zero
point subtracted and scale applied, then an fp16 tl.dot accumulating in fp16.  The K axis is
split eight ways into a [8, M, N] buffer that torch sums afterwards.  At a decode step it
streams the packed weights (a quarter of the fp16 bytes); at its largest batch it is a
small-M GEMM with a dequantization prologue per tile.  Both trials are Llama-3.1-8B-Instruct
in AWQ int4 (group 128): one sequence's decode step through the attention output projection
(4096 -> 4096, a launch-sized grid) and a 128-token batch through the fused gate and up
projection (4096 -> 28672).  Output: [tokens, n] in fp16.  The floor is the larger of reading
the activations, packed weights, zero points and scales once and writing the output once,
and the GEMM's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_awq_gemm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # a small-M GEMM over int4 weights dequantized in registers


def bytes_moved(d: Mapping[str, int], dtype: str = "float16") -> int:
    """The activations read once, the int4 weights (n / 8 int32 per row) and the packed zero
    points read once, the scales read once, the output written once."""
    es = ELEMENT_SIZE[dtype]
    groups = d["k"] // d["group"]
    return (
        es * d["tokens"] * d["k"]
        + d["k"] * d["n"] // 2
        + groups * d["n"] // 2
        + es * groups * d["n"]
        + es * d["tokens"] * d["n"]
    )


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["tokens"] * d["k"] * d["n"]


_make_inputs = _common.forward_make_inputs("vllm_awq_gemm", "tokens", "k", "n", "group")
_reference = _common.forward_reference("vllm_awq_gemm")
_baselines = _common.forward_baselines(
    "vllm_awq_gemm",
    (
        "torch",
        "torch",
        "the same product by torch: the weight unpacked and dequantized, then one dense matmul",
        "torch_awq_gemm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_awq_gemm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "activation rows per program; None: vLLM's 32"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns per program (a multiple of the 8 per packed word); None: vLLM's 32"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "depth of one tl.dot step, within one 128-row quantization group; None: vLLM's 32"),
    Knob("split_k", "int", (None, 1, 2, 4, 8, 16, 32), "splits",
         "programs sharing K, each writing its own partial product that torch sums; None: "
         "vLLM's 8 (the pack factor)"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_awq_gemm",
    description=(
        "vLLM's AWQ int4 GEMM (v0.34.0, the Triton AWQ path): packed 4-bit weights unpacked "
        "and dequantized per 32 x 32 tile with their group's zeros and scales, fp16 tl.dot "
        "accumulating in fp16, K split 8 ways into a buffer that torch sums"
    ),
    dims=(
        Dim("tokens", "activation rows (tokens in the step, below 256)", "rows"),
        Dim("k", "input features (the products' depth)"),
        Dim("n", "output features"),
        Dim("group", "rows of the weight per scale and zero point (128)"),
    ),
    trials=(
        Trial(
            "decode_1seq_llama8b_o_proj",
            {"tokens": 1, "k": 4096, "n": 4096, "group": 128},
            "one sequence's decode step through Llama-3.1-8B-Instruct-AWQ's attention output "
            "projection: 1024 programs (128 column tiles, 8 splits), 34 MFLOP, 8.7 MB moved "
            "(the packed weights nearly all of it)",
        ),
        Trial(
            "batch128_llama8b_gate_up",
            {"tokens": 128, "k": 4096, "n": 28672, "group": 128},
            "a 128-token batch through the fused gate and up projection (4096 -> 2 x 14336): "
            "28672 programs, 30 GFLOP, 69 MB moved (the split buffer adds 59 MB written and "
            "read back by the sum)",
        ),
    ),
    backoff_dim="n",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the kernel accumulates its tl.dot in the output dtype (fp16): per split, K / (32 * 8)
    # fp16-rounded steps, then the splits summed; fp32 goes through tf32 on the GPU
    tolerances={"float16": 1e-2, "float32": 5e-3},
    entry_point="awq_gemm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="float16",
)
