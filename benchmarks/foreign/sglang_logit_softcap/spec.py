"""SGLang's final-logit soft-capping (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_logit_softcap` and never committed.

Why this one as the set's elementwise transcendental: Gemma 2 (and Grok) cap their output
logits smoothly, cap * tanh(logits / cap) with a cap of 30, and SGLang's logits processor runs
this kernel on every row of logits it computes, in place, right after the LM head and before
the sampler.  One program per 1024 elements loads them in the model's dtype, divides by the
cap in fp32, computes tanh by hand from one exp ((e^2x - 1) / (e^2x + 1)), multiplies back
and stores: memory-bound, with one exp and one division per element.  Both trials are Gemma 2
9B (256,000-token vocabulary, bf16 logits): a 32-request decode step (8000 programs, 33 MB
moved) and an EAGLE verify step of 128 requests with 3 draft tokens each (512 rows, 128,000
programs, 524 MB moved).  Output: the logits (written in place).  The floor is reading and
writing the logits once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_logit_softcap")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read and written once, in the model's dtype."""
    return 2 * d["rows"] * d["vocab"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """Per element: the division by the cap, the doubling, the exp, two adds, the division
    and the multiply back (seven)."""
    return 7 * d["rows"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("sglang_logit_softcap", "rows", "vocab")
_reference = _common.forward_reference("sglang_logit_softcap")
_baselines = _common.forward_baselines(
    "sglang_logit_softcap",
    (
        "torch",
        "torch",
        "the same by torch ops in place (divide, tanh, multiply: three launches), as "
        "SGLang's path without the kernel",
        "torch_softcap",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_logit_softcap.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "logits capped per program; None: SGLang's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_logit_softcap",
    description=(
        "SGLang's final-logit soft-capping (v0.5.9, fused_softcap_kernel), Gemma 2's "
        "cap * tanh(logits / cap) in place on the LM head's logits: one program per 1024 "
        "elements, tanh from one exp in fp32"
    ),
    dims=(
        Dim("rows", "rows of logits (requests, or their verified tokens)", "rows"),
        Dim("vocab", "vocabulary size"),
    ),
    trials=(
        Trial(
            "decode_32_gemma2_9b",
            {"rows": 32, "vocab": 256000},
            "a 32-request decode step of Gemma 2 9B (256,000-token vocabulary, cap 30): "
            "8000 programs, 33 MB moved (bf16)",
        ),
        Trial(
            "eagle_verify_128x4_gemma2_9b",
            {"rows": 512, "vocab": 256000},
            "an EAGLE verify step of the same model, 128 requests with 3 draft tokens each "
            "(512 rows of logits): 128,000 programs, 524 MB moved (bf16)",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    # A program's block is 1-D over the whole flattened logits (rows x vocab).
    shape_metrics=lambda d: {"row_len": d["rows"] * d["vocab"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the kernel's hand-made tanh loses relative precision near zero (e^2x - 1); the
    # 16-bit stores round once
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="softcap",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
