"""SGLang's attention-state merge (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_merge_state` and never committed.

Cascade and chunked-prefill attention compute a token's attention over two parts of its KV
separately (a shared prefix, the rest); this kernel merges the two partial outputs by their
log-sum-exps, one program per (token, head).  Outputs: the merged rows (bf16) and LSE
(fp32).  No matmul: the floor is reading both partial outputs and LSEs once and writing
the merged ones once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_merge_state")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Two partial outputs read and one written; two fp32 LSEs read and one written."""
    rows = d["tokens"] * d["heads"]
    return 3 * ELEMENT_SIZE[dtype] * rows * d["head_size"] + 3 * 4 * rows


_make_inputs = _common.forward_make_inputs("sglang_merge_state", "tokens", "heads", "head_size")
_reference = _common.forward_reference("sglang_merge_state")
_baselines = _common.forward_baselines(
    "sglang_merge_state",
    (
        "torch",
        "torch",
        "the same merge in element-wise torch kernels (logaddexp, exp, weighted sum)",
        "torch_merge_state",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_merge_state.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8),
        "warps",
        "warps per program (one head_size-long row); None: SGLang's (Triton's default, 4)",
    ),
)

SPEC = KernelSpec(
    name="sglang_merge_state",
    description=(
        "SGLang's attention-state merge (v0.5.9): two partial attention outputs combined by "
        "their log-sum-exps, one program per (token, head), bf16 rows, fp32 LSEs"
    ),
    dims=(
        Dim("tokens", "query tokens", "rows"),
        Dim("heads", "query heads"),
        Dim("head_size", "head dimension (the row each program merges)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_llama3_8b",
            {"tokens": 8192, "heads": 32, "head_size": 128},
            "an 8k-token chunked prefill of Llama-3-8B (32 heads of 128), prefix and suffix "
            "attention merged: 204 MB moved by 262144 one-row programs",
        ),
        Trial(
            "decode_llama3_70b",
            {"tokens": 64, "heads": 64, "head_size": 128},
            "a 64-sequence decode step of Llama-3-70B (64 heads) with a shared prompt prefix: "
            "3 MB moved by 4096 programs, a launch's worth of work",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 weights; the merged row is rounded once to the output dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="merge_state",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
