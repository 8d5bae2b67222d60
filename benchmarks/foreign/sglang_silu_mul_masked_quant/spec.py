"""SGLang's masked SiLU-and-mul with per-group fp8 quantization (SGLang v0.5.9,
Apache-2.0), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_silu_mul_masked_quant` and never
committed.

Why this one: DeepSeek-V3 served with expert parallelism and DeepEP's low-latency
dispatch (every decode step, `--moe-a2a-backend deepep` with DeepGEMM) runs it on every
MoE layer between DeepGEMM's two masked grouped GEMMs: the gate-and-up output sits in a
padded [local experts, capacity, 2 x 2048] bf16 buffer with a token count per expert, and
the kernel turns each valid row into the down projection's fp8 input (silu(gate) x up, one
fp32 scale and 128 e4m3 values per 128-column group).  Unlike the set's gates (SwiGLU,
GEGLU: dense rows, the whole row per program) and its quantizations (dense rows, no
activation), the work is ragged: a grid of (16 groups, 32 token programs, experts)
one-warp programs, each walking its expert's valid rows 32 apart in a 6-stage `tl.range`
loop, so an expert with few tokens leaves most of its programs idle and a hot expert
serialises its rows over 32 programs; the padding, most of the buffer, is never touched.
Both trials are DeepSeek-V3 (256 routed experts, top-8, expert intermediate size 2048)
with DeepEP's low-latency buffers (capacity = dispatched tokens per rank x ranks): a
32-token decode step per rank on EP 16 (16 local experts, about 16 tokens each, capacity
2048) and a 256-token decode batch per rank on EP 8 (32 local experts, about 64 tokens
each; SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=256, so capacity 2048).  The floor
is reading the valid rows once and writing their fp8 rows and scales once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_silu_mul_masked_quant")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "reduction", "memory-bound")


def expert_counts(experts: int, tokens: int, capacity: int) -> list[int]:
    """Valid tokens per expert around `tokens`: a spread from about tokens / 4 to 7 tokens
    / 4 (a hot and a cold end, as routing gives), every seventh expert empty when there
    are more than six, capped at the capacity."""
    out = []
    for e in range(experts):
        if experts > 6 and e % 7 == 6:
            out.append(0)
            continue
        frac = ((e * 5) % experts) / max(experts - 1, 1)
        out.append(min(capacity, max(1, round(tokens * (0.25 + 1.5 * frac)))))
    return out


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The valid rows' gate and up read once, their e4m3 rows and fp32 group scales
    written once, the counts read once (padded rows are never touched)."""
    rows = sum(expert_counts(d["experts"], d["tokens"], d["capacity"]))
    inter = d["inter"]
    per_row = 2 * inter * ELEMENT_SIZE[dtype] + inter + 4 * (inter // d["group"])
    return rows * per_row + 4 * d["experts"]


def flops(d: Mapping[str, int]) -> int:
    """Per valid element: the SiLU (about 4), the product, the abs-max and the scaling."""
    rows = sum(expert_counts(d["experts"], d["tokens"], d["capacity"]))
    return 8 * rows * d["inter"]


_make_inputs = _common.forward_make_inputs(
    "sglang_silu_mul_masked_quant", "experts", "capacity", "tokens", "inter", "group"
)
_reference = _common.forward_reference("sglang_silu_mul_masked_quant")
_baselines = _common.forward_baselines(
    "sglang_silu_mul_masked_quant",
    ("torch", "torch", "the same in torch's kernels over the whole padded buffer (silu, mul, "
     "amax, scale, clamp, cast), padded rows zeroed by a mask", "torch_silu_mul_quant"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_silu_mul_masked_quant.launcher")


TRITON_KNOBS = (
    Knob("blocks_per_expert", "int", (None, 1, 2, 4, 8, 16, 32, 64, 128, 256), "occupancy",
         "token programs per expert (each walks the expert's valid rows this many apart); "
         "None: SGLang's 32 (64 below 4 local experts)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 6, 8), "pipeline_stages",
         "software-pipeline depth of the token loop; None: SGLang's 6"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program (one 128-column group of a row per iteration); None: SGLang's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_silu_mul_masked_quant",
    description=(
        "SGLang's masked SiLU-and-mul with per-128-group fp8 quantization (v0.5.9, "
        "_silu_and_mul_post_quant_kernel): DeepEP low-latency MoE's activation between "
        "DeepGEMM's masked grouped GEMMs, each expert's valid rows walked by 32 one-warp "
        "programs per column group, e4m3 values and fp32 scales out"
    ),
    dims=(
        Dim("experts", "local experts on this rank", "batch"),
        Dim("capacity", "padded rows per expert (DeepEP's dispatched tokens per rank x ranks)"),
        Dim("tokens", "valid rows per expert, on average (spec.expert_counts)", "rows"),
        Dim(
            "inter",
            "expert intermediate size (the input row holds gate and up: 2 x inter)",
            "row_len",
        ),
        Dim("group", "columns per quantization group (DeepGEMM's 128)"),
    ),
    trials=(
        Trial(
            "deepseek_v3_deepep_ll_ep8_decode256",
            {"experts": 32, "capacity": 2048, "tokens": 64, "inter": 2048, "group": 128},
            "DeepSeek-V3 on EP 8 with DeepEP low-latency (256 dispatch tokens per rank), a "
            "256-token decode batch per rank: 32 local experts of about 64 valid rows each "
            "(4 empty), capacity 256 x 8 = 2048, 16,384 one-warp programs",
        ),
        Trial(
            "deepseek_v3_deepep_ll_ep16_decode32",
            {"experts": 16, "capacity": 2048, "tokens": 16, "inter": 2048, "group": 128},
            "DeepSeek-V3 on EP 16 with DeepEP low-latency, a 32-token decode step per rank: "
            "16 local experts of about 16 valid rows each (2 empty), capacity 128 x 16 = "
            "2048, 8192 programs, most of them idle",
        ),
    ),
    backoff_dim="experts",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same roundings (silu to the dtype, the product to the dtype, fp32 scale) and a
    # round-to-nearest cast; an e4m3 value may differ by one step where the GPU's fp32
    # division lands within rounding of a half
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="silu_and_mul_masked_post_quant",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
