"""Liger-Kernel's experimental int8 x int2 matmul (liger-kernel 0.8.5, BSD-2-Clause), as
kbopt sees it: a kernel nobody here wrote, imported from the installed `liger_kernel`
package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The linear layer of a BitNet b1.58 model: int8 activations times ternary weights packed
four to a byte, int32 out.  Each program unpacks its weight tiles in registers (shift,
mask, subtract) and multiplies them with int8 tl.dot, walking the packed rows four times.
Output: the exact int32 product.  The floor is the larger of the time for 2 * m * n * k
operations at the measured dense matmul rate and the time to read a and the packed
weights once and write the int32 output once.

kbopt's dtypes are floating point: the spec's dtype (bf16) only names the matmul ceiling
that kbopt measures; the data is int8 and 2-bit whatever it says.  The H200's int8 tensor
cores run at about twice the bf16 rate, so the compute floor measured against bf16 is up to
twice the int8 one: a compute-bound profile of this kernel is further from its int8 floor
than the figure says.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

CONTEXTS = ("gemm",)  # the prefill trial is compute-bound, the decode trial reads weights


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["m"] * d["n"] * d["k"]


def bytes_moved(d: Mapping[str, int]) -> int:
    """int8 activations and the packed weights (a quarter byte each) read once, the int32
    output written once."""
    return d["m"] * d["k"] + d["k"] // 4 * d["n"] + 4 * d["m"] * d["n"]


_make_inputs = _common.forward_make_inputs("liger_mm_int8int2", "m", "k", "n")
_reference = _common.forward_reference("liger_mm_int8int2")
_baselines = _common.forward_baselines(
    "liger_mm_int8int2",
    (
        "torch",
        "torch",
        "the weights unpacked every call (Liger's unpack_weights) and an fp32 torch matmul",
        "torch_int8int2",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_mm_int8int2.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (16, 32, 64, 128, 256), "tile_m", "output rows per program"),
    Knob("block_n", "int", (16, 32, 64, 128, 256), "tile_n", "output columns per program"),
    Knob(
        "block_k",
        "int",
        (16, 32, 64, 128),
        "tile_k",
        "depth of one int8 tl.dot step (k must be a multiple of 4 * block_k)",
    ),
    Knob(
        "group_m",
        "int",
        (1, 2, 4, 8, 16),
        "grouping",
        "row-tiles launched together before moving along n (L2 reuse of the weights)",
    ),
    Knob("num_warps", "int", (2, 4, 8, 16), "warps", "warps per program"),
    Knob("num_stages", "int", (1, 2, 3, 4, 5), "pipeline_stages", "k-loop pipelining depth"),
)

SPEC = KernelSpec(
    name="liger_mm_int8int2",
    description=(
        "Liger-Kernel's int8 x ternary (2-bit packed) matmul (0.8.5, experimental): weights "
        "unpacked in registers, int8 tl.dot, int32 out, one output tile per program"
    ),
    dims=(
        Dim("m", "tokens (rows of the activations)", "rows"),
        Dim("k", "input features (the reduction; a multiple of 4 * block_k)"),
        Dim("n", "output features"),
    ),
    trials=(
        Trial(
            "prefill_up_proj",
            {"m": 1024, "k": 4096, "n": 14336},
            "the gate/up projection of a Llama-3-8B-shaped BitNet b1.58 layer over a 1k-token "
            "prefill chunk: 120 GOP of int8 in 448 programs of 128 x 256",
        ),
        Trial(
            "decode_down_proj",
            {"m": 16, "k": 14336, "n": 4096},
            "its down projection at a 16-sequence decode step: 14.7 MB of packed weights read "
            "for 1.9 GOP, 16 programs on 132 SMs (the 128-row tile is 1/8 used)",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # integer arithmetic: the product is exact
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="mm_int8int2",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
