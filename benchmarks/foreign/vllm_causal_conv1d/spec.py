"""vLLM's causal depthwise conv1d prefill (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by `scripts/
fetch_third_party.py vllm_causal_conv1d` and never committed.

Why this one as the set's stencil kernel: every gated-delta-net layer of Qwen3-Next (and
every Mamba-2 layer of the hybrid models vLLM serves) runs it on the prefill path, right
before the linear attention: a 4-tap causal filter per channel along each packed sequence,
with SiLU, its first taps reading the sequence's cached conv state when it continues a
cached prefix, its last inputs written back to the state pool.  Memory-bound with almost
no reuse: each program slides over 8 tokens of 256 channels, keeping three earlier inputs
in registers, so every input is read once (plus three rows per 8-token chunk) and every
output written once.  Both trials are Qwen3-Next-80B's 8192 conv channels (q, k and v of
16 + 16 + 32 heads of 128) with a 4-tap filter: eight 32-token prompts, every other one
continuing a cached prefix (a launch-sized grid), and one 8192-token prompt.  Outputs: y
[tokens, dim] and the state pool (written in place).  The floor is reading the inputs,
filters and used states once and writing the outputs and new states once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_causal_conv1d")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The inputs read and the outputs written once, the filters read once, each sequence's
    new state written once and the states of the continuing half read once, the int32
    bounds and state lines read once."""
    es = ELEMENT_SIZE[dtype]
    tokens = d["seqs"] * d["seqlen"]
    state = es * (d["width"] - 1) * d["dim"]
    return (
        2 * es * tokens * d["dim"]
        + es * d["dim"] * d["width"]
        + state * (d["seqs"] + d["seqs"] // 2)
        + 4 * (2 * d["seqs"] + 1)
    )


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per tap, channel and token (the SiLU not counted)."""
    return 2 * d["width"] * d["seqs"] * d["seqlen"] * d["dim"]


_make_inputs = _common.forward_make_inputs("vllm_causal_conv1d", "seqs", "seqlen", "dim", "width")
_reference = _common.forward_reference("vllm_causal_conv1d")
_baselines = _common.forward_baselines(
    "vllm_causal_conv1d",
    (
        "torch",
        "torch",
        "the same by torch: prefixes prepended, one grouped F.conv1d, SiLU, the states "
        "written back",
        "torch_causal_conv1d",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_causal_conv1d.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 4, 8, 16, 32, 64), "rows_per_program",
         "tokens of one sequence per program (slid over one by one); None: vLLM's 8"),
    Knob("block_n", "int", (None, 64, 128, 256, 512, 1024), "tile_n",
         "channels per program; None: vLLM's 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the token loop; None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_causal_conv1d",
    description=(
        "vLLM's causal depthwise conv1d prefill (v0.34.0, _causal_conv1d_fwd_kernel): one "
        "program per 8 tokens of a packed sequence and 256 channels slides a 4-tap filter "
        "with SiLU, reading cached conv states and writing the new ones in place"
    ),
    dims=(
        Dim("seqs", "sequences packed in the prefill (equal lengths)", "batch"),
        Dim("seqlen", "tokens per sequence"),
        Dim("dim", "channels (the layer's conv dimension)", "row_len"),
        Dim("width", "filter taps (4)"),
    ),
    trials=(
        Trial(
            "short_prompts_qwen3_next",
            {"seqs": 8, "seqlen": 32, "dim": 8192, "width": 4},
            "eight 32-token prompts through a Qwen3-Next-80B gated-delta-net layer's conv "
            "(8192 channels, 4 taps), four of them continuing cached prefixes: 1024 "
            "programs, 9.0 MB moved",
        ),
        Trial(
            "prefill_qwen3_next_8k",
            {"seqs": 1, "seqlen": 8192, "dim": 8192, "width": 4},
            "an 8192-token prompt through the same conv: 32768 programs, 268 MB moved",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of 4 products each rounded to the dtype, one rounding of the output
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="causal_conv1d",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
