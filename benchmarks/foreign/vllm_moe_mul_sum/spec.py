"""vLLM's weighted top-k sum of the Humming MoE experts (vLLM v0.34.0, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_moe_mul_sum` and never committed.

Why this one as the set's masked weighted reduction: vLLM's Humming MoE experts (the
quantized-weight MoE runner, also under expert parallelism) end every MoE layer with
`moe_fused_mul_sum`: the down projection leaves one hidden-wide row per (token, slot) pair,
and one program per token loads its top-k ids, maps them through the EP expert map,
skips the slots of other ranks' experts without reading their rows, and walks the hidden
size in one or a few wide column steps (4096 columns and 16 warps on Hopper), adding each
taken row times its fp32 router weight into an fp32 accumulator.  A reduction across a
short middle axis whose terms are chosen per token at run time; a token's row is one
program however wide.  The large trial is an 8192-token prefill chunk of Qwen3-235B-A22B
(top-8 of 128 experts, hidden 4096) with EP over 2 GPUs (about half the slots skipped,
about 335 MB moved); the small one a 32-sequence decode step of Qwen3-30B-A3B (top-8 of
128, hidden 2048) on one GPU (no map, 1.2 MB moved).  The floor is reading the taken rows
once and writing the sums once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_moe_mul_sum")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")


def taken_slots(d: Mapping[str, int]) -> float:
    """Expected (token, slot) pairs summed: all of them without EP, else the local share."""
    local = d["experts"] // d["ep"]
    return d["tokens"] * d["topk"] * local / d["experts"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The taken rows read once, the sums written once; the int32 ids and fp32 weights read
    once, and the int32 expert map's entries looked up (a skipped slot's row is not read)."""
    e = ELEMENT_SIZE[dtype]
    rows = taken_slots(d) * d["hidden"] * e
    out = d["tokens"] * d["hidden"] * e
    routing = d["tokens"] * d["topk"] * (4 + 4 + (4 if d["ep"] > 1 else 0))
    return int(rows + out + routing)


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per taken value."""
    return int(2 * taken_slots(d) * d["hidden"])


_make_inputs = _common.forward_make_inputs(
    "vllm_moe_mul_sum", "tokens", "topk", "hidden", "experts", "ep"
)
_reference = _common.forward_reference("vllm_moe_mul_sum")
_baselines = _common.forward_baselines(
    "vllm_moe_mul_sum",
    (
        "torch",
        "torch",
        "the same by torch ops: the skipped rows zeroed by a where, times the fp32 weights, "
        "summed over the slots in fp32",
        "torch_mul_sum",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_moe_mul_sum.launcher")


TRITON_KNOBS = (
    Knob("block_k", "int", (None, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "hidden columns per loop step of each token's program (an fp32 accumulator of "
         "that width); None: vLLM's _heuristic_config (min(next_power_of_2(hidden), "
         "4096) for 2-byte inputs at hidden >= 1024 on sm75+)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: vLLM's _heuristic_config (16 for 2-byte inputs at "
         "hidden >= 1024 on sm80+, else 2, or 4 for fp32)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the column loop's loads; None: vLLM's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_moe_mul_sum",
    description=(
        "vLLM's weighted top-k sum of the Humming MoE experts (v0.34.0, "
        "moe_fused_mul_sum_kernel): one program per token maps its top-k ids through the "
        "EP expert map and sums the local slots' rows times their fp32 weights in "
        "4096-column steps"
    ),
    dims=(
        Dim("tokens", "token rows of the MoE layer on this rank", "batch"),
        Dim("topk", "experts per token"),
        Dim("hidden", "the model's hidden size (the down projection's output width)", "row_len"),
        Dim("experts", "routed experts of the model, over all ranks"),
        Dim("ep", "expert-parallel ranks (this rank holds experts / ep of them; 1: no map)"),
    ),
    trials=(
        Trial(
            "prefill_8192_qwen3_235b_ep2",
            {"tokens": 8192, "topk": 8, "hidden": 4096, "experts": 128, "ep": 2},
            "an 8192-token prefill chunk of Qwen3-235B-A22B (top-8 of 128 experts, hidden "
            "4096) with EP over 2 GPUs: 8192 programs of one 4096-column step, about half "
            "the slots skipped, about 335 MB moved",
        ),
        Trial(
            "decode_32_qwen3_30b",
            {"tokens": 32, "topk": 8, "hidden": 2048, "experts": 128, "ep": 1},
            "a 32-sequence decode step of Qwen3-30B-A3B (top-8 of 128 experts, hidden "
            "2048) on one GPU, no expert map: 32 programs of one 2048-column step, 1.2 MB "
            "moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 sum of 8 terms rounded once to the output dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="mul_sum",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
