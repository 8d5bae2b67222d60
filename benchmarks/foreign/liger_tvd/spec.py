"""Liger-Kernel's total-variation-distance forward (liger-kernel 0.8.5, BSD-2-Clause), as
kbopt sees it: a kernel nobody here wrote, imported from the installed `liger_kernel`
package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The TVD distillation loss 0.5 * sum |p - q| over an LLM's vocabulary, whose forward also
writes the [rows, vocab] gradient with respect to p (0.5 * sign(p - q) / rows): two
distributions read, one of their size written, one fp32 total per row, summed by torch.
Outputs: the loss (fp32, Liger's) and the gradient (bf16).  No matmul: the floor is reading
both distributions once and writing the gradient once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Both distributions read once, the gradient written once, one fp32 total per row."""
    return 3 * ELEMENT_SIZE[dtype] * d["rows"] * d["vocab"] + 4 * d["rows"]


_make_inputs = _common.forward_make_inputs("liger_tvd", "rows", "vocab")
_reference = _common.forward_reference("liger_tvd")
_baselines = _common.forward_baselines(
    "liger_tvd",
    (
        "torch",
        "torch",
        "the loss and its gradient by torch autograd in the input dtype (sub, abs, sum, backward)",
        "torch_tvd",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_tvd.launcher")


TRITON_KNOBS = (
    Knob(
        "block_size",
        "int",
        (None, 1024, 2048, 4096, 8192, 16384, 32768),
        "tile_n",
        "vocabulary columns per loop step; None: Liger's min(16384, next_pow2(vocab))",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one token row); None: Liger's, from the block (16 at 16384 columns)",
    ),
)

SPEC = KernelSpec(
    name="liger_tvd",
    description=(
        "Liger-Kernel's total-variation-distance forward (0.8.5): distillation loss and its "
        "gradient over the vocabulary, one program per row, row totals summed by torch, bf16"
    ),
    dims=(
        Dim("rows", "tokens (rows of the distributions)", "rows"),
        Dim("vocab", "vocabulary size (the summed axis)", "row_len"),
    ),
    trials=(
        Trial(
            "distill_llama3",
            {"rows": 2048, "vocab": 128256},
            "distilling over a 2k-token sequence at Llama-3's 128k vocabulary: 1.6 GB moved "
            "(two distributions read, the gradient written) by 2048 one-row programs",
        ),
        Trial(
            "short_chunk",
            {"rows": 256, "vocab": 128256},
            "a 256-token chunk at the same vocabulary: 197 MB by 256 programs on 132 SMs, "
            "under two programs per SM",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums (only their order differs); the gradient is +-0.5/rows or 0, rounded once
    tolerances={"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-5},
    entry_point="tvd",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
