"""vLLM's adaptive-verification draft budget (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_draft_budget` and never committed.

Why this one as the set's single-program threshold search: with adaptive verification on
(the speculative config's `enable_adaptive_verification`, DSpark's and EAGLE's draft
paths), vLLM picks each step a draft budget from its measured draft and verify cost curves,
and when the budget is below the drafts scheduled it keeps the globally best ones: every
(request, step) slot is scored by its survival probability (the running product of the
request's per-step draft confidences) and the highest `budget` win.  One program does it
all: a pass over the requests writes the survival bits to a scratch, a binary search over
the 31-bit space of non-negative float bits counts the whole scratch once per probe (about
31 probes, each a loop of BLOCK_SIZE-slot tl.sum), and a last pass admits the slots above
the threshold and hands the ties out in request order with a tl.cumsum.  Latency-bound and
serial: one CTA on one SM, its time the probes' dependent loop trips, not bytes.  It
differs from the catalog's top-k specs (FlagGems' top-k, vLLM's top-k / top-p pivot
search) in that the selection is global over a whole batch in one program, its result is
per-request counts written in place, and its search is a bisection on float bits whose
every probe re-reads a global scratch.  Both trials are speculative decoding with adaptive
verification: 64 requests of Llama 3.1 8B with EAGLE-3's 4 draft steps (224 scheduled
drafts, 128 admitted) and 1024 requests of DeepSeek-V3 with 8 draft steps (7,168 scheduled,
3,072 admitted).  Output: capacities (each request's admitted drafts, in place).  The floor
is reading the confidences once and the scratch a few times.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_draft_budget")

CONTEXTS = ("reduction", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The batch's confidences read once (fp32), the mapping read and the capacities read
    and written once (int32), the survival scratch written once and read by the two
    request passes (int32; the bisection's probes re-read it from cache), integers and fp32
    whatever the dtype."""
    del dtype
    slots = d["reqs"] * d["steps"]
    return 4 * slots + 12 * d["reqs"] + 3 * 4 * slots


def flops(d: Mapping[str, int]) -> int:
    """The survival products, one per slot (the compares of the search not counted)."""
    return d["reqs"] * d["steps"]


_make_inputs = _common.forward_make_inputs("vllm_draft_budget", "reqs", "steps", "budget")
_reference = _common.forward_reference("vllm_draft_budget")
_baselines = _common.forward_baselines(
    "vllm_draft_budget",
    (
        "torch",
        "torch",
        "the same by torch ops: the survival products, ineligible slots at -1, a stable "
        "descending sort of every slot, the first budget counted per request by bincount",
        "torch_budget",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_draft_budget.launcher")


TRITON_KNOBS = (
    Knob("block_reqs", "int", (None, 32, 64, 128, 256, 512, 1024, 2048), "tile_m",
         "requests per step of the survival and admission passes (the tie cumsum's "
         "width); None: vLLM's 256"),
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "scratch slots per step of each bisection probe's count; None: vLLM's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps of the one program; None: vLLM's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining stages of the kernel's loops; None: Triton's default 3 "
         "(vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_draft_budget",
    description=(
        "vLLM's adaptive-verification draft budget (v0.34.0, "
        "_assign_draft_token_budget_kernel): one program scores every draft slot by its "
        "survival probability, bisects the float bits for the threshold that admits the "
        "budget and writes each request's admitted drafts, ties in request order"
    ),
    dims=(
        Dim("reqs", "requests of the step", "batch"),
        Dim("steps", "draft steps per request (the speculator's num_speculative_tokens)"),
        Dim("budget", "drafts the step admits (below the drafts scheduled)"),
    ),
    trials=(
        Trial(
            "eagle3_64x4_llama31_8b",
            {"reqs": 64, "steps": 4, "budget": 128},
            "a decode step of 64 requests of Llama 3.1 8B with EAGLE-3's 4 draft steps and "
            "adaptive verification: 224 drafts scheduled (a quarter of the requests near "
            "their limit with 2), 128 admitted; 256 slots, one program",
        ),
        Trial(
            "mtp_1024x8_deepseek_v3",
            {"reqs": 1024, "steps": 8, "budget": 3072},
            "a decode step of 1024 requests of DeepSeek-V3 with 8 draft steps and adaptive "
            "verification: 7,168 drafts scheduled, 3,072 admitted; 8,192 slots, one program",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer counts: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="assign_budget",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
