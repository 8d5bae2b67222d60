"""SGLang's causal conv1d decode update (SGLang v0.5.9, Apache-2.0; adapted there from
vLLM), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_conv1d_update` and never committed.

Why this one: on CUDA, SGLang's hybrid linear-attention backend runs this Triton kernel (its
prefill conv is sgl_kernel's CUDA one) at every decode step of every gated-delta-rule layer,
before the recurrent update: Qwen3-Next's 8192 mixed q/k/v channels, Kimi Linear's q, k and
v convolutions apart.  A depthwise, width-4 convolution over time with its window kept in a
slot pool: per sequence and 256 channels, load the slot index, the three state columns,
shift the new token in, store the window back in place, dot with the weights in fp32, SiLU,
one output row.  No loop, no reduction across channels, no tensor cores: a scatter-gather
read-modify-write of the pool whose floor is moving the sequences' state twice.  The
nearest spec is `vllm_causal_conv1d`, the prefill kernel of the same algorithm in vLLM,
which walks each sequence's tokens in BLOCK_M chunks with the taps carried in registers and
writes the final state once; here every program handles one token, and the work is the
pool's indexed in-place shift (its layout makes each state column a contiguous run of
channels).  `sglang_mamba_state_update` and `vllm_gdn_gated_decode` are the decode step's
next kernel in Mamba-2 and GDN layers: state tiles updated in place too, but a dim x dstate
matrix per head rather than width - 1 columns per channel.  Trials: a 256-sequence decode
step through a Qwen3-Next-80B-A3B GDN layer (8192 channels), and an 8-sequence one through
one of Kimi-Linear-48B-A3B's KDA convolutions (4096 channels).  Outputs: the convolved
row (the dtype) and the pool after the step (in place).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_conv1d_update")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The sequences' width - 1 state columns read and written, x read and the output
    written, the weights read once, the slot ids (int32)."""
    es = ELEMENT_SIZE[dtype]
    state = 2 * d["batch"] * (d["width"] - 1) * d["dim"]
    return es * (state + 2 * d["batch"] * d["dim"] + d["dim"] * d["width"]) + 4 * d["batch"]


def flops(d: Mapping[str, int]) -> int:
    """A width-long multiply-add per sequence and channel (SiLU not counted)."""
    return 2 * d["batch"] * d["dim"] * d["width"]


_make_inputs = _common.forward_make_inputs("sglang_conv1d_update", "batch", "dim", "width", "slots")
_reference = _common.forward_reference("sglang_conv1d_update")
_baselines = _common.forward_baselines(
    "sglang_conv1d_update",
    (
        "torch",
        "torch",
        "the same step by torch's element-wise kernels (fp32): the slots' windows gathered, "
        "weighted, summed and SiLU'd, the shifted windows scattered back in place",
        "torch_conv1d_update",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_conv1d_update.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 32, 64, 128, 256, 512, 1024), "tile_n",
         "channels per program (a sequence's row is cut into dim / block_n programs); None: "
         "SGLang's 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_conv1d_update",
    description=(
        "SGLang's causal conv1d decode update (v0.5.9, the hybrid linear-attention backend's "
        "CUDA decode path): per sequence and 256 channels, the slot's width - 1 state columns "
        "shifted in place with the new token, a width-4 depthwise dot in fp32 and SiLU, bf16"
    ),
    dims=(
        Dim("batch", "sequences in the decode step (one token each)", "batch"),
        Dim("dim", "convolved channels (the layer's q, k and v projections)", "row_len"),
        Dim("width", "convolution width (the state keeps width - 1 columns)"),
        Dim("slots", "conv-state pool slots (the sequences use batch of them)"),
    ),
    trials=(
        Trial(
            "decode_qwen3_next_80b_b256",
            {"batch": 256, "dim": 8192, "width": 4, "slots": 512},
            "a 256-sequence decode step through a Qwen3-Next-80B-A3B gated-delta-rule layer's "
            "conv (16 key heads x 2 of 128 plus 32 value heads of 128 = 8192 channels, width "
            "4): 8192 programs, 33.6 MB moved, 25 MB of it the pool's columns read and written",
        ),
        Trial(
            "decode_kimi_linear_48b_b8",
            {"batch": 8, "dim": 4096, "width": 4, "slots": 64},
            "an 8-sequence decode step through one of Kimi-Linear-48B-A3B's KDA convolutions "
            "(32 heads of 128, width 4): 128 programs, 0.56 MB moved",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the output rounded once from an fp32 sum; the shifted state is copied exactly
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="conv1d_update",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
