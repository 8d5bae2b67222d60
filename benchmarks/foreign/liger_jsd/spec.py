"""Liger-Kernel's JSD forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a kernel
nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton wheel,
in kbopt's dev extra); nothing of it is copied here.

The distillation loss: the generalized Jensen-Shannon divergence (beta 0.5) between a
student's and a teacher's log-probabilities over an LLM's vocabulary, with the gradient
for the student written in the same pass.  Outputs: the loss (summed over the vocabulary,
averaged over the rows) and the gradient, bf16.  No matmul: the floor is reading both
log-probabilities once and writing the gradient once; Liger also writes an fp32 loss per
element and reads it back to sum it, which the floor leaves out.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Student and teacher read once, the gradient written once (the scalar loss: nothing)."""
    return 3 * ELEMENT_SIZE[dtype] * d["rows"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("liger_jsd", "rows", "vocab")
_reference = _common.forward_reference("liger_jsd")
_baselines = _common.forward_baselines(
    "liger_jsd",
    (
        "torch",
        "torch",
        "the same JSD in plain torch autograd, fp32 inside (exp, log, sum, backward)",
        "torch_jsd",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_jsd.launcher")


TRITON_KNOBS = (
    Knob(
        "block_size",
        "int",
        (None, 512, 1024, 2048, 4096, 8192, 16384, 32768),
        "tile_n",
        "vocabulary columns per loop step; None: Liger's min(4096, next_pow2(vocab))",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one token row); None: Triton's default 4 (Liger sets none)",
    ),
)

SPEC = KernelSpec(
    name="liger_jsd",
    description=(
        "Liger-Kernel's JSD forward (0.8.5): distillation loss and the student's gradient "
        "over the vocabulary, one program per row, bf16"
    ),
    dims=(
        Dim("rows", "tokens (rows of the log-probabilities)", "rows"),
        Dim("vocab", "vocabulary size (the summed axis)", "row_len"),
    ),
    trials=(
        Trial(
            "distill_llama3",
            {"rows": 2048, "vocab": 128256},
            "distilling a Llama-3-70B teacher into an 8B student over a 2k-token sequence at "
            "the 128k vocabulary: 1.6 GB of log-probabilities and gradient, 2048 programs",
        ),
        Trial(
            "fused_linear_chunk",
            {"rows": 256, "vocab": 128256},
            "the 256-row chunk Liger's fused-linear JSD hands this kernel on Hopper (8k tokens, "
            "hidden 4096, 128k vocabulary): 256 programs of 4 warps on 132 SMs",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 inside, the gradient and the loss each rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="jsd",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
