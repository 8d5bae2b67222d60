"""vLLM's fused SiLU-and-mul with per-group fp8 quantization into column-major scales
(vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py vllm_silu_mul_colmajor_quant` and
never committed.

Why this one: a block-fp8 MoE checkpoint (DeepSeek-V3/R1's 128 x 128 weight blocks) served
on Hopper with DeepGEMM installed (vLLM's image; VLLM_USE_DEEP_GEMM and its E8M0 scales are
on by default) runs its experts in `DeepGemmExperts`, and on SM90 every MoE layer of every
step calls `silu_mul_per_token_group_quant_fp8_colmajor` between DeepGEMM's two contiguous
grouped GEMMs: the gate-and-up output sits in an [M_sum, 2 x inter] bf16 workspace, each
local expert's rows in one segment that starts at the previous segment's end rounded up to
128 (the prefix-sum layout: `expert_ends` holds each segment's end), and the kernel turns
each live row into the down projection's fp8 input, silu(gate) x up as 128 e4m3 values and
one power-of-two fp32 scale per 128-column group, the scales stored column-major (the
M-major layout DeepGEMM's TMA reads).  Unlike `sglang_silu_mul_masked_quant` (DeepEP
low-latency's padded [experts, capacity, 2 x inter] buffer, one-warp programs walking one
row a step), a program here takes an [8, 128] tile and the grid is sized by a budget of
8192 programs over (row programs, column groups, experts), each walking its expert's
segment 8 x row-programs rows apart: a hot expert's rows are serialised over as many
iterations, an expert with a few rows leaves most of its slice idle, and the workspace's
slack (sized for the worst case) and the alignment gaps are never touched.  Both trials are
DeepSeek-V3 (256 routed experts, top-8, expert intermediate size 2048, bf16 activations) on
8 H200s: a 16,384-token prefill step under data parallel 8 with expert parallel 8 (vLLM's
default all-gather dispatch: 32 local experts of about 512 rows each, the full 2048-wide
intermediate; 8192 programs, 169 MB moved) and a 64-sequence decode step under tensor
parallel 8 (all 256 experts local with a 256-wide intermediate slice, about 2 rows each;
8192 programs, almost all idle, 0.66 MB moved).  Memory-bound: the floor is reading the
live rows once and writing their fp8 rows and scales once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_silu_mul_colmajor_quant")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "reduction", "memory-bound")
FP32 = 4


def m_sum(tokens: int, topk: int, experts: int, align: int) -> int:
    """vLLM's workspace rows (`compute_aligned_M_and_alignment` without CPU expert counts,
    as under the default all-gather dispatch and tensor parallelism): every assignment plus
    align - 1 rows of gap for each expert that can be active, rounded up to `align`."""
    rows = tokens * topk + min(tokens * topk, experts) * (align - 1)
    return -(-rows // align) * align


def expert_counts(tokens: int, topk: int, experts: int, global_experts: int) -> list[int]:
    """Live rows per local expert: tokens x topk x experts / global_experts in all (the
    rank's share of a uniform routing), spread from about a quarter to 1.75 times the mean
    (a hot and a cold end, as routing gives), every seventh expert empty when there are
    more than six, at most `tokens` each (a token picks an expert once)."""
    total = round(tokens * topk * experts / global_experts)
    weights = []
    for e in range(experts):
        if experts > 6 and e % 7 == 6:
            weights.append(0.0)
            continue
        frac = ((e * 5) % experts) / max(experts - 1, 1)
        weights.append(0.25 + 1.5 * frac)
    scale = total / sum(weights)
    raw = [w * scale for w in weights]
    counts = [int(r) for r in raw]
    # the rows left by the floors, one each to the largest remainders (lowest index first)
    order = sorted(range(experts), key=lambda e: (counts[e] - raw[e], e))
    for e in order[: total - sum(counts)]:
        counts[e] += 1
    return [min(c, tokens) for c in counts]


def segment_starts(counts: list[int], align: int) -> list[int]:
    """Each expert's first row: the previous expert's end rounded up to `align` (DeepGEMM's
    prefix-sum layout, as vLLM's ep_scatter lays it out on SM90)."""
    starts, row = [], 0
    for c in counts:
        starts.append(row)
        row += -(-c // align) * align
    return starts


def live_rows(d: Mapping[str, int]) -> int:
    return sum(expert_counts(d["tokens"], d["topk"], d["experts"], d["global_experts"]))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The live rows' gate and up read once, their e4m3 rows and fp32 group scales written
    once, the experts' segment ends (int32) read once; the workspace's slack and the
    alignment gaps are never touched, so they count nothing."""
    inter = d["inter"]
    per_row = 2 * inter * ELEMENT_SIZE[dtype] + inter + FP32 * (inter // d["group"])
    return live_rows(d) * per_row + 4 * d["experts"]


def flops(d: Mapping[str, int]) -> int:
    """Per live output element: the SiLU (about 4), the product, the abs-max and the
    scaling; the per-group log2, ceil and exp2 of the UE8M0 scale are not counted."""
    return 8 * live_rows(d) * d["inter"]


def shape_metrics(d: Mapping[str, int]) -> dict[str, int]:
    """`rows`: the live rows the kernel quantizes (all experts together)."""
    return {"rows": live_rows(d)}


_make_inputs = _common.forward_make_inputs(
    "vllm_silu_mul_colmajor_quant",
    "tokens", "topk", "experts", "global_experts", "inter", "group", "align",
)  # fmt: skip
_reference = _common.forward_reference("vllm_silu_mul_colmajor_quant")
_baselines = _common.forward_baselines(
    "vllm_silu_mul_colmajor_quant",
    ("torch", "torch", "the same in torch's kernels over the whole workspace (silu, mul, "
     "amax, power-of-two scale, clamp, cast), rows outside the segments zeroed by a mask, "
     "the scales transposed into the column-major buffer", "torch_silu_mul_colmajor_quant"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.vllm_silu_mul_colmajor_quant.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8, 16, 32, 64), "rows_per_program",
         "rows of a program's [rows, 128] tile per iteration (must divide the segment "
         "alignment); None: vLLM's 8"),
    Knob("max_ctas", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768, 65536), "occupancy",
         "the grid's program budget: row programs per expert and column group = "
         "min(cdiv(M_sum, block_m x experts), cdiv(max_ctas, groups x experts)), each "
         "walking its expert's rows that many tiles apart; None: vLLM's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline stages of the row loop; None: Triton's default 3 (vLLM passes "
         "none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_silu_mul_colmajor_quant",
    description=(
        "vLLM's fused SiLU-and-mul with per-128-group fp8 quantization (v0.34.0, "
        "_silu_mul_per_token_group_quant_fp8_colmajor) as DeepGemmExperts launches it on "
        "Hopper between DeepGEMM's contiguous grouped GEMMs: [8, 128] tiles of each expert's "
        "aligned segment, a budget of 8192 programs walking the rows, e4m3 values and "
        "power-of-two fp32 scales stored column-major"
    ),
    dims=(
        Dim("tokens", "tokens the MoE layer routes on this rank (all DP ranks' under EP)", "batch"),
        Dim("topk", "routed experts per token"),
        Dim("experts", "local experts on this rank (one grid slice each)"),
        Dim("global_experts", "routed experts of the model (the rank holds experts of them)"),
        Dim(
            "inter",
            "expert intermediate size on this rank (an input row holds gate and up: 2 x inter)",
            "row_len",
        ),
        Dim("group", "columns per quantization group (DeepGEMM's 128; the tile's width)"),
        Dim(
            "align",
            "rows an expert's segment is aligned to (DeepGEMM's contiguous-layout M "
            "alignment, 128 on Hopper)",
        ),
    ),
    # A large expert-parallel prefill step first (hot segments walked over several iterations),
    # then a tensor-parallel decode step (a row or two per expert); both DeepSeek-V3 MoE layers.
    trials=(
        Trial(
            "deepseek_v3_dp8_ep8_prefill16k",
            {
                "tokens": 16384,
                "topk": 8,
                "experts": 32,
                "global_experts": 256,
                "inter": 2048,
                "group": 128,
                "align": 128,
            },
            "DeepSeek-V3 on 8 H200s with data parallel 8 and expert parallel 8, a prefill "
            "step of 2048 tokens per rank all-gathered to 16,384: 32 local experts of about "
            "512 rows each (4 empty), 16 column groups, a 135,168-row workspace; vLLM's "
            "launch (8-row tiles, 16 x 16 x 32 = 8192 programs, Triton's 4 warps and 3 "
            "stages), 169 MB moved (bf16)",
        ),
        Trial(
            "deepseek_v3_tp8_decode64",
            {
                "tokens": 64,
                "topk": 8,
                "experts": 256,
                "global_experts": 256,
                "inter": 256,
                "group": 128,
                "align": 128,
            },
            "the same model under tensor parallel 8 (every expert local, a 256-wide slice of "
            "each), a 64-sequence decode step: 512 rows over 256 experts (about 2 each, 36 "
            "empty), 2 column groups, a 33,024-row workspace; 16 x 2 x 256 = 8192 programs, "
            "all but one row program per expert and group idle, 0.66 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    shape_metrics=shape_metrics,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same roundings (silu to the dtype, the product to the dtype, the scale a power of
    # two, so the division is exact) and a round-to-nearest cast; an e4m3 value may differ
    # by one step where the GPU's fast exp moves a SiLU across a rounding boundary
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="silu_mul_per_token_group_quant_fp8_colmajor",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
