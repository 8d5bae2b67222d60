"""Liger-Kernel's cross-entropy forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it:
a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The kernel Liger is known for: the training loss over an LLM's vocabulary that also writes
d(mean loss)/d(logits) over the logits in place, so the [tokens, vocab] gradient never
takes a second buffer.  Outputs: the per-token loss / n_non_ignore and the gradient (the
logits tensor itself), bf16.  No matmul: the floor is reading the logits once and writing
the gradient once (Liger reads them twice: one pass for the log-sum-exp, one for the
gradient).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "online-softmax", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Logits read once and gradient written once, int64 targets read, loss written."""
    e = ELEMENT_SIZE[dtype]
    return 2 * e * d["rows"] * d["vocab"] + (8 + e) * d["rows"]


_make_inputs = _common.forward_make_inputs("liger_cross_entropy", "rows", "vocab")
_make_check_inputs = _common.forward_make_inputs(
    "liger_cross_entropy", "rows", "vocab", function="make_check_inputs"
)
_reference = _common.forward_reference("liger_cross_entropy")
_baselines = _common.forward_baselines(
    "liger_cross_entropy",
    (
        "torch",
        "torch",
        "F.cross_entropy forward and backward in plain torch (log-softmax, NLL, their backward)",
        "torch_cross_entropy",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_cross_entropy.launcher")


TRITON_KNOBS = (
    Knob(
        "block_size",
        "int",
        (None, 1024, 2048, 4096, 8192, 16384, 32768, 65536),
        "tile_n",
        "vocabulary columns per loop step of each pass; None: Liger's min(32768, next_pow2(vocab))",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 4, 8, 16, 32),
        "warps",
        "warps per program (one token row); None: Liger's (32 on Hopper)",
    ),
)

SPEC = KernelSpec(
    name="liger_cross_entropy",
    description=(
        "Liger-Kernel's cross-entropy forward (0.8.5): per-token loss and the logits' "
        "gradient written in place, two passes per row, bf16"
    ),
    dims=(
        Dim("rows", "tokens (rows of the logits)", "rows"),
        Dim("vocab", "vocabulary size (the softmax axis)", "row_len"),
    ),
    trials=(
        Trial(
            "llama3",
            {"rows": 8192, "vocab": 128256},
            "Llama-3's 128k vocabulary over an 8k-token training chunk: 2.1 GB of logits read "
            "and their gradient written",
        ),
        Trial(
            "gemma_vocab",
            {"rows": 4096, "vocab": 256000},
            "Gemma's 256k vocabulary over 4k tokens: the same bytes in half the rows, twice "
            "the loop steps per pass",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    make_check_inputs=_make_check_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 log-sum-exp over up to 256k columns, gradient and loss rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="cross_entropy",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
