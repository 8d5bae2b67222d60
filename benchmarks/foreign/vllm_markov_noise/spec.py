"""DSpark's precomputed Gumbel noise (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_markov_noise vllm_gumbel_sample` and never committed.

Why this one: Kimi K3's DSpark speculator drafts its tokens one Markov step at a time, and
its fused sampler draws each step's token as the Gumbel-max of the step's logits.  When a
batch samples at most 32 rows (requests x draft steps: low-concurrency decode, where the
drafts matter most), the noise of all the steps is computed ahead on a side stream, beside
the lm_head, by this kernel: one program per (1,024 token ids, row x step) hashes (the
request seed mixed with the step, the sampled position plus a salt, the token id) with
MurmurHash3 into a uniform and stores -log1p(-u) (an 8-term series or a log), so that the
step kernels, whose [16, 64] tiles are mostly padding rows at one request, read it instead
of hashing.  A pure generator: no per-element input, integer hashing and a polynomial per
value, one fp32 store each.  Both trials are Kimi K3's 163,840-token vocabulary with four
draft steps: the largest batch the path takes (8 requests, 32 rows: 5,120 programs, 21 MB
written) and one request (4 rows: 640 programs, 2.6 MB).  Output: the noise (fp32,
recomputed by torch from the same hash).  The floor is writing the noise once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_markov_noise", "vllm_gumbel_sample")

CONTEXTS = ("elementwise", "compute-bound")
# fp32 operations per value, counted in the kernel's code: the uniform from the hash's two
# 16-bit halves (4), the 8-term series of log(1 - u) (15), the direct form's subtraction,
# clamp and log (3) and the final negation (1); the integer hash is not counted.
VALUE_FLOPS = 23


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 noise written once; per row and step its int64 slot and position, and the
    slot's int64 seed."""
    rows = d["reqs"] * d["steps"]
    return 4 * rows * d["vocab"] + 24 * rows


def flops(d: Mapping[str, int]) -> int:
    return VALUE_FLOPS * d["reqs"] * d["steps"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("vllm_markov_noise", "reqs", "steps", "vocab", "slots")
_reference = _common.forward_reference("vllm_markov_noise")
_baselines = _common.forward_baselines(
    "vllm_markov_noise",
    (
        "torch",
        "torch",
        "the same field by torch ops: the [reqs, steps, vocab] hash in int64, the series "
        "and the log, one pass",
        "torch_markov_noise",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_markov_noise.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "token ids per program (its tile of the vocabulary); None: vLLM's 1024 "
         "(NOISE_BLOCK)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipeline stages asked of the compiler (the kernel has no loop); None: Triton's "
         "default 3 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_markov_noise",
    description=(
        "vLLM's DSpark precomputed Gumbel noise for Kimi K3's fused Markov draft sampling "
        "(v0.34.0, _markov_noise_kernel): per (1024 token ids, request x draft step), a "
        "MurmurHash3 uniform of (step-mixed seed, salted position, token id) and "
        "-log1p(-u) stored as fp32"
    ),
    dims=(
        Dim("reqs", "requests in the batch (each samples every draft step)", "batch"),
        Dim("steps", "draft steps sampled per request (num_speculative_steps)", "rows"),
        Dim("vocab", "vocabulary size (the noise's row length)", "row_len"),
        Dim("slots", "request slots in the speculator's state pool (seeds)"),
    ),
    trials=(
        Trial(
            "draft_noise_8x4_kimi_k3",
            {"reqs": 8, "steps": 4, "vocab": 163840, "slots": 256},
            "8 requests x 4 draft steps of Kimi K3 (163,840-token vocabulary), the most "
            "rows the precomputed-noise path takes: 160 x 32 programs, 21 MB of fp32 noise",
        ),
        Trial(
            "draft_noise_1x4_kimi_k3",
            {"reqs": 1, "steps": 4, "vocab": 163840, "slots": 256},
            "one request x 4 draft steps of the same model (the c1 case the path was "
            "written for): 160 x 4 programs, 2.6 MB of noise",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # the same hash and the same fp32 series or log; contraction of the series into FMAs
    # may move the last bit
    tolerances={"bfloat16": 1e-5, "float16": 1e-5, "float32": 1e-5},
    entry_point="markov_noise",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
