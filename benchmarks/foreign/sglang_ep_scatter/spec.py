"""SGLang's DeepEP-normal MoE scatter (SGLang v0.5.9, Apache-2.0; from LightLLM), as kbopt
sees it: kernels nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_ep_scatter` and never committed.

Why this one: with expert parallelism over DeepEP's normal (prefill) mode and DeepGEMM's
contiguous grouped GEMM (`--moe-a2a-backend deepep`, DeepSeek-V3 in fp8 on Hopper), every
MoE layer of a prefill step receives its tokens as e4m3 rows with one fp32 scale per 128
columns, and this pair of launches, the runner's first, lays them out for the GEMM: one
program per local expert turns the experts' 128-rounded counts into segment starts with a
`tl.cumsum` and labels its segment's rows in m_indices; then up to 8192 programs walk the
tokens grid-stride, load each token's whole row and scales once and copy them to one row
per local slot, the row taken by an atomic add on the expert's counter, its index stored
to output_index (what `sglang_ep_gather`, the runner's last launch, reads back).  A
data-dependent scatter: rows read once, written 1.5 times on average, to places the
atomics hand out; no arithmetic.  Nearest: `sglang_ep_gather` (its counterpart, a
weighted gather-reduce through the index this kernel writes) and `sglang_deepep_permute`
(the W4A8 runner's permute, one bf16 row per program to destinations precomputed by a
sort, no counters, no scales, no labels).  Both trials are DeepSeek-V3 (hidden 7168, top-8
of 256 experts) at EP 8 (32 local experts), routed as `sglang_ep_gather`'s trials, so that
this kernel's outputs are that one's inputs.  The check routes at most one slot to each
expert (the order of rows within an expert is the atomics'; see reference.py).  The floor
is reading the received rows, scales and routing ids once and writing each local slot's
row, scales and index once, with m_indices and the experts' counters.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ep_scatter")

CONTEXTS = ("memory-bound", "multi-kernel")
LOCAL_PATTERN = (1, 2, 1, 3, 1, 2, 1, 1)  # as reference.py: local slots per received token
ALIGN = 128  # as reference.py: DeepEP's expert_alignment under DeepGEMM
GROUP = 128  # one fp32 scale per 128 columns


def expert_slots(d: Mapping[str, int]) -> list[int]:
    """Each local expert's received slots under reference.py's routing (pure Python, so
    that the spec loads without torch)."""
    experts = d["local_experts"]
    slots = [0] * experts
    for t in range(d["tokens"]):
        for j in range(min(LOCAL_PATTERN[t % len(LOCAL_PATTERN)], d["topk"], experts)):
            slots[(t * 13 + j) % experts] += 1
    return slots


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The e4m3 rows (a byte an element), their fp32 group scales and the int64 routing
    ids read once, the int32 counts once; each local slot's row and scales written once and
    its int64 index once; m_indices written once over every rounded row (padding included)
    and the int32 counters once (the counts' re-reads by every fill program, the atomics'
    round trips and the padding rows, never written, not counted).  The spec's dtype plays
    no part: fp8 rows and fp32 scales whatever it is."""
    del dtype
    slots = expert_slots(d)
    pairs = sum(slots)
    rows = sum(-(-n // ALIGN) * ALIGN for n in slots)
    row_bytes = d["hidden"] + 4 * (d["hidden"] // GROUP)
    reads = d["tokens"] * (row_bytes + 8 * d["topk"]) + 4 * d["local_experts"]
    writes = pairs * (row_bytes + 8) + 4 * rows + 4 * d["local_experts"]
    return reads + writes


def flops(d: Mapping[str, int]) -> int:
    """None: a copy (the counts' cumsum and the atomic adds are integer bookkeeping)."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "sglang_ep_scatter", "tokens", "hidden", "topk", "local_experts"
)
_make_check_inputs = _common.forward_make_inputs(
    "sglang_ep_scatter", "tokens", "hidden", "topk", "local_experts",
    function="make_check_inputs",
)  # fmt: skip
_reference = _common.forward_reference("sglang_ep_scatter")
_baselines = _common.forward_baselines(
    "sglang_ep_scatter",
    ("torch", "torch", "the same by torch ops: segment starts by cumsum, m_indices by "
     "repeat_interleave, the slots stably sorted by expert, the rows (as bytes) and scales "
     "index_copy'd to their places", "torch_ep_scatter"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_ep_scatter.launcher")


TRITON_KNOBS = (
    Knob("block_e", "int", (None, 16, 32, 64, 128), "tile_m",
         "m_indices entries per unmasked store step of the fill launch (must divide every "
         "rounded count, so 128 at most); None: SGLang's 128"),
    Knob("fill_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the fill launch (one program per expert); None: SGLang's 8"),
    Knob("copy_programs", "int", (None, 132, 264, 528, 1056, 2048, 4096, 8192, 16384),
         "occupancy",
         "programs of the copy launch (each walks the tokens this many apart, at most the "
         "tokens); None: SGLang's min(tokens, 8192)"),
    Knob("copy_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of the copy launch (each holds a whole padded row); None: "
         "SGLang's 8"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ep_scatter",
    description=(
        "SGLang's DeepEP-normal MoE scatter (v0.5.9, _fwd_kernel_ep_scatter_1 and _2): the "
        "experts' 128-rounded counts scanned into segment starts and m_indices labelled, "
        "then each received token's e4m3 row and fp32 group scales copied to one row per "
        "local slot of DeepGEMM's expert-contiguous layout, the row taken by an atomic add"
    ),
    dims=(
        Dim("tokens", "tokens received by the rank from DeepEP's normal dispatch", "rows"),
        Dim("hidden", "hidden size (e4m3 columns of every row, a multiple of 128)", "row_len"),
        Dim("topk", "routing slots per token (experts per token)"),
        Dim("local_experts", "experts on this rank (routed experts / EP size)"),
    ),
    # A large prefill dispatch first, then a short one; the routing is sglang_ep_gather's
    # (1 to 3 local slots a token, 1.5 on average), so the two specs see the same batches.
    trials=(
        Trial(
            "scatter_16k_deepseek_v3_ep8",
            {"tokens": 16384, "hidden": 7168, "topk": 8, "local_experts": 32},
            "a DeepSeek-V3 prefill at EP 8 (about 3k-token chunks on each of the 8 ranks) "
            "of which 16,384 tokens reach this rank: 24,576 local rows (512 or 1,024 an "
            "expert, no padding) copied by SGLang's 8,192 programs of 8 warps walking 2 "
            "tokens each, after 32 fill programs; 304 MB moved",
        ),
        Trial(
            "scatter_512_deepseek_v3_ep8",
            {"tokens": 512, "hidden": 7168, "topk": 8, "local_experts": 32},
            "a short prefill batch of DeepSeek-V3 at EP 8: 512 tokens received, 768 local "
            "rows copied by 512 programs of one token each, m_indices over 4,096 rows (each "
            "expert's 16 or 32 slots padded to 128); 9.5 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy and integer labels: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="ep_scatter",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    contexts=CONTEXTS,
    make_check_inputs=_make_check_inputs,
    launch_info=_launch_info,
)
