"""FlagGems' Hopper TMA GEMM (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_mm_tma` and never committed.

Why this one: FlagGems replaces aten::mm with its own when it is enabled, and aten::linear
without a bias (every projection of Llama, Qwen, Mistral) hands aten::mm the activations
and the weight's transpose, a column-major view.  On an sm90 GPU, for fp16/bf16 operands
with N and K multiples of 8, FlagGems runs this kernel: one program per output tile in
GROUP_M order, A read through a host TMA descriptor and the weight through a descriptor
over its own rows, [BLOCK_N, BLOCK_K] boxes transposed in registers before each tl.dot.
No masks: the descriptors zero-fill the edges.  Trials: Llama 3.1 8B in bf16: the fused
qkv projection (4096 -> 6144) over a 4k-token prefill chunk (206 GFLOP, compute-bound)
and the fused gate/up projection (4096 -> 28672) at a 32-sequence decode step (the 235 MB
weight read is the whole cost).  The floor is the larger of the tensor-core time for 2 m k
n flops and the time to read A and the weight once and write C once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_mm_tma")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "memory-bound")  # the decode trial: the weight's read


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["m"] * d["k"] * d["n"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """A, the weight and C once."""
    return ELEMENT_SIZE[dtype] * (d["m"] * d["k"] + d["k"] * d["n"] + d["m"] * d["n"])


_make_inputs = _common.forward_make_inputs("flaggems_mm_tma", "m", "k", "n")
_reference = _common.forward_reference("flaggems_mm_tma")
_baselines = _common.forward_baselines(
    "flaggems_mm_tma",
    ("torch", "torch", "torch.mm (cuBLAS; what aten runs without FlagGems)", "torch_mm"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_mm_tma.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows of an output tile (A's TMA box height; rows past m zero-filled, not stored); "
         "None: FlagGems' first configuration, 32"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "columns of an output tile (the weight's box height, its rows); None: FlagGems' "
         "first, 32"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "depth of a tl.dot step along K (the boxes' inner width); None: FlagGems' first, 32"),
    Knob("group_m", "int", (None, 1, 4, 8, 16), "grouping",
         "row tiles per GROUP_M swizzle band; None: general_mm's 8"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: FlagGems' first, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: FlagGems' first, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_mm_tma",
    description=(
        "FlagGems' Hopper GEMM (v5.0.2, mm_kernel_general_host_tma, aten::mm's sm90 path "
        "for a bias-free linear): one program per 32 x 32 output tile in GROUP_M order, "
        "32-deep tl.dot steps over host-TMA boxes of A and of the weight's rows, transposed"
    ),
    dims=(
        Dim("m", "tokens (A's rows)"),
        Dim(
            "k",
            "the reduction, the layer's input width (a multiple of 8: TMA's 16-byte "
            "strides in bf16)",
        ),
        Dim("n", "output columns, the layer's output width (a multiple of 8, likewise)"),
    ),
    trials=(
        Trial(
            "prefill_llama31_8b_qkv",
            {"m": 4096, "k": 4096, "n": 6144},
            "Llama 3.1 8B's fused qkv projection (4096 -> 32 x 128 + 2 x 8 x 128) over a "
            "4k-token prefill chunk: 206 GFLOP, 134 MB moved (bf16), 24,576 tiles of 32 x 32",
        ),
        Trial(
            "decode_llama31_8b_gate_up",
            {"m": 32, "k": 4096, "n": 28672},
            "the same model's fused gate/up projection (4096 -> 2 x 14336) at a 32-sequence "
            "decode step: 7.5 GFLOP, 237 MB moved (bf16, the weight's 235 MB), 896 tiles",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation, rounded once; fp32 inputs without TF32 (allow_tf32=False)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="mm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
