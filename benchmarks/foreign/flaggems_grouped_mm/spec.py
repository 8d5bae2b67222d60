"""FlagGems' grouped GEMM (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_grouped_mm` and never committed.

Why this one: FlagGems replaces aten::_grouped_mm with its own when it is enabled, and
that op is how PyTorch-native MoE layers run their experts without a fused MoE kernel
(transformers' `grouped_mm` experts implementation, torchtitan): the routed tokens' rows
sorted by expert, one offsets vector, every expert's weight in one 3-D tensor.  On Hopper
FlagGems runs this kernel: one persistent program per SM walks a single tile list over
all the experts' GEMMs (a tile scheduler, not a grid of tiles), each tile's K loop read
through TMA descriptors.  Trials: Qwen3-30B-A3B's experts (128 experts, top-8, hidden
2048, expert width 768): the fused gate/up projection over a 4k-token prefill chunk
(32768 routed rows, about 256 an expert: compute and weight reads about even) and the down
projection at a 32-sequence decode step (256 routed rows, about 2 an expert: the weights'
read is the whole cost).  The floor is the larger of the tensor-core time for 2 m k n flops
and the time to read A, every chosen expert's weight and the offsets once and write C once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_grouped_mm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")  # the decode trial: the weights' read


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["t"] * d["topk"] * d["k"] * d["n"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """A and C once, the weights of the experts some token chose once (an expert no token
    chose has no tiles: with uniform top-k routing each is unused with probability
    (1 - topk / g)^t, 12.7% at the decode trial, none at the prefill one), the int32
    offsets."""
    m = d["t"] * d["topk"]
    e = ELEMENT_SIZE[dtype]
    used = d["g"] * (1.0 - (1.0 - d["topk"] / d["g"]) ** d["t"])
    return int(e * (m * d["k"] + used * d["k"] * d["n"] + m * d["n"])) + 4 * d["g"]


_make_inputs = _common.forward_make_inputs("flaggems_grouped_mm", "t", "topk", "g", "k", "n")
_reference = _common.forward_reference("flaggems_grouped_mm")
_baselines = _common.forward_baselines(
    "flaggems_grouped_mm",
    (
        "torch",
        "torch",
        "torch._grouped_mm (aten's own grouped GEMM; one torch.mm per expert off CUDA/bf16)",
        "torch_grouped_mm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_grouped_mm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows of an output tile (a group's last row tile masked at its end); None: "
         "FlagGems' first configuration, 128"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "columns of an output tile; None: FlagGems' first, 256"),
    Knob("block_k", "int", (None, 32, 64, 128), "tile_k",
         "depth of a tl.dot step along K (the TMA boxes' inner width); None: FlagGems' "
         "first, 64"),
    Knob("group_m", "int", (None, 1, 4, 8, 16), "grouping",
         "row tiles per GROUP_M swizzle band inside each expert's GEMM; None: FlagGems' "
         "first, 8"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: FlagGems' first, 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: FlagGems' first, 3"),
    Knob("programs", "int", (None, 33, 66, 132, 264, 528), "occupancy",
         "persistent programs (the grid, over which every expert's tiles are dealt "
         "round-robin); None: FlagGems' NUM_SMS, the GPU's SM count"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_grouped_mm",
    description=(
        "FlagGems' grouped GEMM (v5.0.2, grouped_mm_tma_kernel, aten::_grouped_mm's Hopper "
        "path): one persistent program per SM over every expert's 128 x 256 tiles, 64-deep "
        "TMA tl.dot steps"
    ),
    dims=(
        Dim("t", "tokens routed"),
        Dim("topk", "experts per token (A has t * topk rows)"),
        Dim("g", "experts (groups)"),
        Dim("k", "the reduction (a multiple of 8: TMA's 16-byte strides in bf16)"),
        Dim("n", "output columns (a multiple of 8, likewise)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_30b_a3b_gate_up",
            {"t": 4096, "topk": 8, "g": 128, "k": 2048, "n": 1536},
            "Qwen3-30B-A3B's expert gate/up projection (128 experts of 2048 -> 2 x 768, top-8) "
            "over a 4k-token prefill chunk: 32768 routed rows, 206 GFLOP, 1.04 GB moved "
            "(bf16), about 1900 tiles (2 or 3 row tiles an expert) over 132 programs",
        ),
        Trial(
            "decode_qwen3_30b_a3b_down",
            {"t": 32, "topk": 8, "g": 128, "k": 768, "n": 2048},
            "the same layer's down projection (768 -> 2048) at a 32-sequence decode step: 256 "
            "routed rows, about 2 an expert (112 of 128 chosen), 0.8 GFLOP, 352 MB of weights "
            "read (bf16), about 900 tiles",
        ),
    ),
    backoff_dim="t",
    # a row tile walks one expert's rows (t * topk / g on average), as liger_moe_down_proj's
    shape_metrics=lambda d: {"rows": -(-d["t"] * d["topk"] // d["g"])},
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation, rounded once; fp32 inputs without TF32 (allow_tf32=False)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="grouped_mm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
