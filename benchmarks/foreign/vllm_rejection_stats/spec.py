"""vLLM's rejection-sampling logits statistics (vLLM v0.34.0, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_rejection_stats vllm_draft_logits_row` and never
committed.

Why this one as the set's speculative-decoding verification pass: when a draft model
proposes tokens by sampling, vLLM's v1 GPU worker keeps the draft's full logits and
verifies each draft against the target's distribution; `rejection_sample` begins with
this kernel, which reduces every draft position's target and draft logits to per-block
statistics (maximum and sum of exponentials, or the maximum's column for a greedy request)
that its later kernels combine into log-sum-exps and an argmax.  The grid is (logits rows,
8192-column blocks): each program reads one 8192-column tile of fp32 target logits (and,
for a sampling request, the same tile of the draft's cached logits, divided by the
temperature) and reduces it in registers; bonus rows return at once.  Memory-bound: the
floor is reading every draft row's target logits and every sampling draft row's cached
draft logits once.  Both trials are Qwen3-32B verified against a Qwen3-0.6B draft model
(the same 151,936-token vocabulary; the draft's bf16 head logits cached) with 4 draft
tokens per request (5 logits rows, the fifth the bonus), every fourth request greedy: a
step of 32 requests (160 rows, 3,040 programs) and one of 256 (1,280 rows, 24,320
programs).  The timed call adds the per-row combine of the partials by torch (launcher.py
says why).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_rejection_stats", "vllm_draft_logits_row")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def draft_rows(d: Mapping[str, int]) -> tuple[int, int]:
    """(sampling draft rows, greedy draft rows): every fourth request greedy, as
    reference.py makes them; the bonus rows get no statistics."""
    greedy = d["reqs"] // 4
    return (d["reqs"] - greedy) * d["drafts"], greedy * d["drafts"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every draft row's fp32 target logits read once, every sampling draft row's cached
    draft logits once (the spec's dtype), the per-row slot, position and temperature, and
    the five 8192-column partial buffers written and read back by the combine."""
    sampled, greedy = draft_rows(d)
    rows = d["reqs"] * (d["drafts"] + 1)
    blocks = -(-d["vocab"] // 8192)
    return (
        (sampled + greedy) * d["vocab"] * 4
        + sampled * d["vocab"] * ELEMENT_SIZE[dtype]
        + rows * 12
        + 2 * 5 * rows * blocks * 4
        + rows * 16
    )


def flops(d: Mapping[str, int]) -> int:
    """Per target element of a sampling row a subtract, an exp and an add (3), per draft
    element a divide more (4), per element of a greedy row a compare (1)."""
    sampled, greedy = draft_rows(d)
    return sampled * d["vocab"] * 7 + greedy * d["vocab"]


_make_inputs = _common.forward_make_inputs("vllm_rejection_stats", "reqs", "drafts", "vocab")
_reference = _common.forward_reference("vllm_rejection_stats")
_baselines = _common.forward_baselines(
    "vllm_rejection_stats",
    (
        "torch",
        "torch",
        "the same by torch ops: whole-row logsumexp and argmax of every row, the draft rows "
        "gathered and divided by the temperature, masked by row kind",
        "torch_stats",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_rejection_stats.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "vocabulary columns per program (one tile reduced in registers, no loop); "
         "None: vLLM's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_rejection_stats",
    description=(
        "vLLM's rejection-sampling logits statistics (v0.34.0, "
        "_compute_local_logits_stats_kernel): one program per logits row and 8192-column "
        "block reduces the fp32 target logits and the cached draft logits over the "
        "temperature to a maximum and a sum of exponentials (a greedy row: the maximum's "
        "column), then a per-row combine by torch"
    ),
    dims=(
        Dim("reqs", "requests of the verification step", "batch"),
        Dim("drafts", "draft tokens per request (logits rows: drafts + 1)", "query_len"),
        Dim("vocab", "vocabulary size (target and draft alike)", "row_len"),
    ),
    trials=(
        Trial(
            "verify_32_qwen3_32b_draft_0p6b",
            {"reqs": 32, "drafts": 4, "vocab": 151936},
            "a verification step of 32 Qwen3-32B requests against a Qwen3-0.6B draft model "
            "with 4 draft tokens each (151,936-token vocabulary, 160 rows, 8 greedy "
            "requests): 160 x 19 programs, 107 MB moved (bf16 draft logits)",
        ),
        Trial(
            "verify_256_qwen3_32b_draft_0p6b",
            {"reqs": 256, "drafts": 4, "vocab": 151936},
            "a verification step of 256 Qwen3-32B requests against a Qwen3-0.6B draft "
            "model with 4 draft tokens each (1,280 rows, 64 greedy requests): 1280 x 19 "
            "programs, 857 MB moved (bf16 draft logits)",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of exponentials over the row against fp64 (-inf where no statistics,
    # argmax exact)
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="rejection_stats",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
