"""vLLM's sampling penalties (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_penalties` and never committed.

Why this one as the set's in-place logits kernel: whenever a request of a decoding step
asks for a repetition, frequency or presence penalty (OpenAI-style APIs expose all three),
the v1 GPU worker's sampler runs it over every sampled row of the step, in place on the
fp32 logits, before the temperature and the draw.  Memory-bound with no reuse across
columns: each program reads 8192 logits, its request's 8192 int32 output counts and 256
words of its prompt bit mask, expands the mask into bits in registers, counts the row's
earlier draft tokens into the counts by comparing each with every column (a loop as long
as the row's place among its request's drafts), and writes the logits back.  The counts
are twice the logits' bytes per column again, once per request.  Both trials are Qwen3-8B
(151,936-token vocabulary), every request penalized: an 8-request decode step (152
programs) and a speculative-decoding step of 256 requests with 3 draft tokens each (1,024
rows, 1.4 GB moved).  Output: the logits (written in place).  The floor is reading and
writing the logits once and reading each request's counts and prompt mask once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_penalties")

CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 logits read and written once; each request's int32 counts row and its
    prompt bit mask read once, its three fp32 penalties once; each row's int32 slot, place
    and input id once."""
    rows = d["reqs"] * d["qlen"]
    words = -(-d["vocab"] // 32)
    return 8 * rows * d["vocab"] + d["reqs"] * (4 * d["vocab"] + 4 * words + 12) + 12 * rows


def flops(d: Mapping[str, int]) -> int:
    """Per column of a row: the repetition scale applied (1), the frequency and presence
    penalties multiplied and subtracted (2 each); the draft comparisons are integer."""
    return 5 * d["reqs"] * d["qlen"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("vllm_penalties", "reqs", "qlen", "vocab")
_reference = _common.forward_reference("vllm_penalties")
_baselines = _common.forward_baselines(
    "vllm_penalties",
    (
        "torch",
        "torch",
        "the same by torch ops, in place: the rows' counts gathered with the earlier "
        "drafts added, the prompt bits unpacked, the three penalties applied",
        "torch_penalties",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_penalties.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "vocabulary columns per program (a multiple of the mask's 32-bit word); None: "
         "vLLM's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loop over the row's earlier drafts; None: "
         "Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_penalties",
    description=(
        "vLLM's sampling penalties (v0.34.0, _penalties_kernel): per row and 8192 vocabulary "
        "columns, the request's output counts (plus the row's earlier drafts) and prompt "
        "bit mask applied as repetition, frequency and presence penalties, in place on fp32 "
        "logits"
    ),
    dims=(
        Dim("reqs", "requests in the step", "batch"),
        Dim(
            "qlen",
            "rows per request: its last accepted token and its drafts (1: plain decode)",
            "query_len",
        ),
        Dim("vocab", "vocabulary size", "row_len"),
    ),
    trials=(
        Trial(
            "decode_8_qwen3_8b",
            {"reqs": 8, "qlen": 1, "vocab": 151936},
            "an 8-request decode step of Qwen3-8B (151,936-token vocabulary), every request "
            "penalized: 8 x 19 programs, 15 MB moved",
        ),
        Trial(
            "spec_decode_256x4_qwen3_8b",
            {"reqs": 256, "qlen": 4, "vocab": 151936},
            "a speculative-decoding step of the same model, 256 requests with 3 draft tokens "
            "each (1,024 rows, the later rows counting their earlier drafts): 19,456 "
            "programs, 1.4 GB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # fp32 throughout; the kernel multiplies by 1 / penalty where the reference divides
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="penalties",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
