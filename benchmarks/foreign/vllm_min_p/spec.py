"""vLLM's min-p filter (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody here
wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_min_p` and never committed.

Why this one as the set's row-reduce-then-filter kernel: min-p sampling (keep the tokens
whose probability is at least min_p times the top token's) is a standard request parameter
of vLLM's OpenAI-compatible server, recommended by several model cards; whenever a request
of a step sets it, the v1 GPU worker's sampler runs this kernel over every logits row of
the step, in place on the fp32 logits, after the temperature and before top-k / top-p and
the draw.  One program per row walks the whole vocabulary twice in 1024-column tiles: a
running maximum first, then every tile stored back with the values below max + log(min_p)
set to -inf.  Memory-bound with no reuse across rows, and a grid only as large as the rows:
a decode step of a few dozen requests leaves most SMs idle, each program streaming a 0.5 MB
row twice.  Both trials have every request sampling with a min-p: a 32-request decode step
of Llama 3.1 8B (128,256-token vocabulary, 32 programs) and a speculative-decoding step of
Qwen3-8B (151,936-token vocabulary) with 256 requests and 3 draft tokens each (1,024 rows).
Output: the logits (written in place).  The floor is reading and writing every row once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_min_p")

CONTEXTS = ("reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 logits read and written once (the kernel reads each row twice); each row's
    int32 slot and its request's fp32 min-p once."""
    rows = d["reqs"] * d["qlen"]
    return 8 * rows * d["vocab"] + 8 * rows


def flops(d: Mapping[str, int]) -> int:
    """None counted: a maximum and a comparison per value, one log per row."""
    return 0


_make_inputs = _common.forward_make_inputs("vllm_min_p", "reqs", "qlen", "vocab")
_reference = _common.forward_reference("vllm_min_p")
_baselines = _common.forward_baselines(
    "vllm_min_p",
    (
        "torch",
        "torch",
        "the same by torch ops, in place: the rows' maxima (amax), their thresholds, one "
        "masked_fill with -inf",
        "torch_min_p",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_min_p.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 256, 512, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "vocabulary columns per loop step (both passes); None: vLLM's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the two loops over the row; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_min_p",
    description=(
        "vLLM's min-p filter (v0.34.0, _min_p_kernel): one program per logits row finds the "
        "row's maximum in 1024-column tiles, then stores -inf over the values below "
        "max + log(min_p), in place on fp32 logits"
    ),
    dims=(
        Dim("reqs", "requests in the step, every one sampling with a min-p", "batch"),
        Dim(
            "qlen",
            "logits rows per request: its sampled position and its drafts (1: plain decode)",
            "query_len",
        ),
        Dim("vocab", "vocabulary size", "row_len"),
    ),
    trials=(
        Trial(
            "decode_32_llama31_8b",
            {"reqs": 32, "qlen": 1, "vocab": 128256},
            "a 32-request decode step of Llama 3.1 8B Instruct (128,256-token vocabulary), "
            "every request with a min-p: 32 programs, 32.8 MB moved",
        ),
        Trial(
            "spec_decode_256x4_qwen3_8b",
            {"reqs": 256, "qlen": 4, "vocab": 151936},
            "a speculative-decoding step of Qwen3-8B (151,936-token vocabulary), 256 "
            "requests with 3 EAGLE-3 draft tokens each (1,024 rows): 1,024 programs, "
            "1.24 GB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # a copy of the logits with -inf below each row's threshold: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="min_p",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
