"""Liger-Kernel's KL-divergence forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees
it: a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The forward-KL distillation loss KL(teacher || student) over an LLM's vocabulary: the
student's log-probabilities and the teacher's probabilities are read once, one fp32 total
per row is written, and torch takes the batch mean.  No gradient is written (Liger's
backward is a separate kernel), so the kernel only reads: the floor is reading both
[rows, vocab] tensors once.  Output: the loss, fp32 (Liger's), from bf16 inputs.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Both distributions read once, one fp32 total per row written."""
    return 2 * ELEMENT_SIZE[dtype] * d["rows"] * d["vocab"] + 4 * d["rows"]


_make_inputs = _common.forward_make_inputs("liger_kl_div", "rows", "vocab")
_reference = _common.forward_reference("liger_kl_div")
_baselines = _common.forward_baselines(
    "liger_kl_div",
    (
        "torch",
        "torch",
        "torch's F.kl_div with batchmean reduction, input dtype (xlogy, sub, mul, sum)",
        "torch_kl_div",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_kl_div.launcher")


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
    name="liger_kl_div",
    description=(
        "Liger-Kernel's KL-divergence forward (0.8.5): distillation loss over the vocabulary, "
        "one program per row reading both distributions, batch mean in torch, bf16 inputs"
    ),
    dims=(
        Dim("rows", "tokens (rows of the distributions)", "rows"),
        Dim("vocab", "vocabulary size (the summed axis)", "row_len"),
    ),
    trials=(
        Trial(
            "distill_llama3",
            {"rows": 4096, "vocab": 128256},
            "distilling a Llama-3 teacher into a student over a 4k-token sequence at the 128k "
            "vocabulary: 2.1 GB read by 4096 programs, nothing but a row total written",
        ),
        Trial(
            "qwen_chunk",
            {"rows": 512, "vocab": 151936},
            "a 512-token chunk at Qwen2.5's 152k vocabulary: 311 MB read by 512 programs on "
            "132 SMs, ten 16384-column steps each",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 inside and out: only the summation order differs from the reference
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-5},
    entry_point="kl_div",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
