"""Liger-Kernel's Llama 4 RoPE forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it:
a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

Llama 4's complex rotary embedding: q and k rotated in place, each head's 128 values read as
64 interleaved (real, imaginary) pairs and multiplied by the position's complex frequency,
one program per (token, head), bf16 q and k, fp32 frequencies.  Outputs: q and k (the input
tensors).  No matmul: the floor is reading and writing q and k once and reading the
frequency rows once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

HEAD_DIM = 128
ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q and k read and written once, the fp32 frequencies ([s, d/2, 2]) read once."""
    qk = 2 * d["b"] * d["s"] * (d["hq"] + d["hk"]) * HEAD_DIM
    return ELEMENT_SIZE[dtype] * qk + 4 * d["s"] * HEAD_DIM


_make_inputs = _common.forward_make_inputs("liger_llama4_rope", "b", "s", "hq", "hk")
_reference = _common.forward_reference("liger_llama4_rope")
_baselines = _common.forward_baselines(
    "liger_llama4_rope",
    (
        "torch",
        "torch",
        "HF Llama 4's apply_rotary_emb in plain torch (complex views in fp32, new tensors)",
        "torch_rope",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_llama4_rope.launcher")


TRITON_KNOBS = (
    Knob(
        "block_size",
        "int",
        (None, 16, 32, 64, 128),
        "tile_n",
        "(real, imaginary) pairs of a head per unrolled step; None: Liger's (64 at head_dim 128: "
        "the whole head in one step)",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8),
        "warps",
        "warps per program (one token, one head); None: Liger's (4 at head_dim 128)",
    ),
)

SPEC = KernelSpec(
    name="liger_llama4_rope",
    description=(
        "Liger-Kernel's Llama 4 RoPE forward (0.8.5): q and k rotated in place as interleaved "
        "complex pairs, one program per (token, head), bf16"
    ),
    dims=(
        Dim("b", "sequences", "batch"),
        Dim("s", "tokens per sequence"),
        Dim("hq", "query heads", "num_heads"),
        Dim("hk", "key/value heads (grouped-query attention)"),
    ),
    trials=(
        Trial(
            "prefill_scout",
            {"b": 1, "s": 8192, "hq": 40, "hk": 8},
            "a Llama-4-Scout layer (40 query, 8 KV heads of 128) over an 8k-token prefill "
            "chunk: 206 MB moved by 327,680 one-head programs, 32 of each token's 40 with no "
            "KV head",
        ),
        Trial(
            "decode_scout",
            {"b": 64, "s": 1, "hq": 40, "hk": 8},
            "a Llama-4-Scout decode step of 64 sequences (Liger indexes the frequencies by "
            "position in the sequence, so the batch shares one row): 1.6 MB in 2560 programs",
        ),
    ),
    backoff_dim="s",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the complex product in fp32 (bf16 q and k promoted by the fp32 frequencies), one rounding
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="rope",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    fixed_metrics={"head_dim": HEAD_DIM},
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
