"""SGLang's TMA alignment of fp32 group scales (SGLang v0.5.9, Apache-2.0; from LightLLM), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_tma_align_scale` and never committed.

Why this one: with expert parallelism over DeepEP's normal (prefill) mode and DeepGEMM's
contiguous grouped GEMM (`--moe-a2a-backend deepep`, DeepSeek-V3 in fp8 on Hopper, where
DeepGEMM takes fp32 scales), every MoE layer of a prefill step calls `tma_align_input_scale`
twice: on the scales `sglang_ep_scatter` laid out, before the gate/up GEMM, and on the
down projection input's scales, before the down GEMM.  DeepGEMM reads them through TMA
M-major with a 16-byte-aligned M stride, and they come row-major, so this kernel
transposes them: min(rows, 8192) programs walk the rows grid-stride, each loading one row's
K / 128 scales (56, then 16, for DeepSeek-V3) in one masked block and storing them to
their groups' output rows, padded rows apart.  A transpose one source row at a time: the
loads are contiguous, the stores from a warp are each in their own 32-byte sector, and
Triton's default 4 warps hold 64 or 16 lanes, so half or seven in eight of the threads load
a duplicate.  No arithmetic.  Nearest: `sglang_ep_scatter` (the runner's first launch,
which copies the same scales row-major, one token's row a program) and
`flaggems_pixel_unshuffle` (a layout permutation, but of 1024 output elements a program,
each index decoded).  Both trials are DeepSeek-V3 (hidden 7168, moe_intermediate 2048) at
EP 8 (32 local experts): a balanced prefill of 8,192 tokens on each rank (65,536 rows;
37.7 MB through the floor) and `sglang_ep_scatter`'s short batch (4,096 rows, mostly
segment padding; 2.4 MB).  The floor is reading each row's scales once and writing them
once to the column-major buffers.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_tma_align_scale")

CONTEXTS = ("memory-bound", "multi-kernel")  # a copy (transposed), two launches
GROUP = 128  # as reference.py: one fp32 scale per 128 columns


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each row's fp32 scales, hidden / 128 and inter / 128 of them, read once and written
    once (the padding columns past the rows, never written, not counted).  The spec's dtype
    plays no part: the scales are fp32 whatever it is."""
    del dtype
    return 2 * 4 * d["rows"] * (d["hidden"] // GROUP + d["inter"] // GROUP)


def flops(d: Mapping[str, int]) -> int:
    """None: a copy into another layout."""
    return 0


def shape_metrics(d: Mapping[str, int]) -> dict[str, float]:
    """The row a program handles is the row of scales, hidden / 128 of them in the larger
    launch (its block spans it; the down scales' row is inter / 128)."""
    return {"row_len": float(d["hidden"] // GROUP)}


_make_inputs = _common.forward_make_inputs("sglang_tma_align_scale", "rows", "hidden", "inter")
_reference = _common.forward_reference("sglang_tma_align_scale")
_baselines = _common.forward_baselines(
    "sglang_tma_align_scale",
    ("torch", "torch", "the same layout by torch: each padded [K / 128, rows] buffer "
     "filled by one strided copy_ of the transposed scales", "torch_tma_align"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_tma_align_scale.launcher")


TRITON_KNOBS = (
    Knob("h_programs", "int", (None, 132, 264, 528, 1056, 2048, 4096, 8192, 16384, 65536),
         "occupancy",
         "programs of the hidden scales' launch (each walks the rows this many apart, at "
         "most the rows); None: SGLang's min(rows, 8192)"),
    Knob("h_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the hidden scales' launch (a 64-lane row for DeepSeek-V3); "
         "None: Triton's default 4 (SGLang passes none)"),
    Knob("d_programs", "int", (None, 132, 264, 528, 1056, 2048, 4096, 8192, 16384, 65536),
         "occupancy",
         "programs of the down scales' launch (each walks the rows this many apart, at most "
         "the rows); None: SGLang's min(rows, 8192)"),
    Knob("d_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the down scales' launch (a 16-lane row for DeepSeek-V3); "
         "None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_tma_align_scale",
    description=(
        "SGLang's TMA alignment of fp32 group scales (v0.5.9, _tma_align_input_scale_kernel "
        "as tma_align_input_scale launches it in the DeepGEMM MoE runner's contiguous path): "
        "row-major [rows, K / 128] scales transposed into a column-major buffer with rows "
        "padded to 16 bytes, one row a program step, for the hidden scales then the down "
        "projection's"
    ),
    dims=(
        Dim("rows", "rows of DeepGEMM's contiguous layout (expert segments, 128-padded)", "rows"),
        Dim("hidden", "hidden size (a multiple of 128: hidden / 128 scales a row)"),
        Dim("inter", "MoE intermediate size (a multiple of 128: inter / 128 scales a row)"),
    ),
    # A large balanced prefill first, then sglang_ep_scatter's short batch (its rows are
    # this kernel's rows: that spec's second trial pads 768 slots to 4,096).
    trials=(
        Trial(
            "align_64k_deepseek_v3_ep8",
            {"rows": 65536, "hidden": 7168, "inter": 2048},
            "a DeepSeek-V3 prefill at EP 8 with 8,192 tokens on each rank, routed top-8 and "
            "balanced: 65,536 rows (2,048 for each of the 32 local experts), 8,192 programs "
            "walking 8 rows each, 56 then 16 scales a row; 37.7 MB moved",
        ),
        Trial(
            "align_4k_deepseek_v3_ep8",
            {"rows": 4096, "hidden": 7168, "inter": 2048},
            "sglang_ep_scatter's short DeepSeek-V3 batch at EP 8: 768 local slots in 32 "
            "segments padded to 128, 4,096 rows, one program each; 2.4 MB moved, "
            "launch-sized",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    shape_metrics=shape_metrics,
    # a copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="tma_align_scales",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
