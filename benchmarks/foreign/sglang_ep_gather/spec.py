"""SGLang's DeepEP-normal MoE gather (SGLang v0.5.9, Apache-2.0; from LightLLM), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_ep_gather` and never committed.

Why this one: with expert parallelism over DeepEP's normal (prefill) mode and DeepGEMM's
contiguous grouped GEMM (`--moe-a2a-backend deepep`, DeepSeek-V3 on Hopper), the MoE layer's
down projection leaves one hidden-wide row per local (token, expert) pair in an
expert-contiguous buffer (each expert's rows together, padded to 128); this kernel, the
runner's last launch before DeepEP's combine, gathers every received token's local rows
through an index map, weights them by the router weights and sums them in fp32.  A
weighted gather-reduce whose work is data-dependent (a token's slots routed to other ranks,
id -1, are skipped) and whose rows are scattered over the whole buffer; SGLang's grid is
1024-column blocks x up to 1024 token programs, each walking the tokens grid-stride.  Its
nearest spec is `sglang_moe_sum_reduce` (the Triton runner's top-k sum), which reads a
contiguous [tokens, topk, hidden] block: here every row is found through an index and a
routing id, a varying number per token.  Both trials are DeepSeek-V3 (hidden 7168, top-8
of 256 experts) at EP 8 (32 local experts); each received token has 1 to 3 local slots (1.5
on average, about what a uniform router gives a token that reaches the rank at all).  The
floor is reading the routing ids, the local slots' weights, indices and rows once and
writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from foreign.sglang_ep_gather.reference import local_slots
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ep_gather")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every slot's int64 routing id read once, each local slot's fp32 weight, int32 row
    index and hidden-wide row read once, the [tokens, hidden] output written once."""
    slots = local_slots(d["tokens"])
    rows = ELEMENT_SIZE[dtype] * d["hidden"] * (slots + d["tokens"])
    return rows + 8 * d["tokens"] * d["topk"] + 8 * slots


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per gathered element."""
    return 2 * local_slots(d["tokens"]) * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "sglang_ep_gather", "tokens", "hidden", "topk", "local_experts"
)
_reference = _common.forward_reference("sglang_ep_gather")
_baselines = _common.forward_baselines(
    "sglang_ep_gather",
    (
        "torch",
        "torch",
        "every slot's row gathered by advanced indexing, weighted (0 off the rank) and "
        "summed over the slots in the input dtype",
        "torch_ep_gather",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ep_gather.launcher")


TRITON_KNOBS = (
    Knob("block_d", "int", (None, 128, 256, 512, 1024), "tile_n",
         "hidden columns per program (must divide the hidden size: no mask); None: SGLang's "
         "1024 (128 when the hidden size is no multiple of 1024)"),
    Knob("token_programs", "int", (None, 66, 132, 264, 528, 1024, 2048, 4096), "occupancy",
         "token programs per column block (each walks the tokens this many apart, at most "
         "the tokens); None: SGLang's min(tokens, 1024)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 2"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the token and slot loops; None: Triton's default 3 "
         "(SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ep_gather",
    description=(
        "SGLang's DeepEP-normal MoE gather (v0.5.9, _fwd_kernel_ep_gather): each received "
        "token's local expert rows gathered from DeepGEMM's expert-contiguous down output "
        "through an index map, weighted by the router and summed in fp32"
    ),
    dims=(
        Dim("tokens", "tokens received by the rank from DeepEP's normal dispatch", "rows"),
        Dim("hidden", "hidden size (columns of every row)"),
        Dim("topk", "routing slots per token (experts per token)"),
        Dim("local_experts", "experts on this rank (routed experts / EP size)"),
    ),
    trials=(
        Trial(
            "combine_512_deepseek_v3_ep8",
            {"tokens": 512, "hidden": 7168, "topk": 8, "local_experts": 32},
            "a short prefill batch of DeepSeek-V3 at EP 8: 512 tokens received, 768 local "
            "rows gathered; SGLang's 7 x 512 programs of 1024 columns, 18 MB moved",
        ),
        Trial(
            "combine_16k_deepseek_v3_ep8",
            {"tokens": 16384, "hidden": 7168, "topk": 8, "local_experts": 32},
            "a DeepSeek-V3 prefill at EP 8 (about 3k-token chunks on each of the 8 ranks) "
            "of which 16,384 tokens reach this rank: 24,576 local rows gathered by 7 x 1024 "
            "programs walking 16 tokens each, 587 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of 1 to 3 weighted rows, one rounding to the output dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="ep_gather",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
