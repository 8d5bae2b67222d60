"""FLA's short-convolution backward (flash-linear-attention, fla-core 0.6.0, MIT), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py fla_causal_conv1d_bwd` and never committed.

Why this one: the backward of the short causal depthwise convolution (width 4, then SiLU)
that every q, k and v projection of FLA's linear-attention layers (gated DeltaNet, KDA,
DeltaNet, ...) runs through when they are trained with FLA's default Triton backend; the
wrapped convolution kernels are forward passes (vLLM's prefill, SGLang's decode update) and a
2-D weight gradient.  One program per (64-step time chunk, 16 channels, sequence) does two
things at once: a stencil (dx is the SiLU-gated output gradient correlated with the filter,
each tap re-reading the gradient W - 1 rows further on) and a column reduction (each tap's
filter-gradient partial summed over the chunk's 64 rows), whose per-chunk fp32 partials
FLA then sums over the batch and chunks with torch.  The time chunk sets both the halo
re-read and how many partials there are; the channel tile and the warps set how the tile
maps onto threads; all three are launch choices FLA leaves to a chunk-size default and an
autotuner.  Both trials are training steps at real widths: Kimi-Linear-48B-A3B's KDA
projections (32 heads x 128 = 4,096 channels) over 4 x 8,192 tokens, and the key projection
of a gated DeltaNet layer at Qwen3-Next-80B-A3B's width (16 key heads x 128 = 2,048
channels) over one 4,096-token sequence.  Outputs: dx [batch, T, D] in the dtype and the
filter gradient [D, W] in the filter's dtype.  The floor is reading x, the pre-activation
and dy and writing dx once, plus the partials written and read back once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "fla_causal_conv1d_bwd")

ELEMENT_SIZE = _common.ELEMENT_SIZE
FLA_CHUNK = 64  # the launch's time chunk, which sets how many fp32 partials there are
# a stencil over the time axis with a per-chunk column sum, no tensor cores
CONTEXTS = ("reduction", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x, the pre-activation y and dy [batch, T, D] read once and dx written once in the
    dtype (the taps' overlapping re-reads of dy and y, W - 1 rows a chunk, not counted); the
    filter [D, W] read once and its gradient written once in the dtype; FLA's default
    64-step chunks' fp32 partials [batch x cdiv(T, 64), D, W] written by the kernel and read
    back once by the sum (a knob that changes the chunk changes that traffic: the floor
    keeps FLA's)."""
    e = ELEMENT_SIZE[dtype]
    b, t, c, w = d["batch"], d["seqlen"], d["channels"], d["width"]
    partials = 2 * 4 * b * -(-t // FLA_CHUNK) * c * w
    return 4 * e * b * t * c + 2 * e * c * w + partials


def flops(d: Mapping[str, int]) -> int:
    """Per element of the [batch, T, D] tensors and filter tap: a multiply and an add for dx
    and a multiply and an add for the filter gradient (4 W); SiLU's gradient (a sigmoid and
    4 more FLOPs per element and tap, recomputed at every tap) and the partials' sum not
    counted."""
    return 4 * d["batch"] * d["seqlen"] * d["channels"] * d["width"]


_make_inputs = _common.forward_make_inputs(
    "fla_causal_conv1d_bwd", "batch", "seqlen", "channels", "width"
)
_reference = _common.forward_reference("fla_causal_conv1d_bwd")
_baselines = _common.forward_baselines(
    "fla_causal_conv1d_bwd",
    (
        "torch",
        "torch",
        "the same by torch ops in the input dtype: SiLU's gradient, W shifted multiply-adds "
        "for dx and W shifted products summed in fp32 for the filter gradient",
        "torch_causal_conv1d_bwd",
    ),
)


_launch_info = _common.triton_launch_info("foreign.fla_causal_conv1d_bwd.launcher")


TRITON_KNOBS = (
    Knob("block_t", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "time steps per program (the chunk each filter-gradient partial sums); None: FLA's "
         "chunk_size, 64"),
    Knob("block_d", "int", (None, 16, 32, 64, 128), "tile_n",
         "channels per program; None: the first autotune configuration's 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: the first autotune configuration's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="fla_causal_conv1d_bwd",
    description=(
        "FLA's short-convolution backward (fla-core 0.6.0, causal_conv1d_bwd_kernel as "
        "ShortConvolution's backward launches it with SiLU, no bias or state): per 64 time "
        "steps x 16 channels of a sequence, the SiLU gradient of dy at each of the W taps' "
        "shifted rows times the tap's filter value summed into dx, and each tap's column sum "
        "of that gradient times x stored as an fp32 filter-gradient partial; the partials "
        "summed by torch"
    ),
    dims=(
        Dim("batch", "sequences (fixed length, no cache state)", "batch"),
        Dim("seqlen", "time steps per sequence (64 a program)"),
        Dim("channels", "convolved channels (heads x head dim of one projection)"),
        Dim("width", "filter taps (FLA's layers use 4)"),
    ),
    # A large training micro-batch at Kimi-Linear's projection width first, then one
    # 4,096-token sequence through a narrower gated DeltaNet key projection.
    trials=(
        Trial(
            "train_kimi_linear_48b_4x8k",
            {"batch": 4, "seqlen": 8192, "channels": 4096, "width": 4},
            "the backward of one of Kimi-Linear-48B-A3B's KDA q/k/v short convolutions (32 "
            "heads x 128 = 4,096 channels, width 4, SiLU) over a 4 x 8,192-token training "
            "micro-batch: 256 channel tiles x 128 chunks x 4 = 131,072 programs of 64 x 16; "
            "1.14 GB moved in bf16 (67 MB of it the 512 chunks' fp32 partials, written and "
            "read back), 2.1 GFLOP",
        ),
        Trial(
            "train_qwen3_next_key_1x4k",
            {"batch": 1, "seqlen": 4096, "channels": 2048, "width": 4},
            "the backward of a gated DeltaNet layer's key short convolution at Qwen3-Next-"
            "80B-A3B's width (16 key heads x 128 = 2,048 channels, width 4, SiLU) over one "
            "4,096-token sequence: 128 channel tiles x 64 chunks = 8,192 programs; 71 MB "
            "moved in bf16 (4.2 MB of it the partials), 134 MFLOP",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 arithmetic; dx rounded to the dtype once, the filter gradient a sum of fp32
    # partials over batch x T steps rounded once
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 2e-4},
    entry_point="causal_conv1d_bwd",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
