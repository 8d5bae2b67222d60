"""DiffusionGemma's one-pass row statistics (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_diffusion_row_stats` and never committed.

Why this one as the set's fused sampler statistics: a block-diffusion model (DiffusionGemma)
denoises a whole canvas of positions per step, and its sampler needs, for every position,
the argmax of the logits, a Gumbel-max sample of logits / T, the softmax's entropy (the
confidence and entropy-bound acceptance tests) and, for a self-conditioned step, the
softmax itself in the embedding's dtype (the input of the self-conditioning matmul).
vLLM's kernel gets all four from one program per canvas row: an online maximum with two
running sums (exp(d) and d exp(d)), two running argmaxes, Philox uniforms drawn inline
(tl.rand, ten rounds per logit), then a second pass storing exp(d) / z.  Both trials take
DiffusionGemma's Gemma vocabulary (262,144) and a self-conditioned step: one request with
a 32-position canvas (vLLM's fallback canvas length: 32 programs, 17 MB read) and a tile of
4 requests with 256-position canvases (the configuration default: 1024 programs, 537 MB
read).  Outputs: the argmax and sample (int64), the entropy (fp32) and the probs (the
logits' dtype).  The floor is reading the logits once and writing the probs once; the
Philox integer work (about 60 instructions a logit) is not counted in the flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_diffusion_row_stats")

CONTEXTS = ("reduction", "memory-bound")
ELEMENT_SIZE = _common.ELEMENT_SIZE
FLOPS_PER_LOGIT = 12  # scale, max, exp, two sums, two logs, noise add, max, exp, divide


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once and the probs written once in the dtype, each row's argmax,
    sample (int64) and entropy (fp32) written, the temperatures read."""
    rows = d["reqs"] * d["canvas"]
    return 2 * rows * d["vocab"] * ELEMENT_SIZE[dtype] + 20 * rows + 4 * d["reqs"]


def flops(d: Mapping[str, int]) -> int:
    """About 12 floating-point operations a logit over the two passes (Philox not counted)."""
    return FLOPS_PER_LOGIT * d["reqs"] * d["canvas"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("vllm_diffusion_row_stats", "reqs", "canvas", "vocab")
_reference = _common.forward_reference("vllm_diffusion_row_stats")
_baselines = _common.forward_baselines(
    "vllm_diffusion_row_stats",
    (
        "torch",
        "torch",
        "vLLM's own torch form (sample_row_stats_reference) with the kernel's Philox noise: "
        "scaled logits, log_softmax, exp, entropy, two argmaxes",
        "torch_row_stats",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_diffusion_row_stats.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 512, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "columns per loop step (both passes); None: vLLM's 4096"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the two loops; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_diffusion_row_stats",
    description=(
        "DiffusionGemma's one-pass row statistics (vLLM v0.34.0, _row_stats_kernel): one "
        "program per canvas row walks the vocabulary in 4096-column steps for the argmax, a "
        "Philox Gumbel-max sample and the softmax entropy, then writes the softmax"
    ),
    dims=(
        Dim("reqs", "decode requests of the tile", "batch"),
        Dim("canvas", "canvas positions per request (rows per request)", "rows"),
        Dim("vocab", "vocabulary size (logits per row)", "row_len"),
    ),
    trials=(
        Trial(
            "denoise_1x32_diffusion_gemma",
            {"reqs": 1, "canvas": 32, "vocab": 262144},
            "a self-conditioned DiffusionGemma denoise step of one request with vLLM's "
            "fallback 32-position canvas over Gemma's 262,144-token vocabulary: 32 programs, "
            "17 MB read and 17 MB written in bf16",
        ),
        Trial(
            "denoise_4x256_diffusion_gemma",
            {"reqs": 4, "canvas": 256, "vocab": 262144},
            "a tile of 4 requests with the configuration's default 256-position canvas: "
            "1024 programs, 537 MB read and 537 MB written in bf16",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # ids exact (the noise recomputed bit for bit), the entropy from fp32 running sums, the
    # probs one rounding to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="row_stats",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
