"""vLLM's fused short convolution over Inkling's paged conv cache (vLLM v0.34.0,
Apache-2.0), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py vllm_paged_sconv` and never committed.

Why this one: Inkling runs a depthwise causal short convolution (width 4, plus the input as
residual) on four streams of every layer (K, V, attention output, MLP output), and vLLM
keeps their history not in a per-sequence conv state but in a paged sliding-window cache
that the KV-cache manager allocates like attention's.  One launch per stream and step both
stores the step's inputs at their slots and convolves each token against the taps ending at
its position, the in-step taps read from x and the earlier ones from the cache through the
block table.  The same path serves prefill chunks and decode steps.  Both trials are the MLP
output stream of Inkling's configuration defaults (hidden 1536, 4 kv heads of 128, so 384
channels a head at columns 640..1023 of a 1024-wide packed head; blocks of 4 tokens, the
conv width), TP 1: sixteen 512-token prefill chunks after 1536 cached tokens, and a
64-request decode step.  Outputs: the stream's output (in x's dtype) and the cache (written
in place).  The floor is x read once, the output and the cache rows written once, and each
request's three earlier positions read once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_paged_sconv")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once, the output and the step's cache rows written once, each request's
    width - 1 earlier positions read from the cache, the weight once, and per token its
    int64 position and slot, int32 request and first row and int32 block table entry."""
    e = ELEMENT_SIZE[dtype]
    tokens = d["reqs"] * d["qlen"]
    channels = d["heads"] * d["ws"]
    earlier = d["reqs"] * min(d["width"] - 1, d["ctx"])
    return (
        3 * tokens * channels * e + earlier * channels * e + channels * d["width"] * e + 28 * tokens
    )


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per tap, plus the residual add, per token and channel."""
    return d["reqs"] * d["qlen"] * d["heads"] * d["ws"] * (2 * d["width"] + 1)


_DIMS = ("reqs", "qlen", "ctx", "heads", "ws", "off_s", "head_size", "width")
_make_inputs = _common.forward_make_inputs("vllm_paged_sconv", *_DIMS)
_reference = _common.forward_reference("vllm_paged_sconv")
_baselines = _common.forward_baselines(
    "vllm_paged_sconv",
    (
        "torch",
        "torch",
        "the same by torch ops: width gathered taps from x and the cache, fp32 sums, then "
        "the inputs scattered into the cache",
        "torch_paged_sconv",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_paged_sconv.launcher")


TRITON_KNOBS = (
    Knob("block_t", "int", (None, 1, 2, 4, 8, 16, 32), "tile_m",
         "tokens per program; None: vLLM's 8"),
    Knob("block_c", "int", (None, 64, 128, 256, 512, 1024), "tile_n",
         "flat heads x ws channels per program; None: vLLM's channel power of two, at most "
         "256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipeline stages asked of the compiler (the tap loop is unrolled); None: Triton's "
         "default, as vLLM passes none"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_paged_sconv",
    description=(
        "vLLM's fused short convolution over Inkling's paged conv cache (v0.34.0, "
        "_fused_sconv_kernel): one program per 8 tokens and 256 channels stores the step's "
        "inputs at their slots and sums the 4 depthwise taps from x or the paged cache, "
        "residual added, 4 warps"
    ),
    dims=(
        Dim("reqs", "requests in the step (equal shares)", "batch"),
        Dim("qlen", "new tokens per request", "query_len"),
        Dim("ctx", "tokens each request has cached before the step (only the last width - 1 read)"),
        Dim("heads", "kv heads of the packed conv cache", "num_heads"),
        Dim("ws", "channels of the stream per head", "head_dim"),
        Dim("off_s", "first column of the stream in the packed head"),
        Dim("head_size", "packed head width of the conv cache (all four streams)"),
        Dim("width", "conv width (taps), also the cache's block size"),
    ),
    trials=(
        Trial(
            "decode_64_inkling_mlp",
            {
                "reqs": 64,
                "qlen": 1,
                "ctx": 3000,
                "heads": 4,
                "ws": 384,
                "off_s": 640,
                "head_size": 1024,
                "width": 4,
            },
            "a 64-request decode step of Inkling's MLP-output stream (4 heads of 384 "
            "channels, 1536 in all): 8 x 6 programs, each token reading its 3 earlier taps "
            "from the cache, 1.2 MB moved",
        ),
        Trial(
            "prefill_16x512_inkling_mlp",
            {
                "reqs": 16,
                "qlen": 512,
                "ctx": 1536,
                "heads": 4,
                "ws": 384,
                "off_s": 640,
                "head_size": 1024,
                "width": 4,
            },
            "sixteen 512-token prefill chunks after 1536 cached tokens, the same stream: "
            "1024 x 6 programs, 75 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    shape_metrics=lambda d: {"row_len": d["heads"] * d["ws"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of 4 taps in the kernel's order, rounded once to the output dtype
    tolerances={"bfloat16": 2e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="paged_sconv",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
