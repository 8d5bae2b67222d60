"""torch's own cross-entropy (F.cross_entropy, mean reduction) over a large vocabulary, as
kbopt sees it: kernels nobody here wrote (torch's log-softmax, NLL and reduction kernels),
called as a loss function calls them.

loss = mean over tokens of logsumexp(x) - x[target], bf16 logits of [tokens, vocab].  No
matmul: the floor is reading the logits once (the targets and the scalar are negligible).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from foreign._common import ELEMENT_SIZE
from kbopt.kernel import Dim, KernelSpec, Trial

CONTEXTS = ("reduction", "multi-kernel", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Logits read once, int64 targets read."""
    return ELEMENT_SIZE[dtype] * d["rows"] * d["vocab"] + 8 * d["rows"]


_make_inputs = _common.forward_make_inputs("torch_cross_entropy", "rows", "vocab")
_reference = _common.forward_reference("torch_cross_entropy")
_baselines = _common.forward_baselines(
    "torch_cross_entropy",
    (
        "fp32_upcast",
        "torch",
        "logits.float() then F.cross_entropy (HF's loss functions upcast first)",
        "fp32_upcast",
    ),
)


SPEC = KernelSpec(
    name="torch_cross_entropy",
    description=(
        "torch's F.cross_entropy (mean) over a 128k-256k vocabulary: log-softmax, NLL and "
        "reduction kernels, bf16 logits"
    ),
    dims=(
        Dim("rows", "tokens (rows of the logits)", "rows"),
        Dim("vocab", "vocabulary size (the softmax axis)", "row_len"),
    ),
    trials=(
        Trial(
            "llama3",
            {"rows": 8192, "vocab": 128256},
            "Llama-3's 128k vocabulary over an 8k-token chunk: 2.1 GB of logits",
        ),
        Trial(
            "gemma_vocab",
            {"rows": 4096, "vocab": 256000},
            "Gemma's 256k vocabulary over 4k tokens: the same bytes in half the rows, twice as long",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a mean of per-token losses (~12) accumulated in fp32, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="cross_entropy",
    families=("torch",),
    baselines=_baselines,
    compare_with=("fp32_upcast",),
    contexts=CONTEXTS,
)
