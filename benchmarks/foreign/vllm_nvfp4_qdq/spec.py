"""vLLM's NVFP4 activation quantize-dequantize (vLLM v0.34.0, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_nvfp4_qdq` and never committed.

Why this one as the set's microscaling round trip: an NVFP4 checkpoint (ModelOpt's FP4
Llama 3.1, DeepSeek-R1 and Qwen3 releases) served where vLLM picks no native FP4 kernel
runs its emulation: each linear layer's activations are rounded to NVFP4 and back, then
multiplied in bf16 against the dequantized weight (and the NVFP4 emulation MoE does the
same to its expert inputs).  The kernel is that round trip, not a quantizer with packed
outputs: per 16-element group an fp32 absmax, a two-level scale (the layer's global fp32
scale times an e4m3-rounded block scale), each value clamped and snapped to one of the 15
E2M1 values by seven threshold compares, and the dequantized value stored in bf16.  A 2-D
grid of one program per row and 64 groups (1024 values); no loop.  Unlike the per-token
int8 and per-group fp8 quantizations already in the set, the output is the input's size
and dtype (a read and a write of the activations, no scales out) and the rounding is a
compare ladder on a 3-bit grid under a rounded scale.  Both trials are Llama 3.1 8B in
NVFP4: a 64-sequence decode step before the down projection (14336 wide: 896 programs,
3.7 MB moved) and an 8192-token prefill chunk before the QKV projection (4096 wide: 32,768
programs, 134 MB moved).  Memory-bound: the floor is the activations read and written once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_nvfp4_qdq")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The activations read once and their round trip written once, in the dtype (the
    global scale's 4 bytes not counted)."""
    return 2 * ELEMENT_SIZE[dtype] * d["tokens"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("vllm_nvfp4_qdq", "tokens", "hidden")
_reference = _common.forward_reference("vllm_nvfp4_qdq")
_baselines = _common.forward_baselines(
    "vllm_nvfp4_qdq",
    (
        "torch",
        "torch",
        "the same round trip in torch's kernels (group amax, e4m3 scale, E2M1 rounding by "
        "bucketize over the halfway points, rescale), as vLLM's non-CUDA path does it",
        "torch_nvfp4_quant_dequant",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_nvfp4_qdq.launcher")


TRITON_KNOBS = (
    Knob("tile_blocks", "int", (None, 4, 8, 16, 32, 64, 128, 256), "tile_n",
         "16-element groups per program (its [groups, 16] tile; the last program of a row "
         "masked); None: vLLM's min(64, next_pow2(hidden / 16))"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's 4 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_nvfp4_qdq",
    description=(
        "vLLM's NVFP4 activation quantize-dequantize (v0.34.0, _nvfp4_quant_dequant_kernel): "
        "one program per row and 64 16-element groups takes each group's absmax, an "
        "e4m3-rounded block scale under the global scale, snaps the scaled values to E2M1 "
        "and stores them dequantized in the input's dtype"
    ),
    dims=(
        Dim("tokens", "activation rows (tokens of the batch)", "rows"),
        Dim("hidden", "row width (the linear layer's input features, a multiple of 16)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_qkv_llama31_8b_nvfp4",
            {"tokens": 8192, "hidden": 4096},
            "an 8192-token prefill chunk of Llama 3.1 8B in NVFP4 before its QKV projection "
            "(4096 wide, 256 groups a row): 32,768 programs, 134 MB moved",
        ),
        Trial(
            "decode_down_proj_llama31_8b_nvfp4",
            {"tokens": 64, "hidden": 14336},
            "a 64-sequence decode step of Llama 3.1 8B in NVFP4 before its down projection "
            "(14336 wide, 896 groups a row): 896 programs, 3.7 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same fp32 arithmetic and round-to-nearest e4m3; the GPU's fp32 divisions may put a
    # scaled value a rounding away from an E2M1 threshold, flipping it by one code
    tolerances={"bfloat16": 1e-2, "float16": 1e-2, "float32": 1e-2},
    entry_point="nvfp4_quant_dequant",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
