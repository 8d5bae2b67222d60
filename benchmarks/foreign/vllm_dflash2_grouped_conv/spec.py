"""vLLM's DFlash2 grouped convolution (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_dflash2_grouped_conv` and never committed.

Why this one: DFlash2 is a block-diffusion draft model for speculative decoding (vLLM's
`DFlash2Qwen3ForCausalLM`, served with the v1 GPU runner's DFlash2 speculator); each of its
decoder layers convolves its attention input and its MLP input, and their outputs, along the
draft block's query rows (the bonus token and the mask tokens) with a short causal filter
whose taps are a static per-channel base plus per-token, per-group offsets projected from
the hidden state.  vLLM runs this kernel four times per draft layer and step.  One program
per row and 512 or 1024 channels accumulates, per tap, (base + offset) times the row that
many positions earlier in fp32, the taps that would cross the draft block's start masked
off: a dynamic (input-dependent) depthwise convolution that resets every block, with the
group offsets broadcast over 128 channels; unlike vLLM's Mamba causal_conv1d it has no
fixed filter, no conv state and no activation.  The floor is reading x and the offsets
once and writing the output once.  Trials: a Qwen3-8B draft (hidden 4096) with 16-query
draft blocks (DFlash's b16 drafts: 15 speculative tokens); its taps (4) and group size (128)
are assumed, vLLM's wheel holding no DFlash2 checkpoint config: a 4-request decode step
(64 rows, 512 programs) and a 256-request step (4,096 rows, 16,384 programs, 68 MB moved).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_dflash2_grouped_conv")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def rows(d: Mapping[str, int]) -> int:
    return d["reqs"] * d["block"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once, the output written once, the offsets and the base read once."""
    groups = d["hidden"] // d["group"]
    elems = 2 * rows(d) * d["hidden"] + rows(d) * d["taps"] * groups + d["taps"] * d["hidden"]
    return elems * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """Per output element and tap: the coefficient's sum, the product and the accumulation."""
    return 3 * d["taps"] * rows(d) * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "vllm_dflash2_grouped_conv", "reqs", "block", "hidden", "group", "taps"
)
_reference = _common.forward_reference("vllm_dflash2_grouped_conv")
_baselines = _common.forward_baselines(
    "vllm_dflash2_grouped_conv",
    (
        "torch",
        "torch",
        "vLLM's _grouped_conv off CUDA: the coefficients broadcast per group, then one "
        "shifted, masked product per tap in torch ops",
        "torch_grouped_conv",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_dflash2_grouped_conv.launcher")


TRITON_KNOBS = (
    Knob("element_block", "int", (None, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "channels per program; None: vLLM's 1024 at 128 rows or more with a hidden size "
         "that is a multiple of 1024, else 512"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_dflash2_grouped_conv",
    description=(
        "vLLM's DFlash2 grouped convolution (v0.34.0, _dflash2_grouped_conv_kernel): one "
        "program per draft-block row and 512 or 1024 channels sums, over 4 causal taps "
        "inside the block, (static base + per-token group offset) times the earlier row, "
        "in fp32"
    ),
    dims=(
        Dim("reqs", "requests in the batch (one draft block each)", "batch"),
        Dim("block", "query rows per draft block (bonus token + speculative tokens)"),
        Dim("hidden", "the draft model's hidden size (channels)", "row_len"),
        Dim("group", "channels sharing one projected offset per tap"),
        Dim("taps", "the filter's length"),
    ),
    trials=(
        Trial(
            "qwen3_8b_dflash2_b16_256reqs",
            {"reqs": 256, "block": 16, "hidden": 4096, "group": 128, "taps": 4},
            "a DFlash2 draft layer of Qwen3-8B (hidden 4096, 16-query blocks; 4 taps and "
            "128-channel groups assumed) in a 256-request step: 4,096 rows, 16,384 "
            "programs of 1024 channels, 68 MB moved (bf16)",
        ),
        Trial(
            "qwen3_8b_dflash2_b16_4reqs",
            {"reqs": 4, "block": 16, "hidden": 4096, "group": 128, "taps": 4},
            "the same in a 4-request decode step: 64 rows, 512 programs of 512 channels "
            "(vLLM's tile below 128 rows), 1.1 MB moved (bf16)",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 coefficients and sums rounded once to the dtype, against an fp64 sum
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="grouped_conv",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
