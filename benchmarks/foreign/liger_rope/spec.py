"""Liger-Kernel's RoPE forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

q and k rotated in place by their token's position: x * cos + rotate_half(x) * sin over
head_dim 128, grouped-query heads (hq query heads, hk KV heads), bf16.  Outputs: q and k
(the input tensors).  No matmul: the floor is reading and writing q and k once and reading
the half-width cos and sin rows once.
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
    tokens = d["b"] * d["s"]
    qk = 2 * tokens * (d["hq"] + d["hk"]) * HEAD_DIM
    return ELEMENT_SIZE[dtype] * (qk + 2 * tokens * HEAD_DIM // 2)


_make_inputs = _common.forward_make_inputs("liger_rope", "b", "s", "hq", "hk")
_reference = _common.forward_reference("liger_rope")
_baselines = _common.forward_baselines(
    "liger_rope",
    (
        "torch",
        "torch",
        "HF apply_rotary_pos_emb in plain torch (rotate_half, several element-wise kernels)",
        "torch_rope",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_rope.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16),
        "warps",
        "warps per program (one token, all its heads); None: Triton's default 4 (Liger sets none)",
    ),
)

SPEC = KernelSpec(
    name="liger_rope",
    description="Liger-Kernel's RoPE forward (0.8.5): q and k rotated in place, one program per token, bf16",
    dims=(
        Dim("b", "sequences", "batch"),
        Dim("s", "tokens per sequence"),
        Dim("hq", "query heads", "num_heads"),
        Dim("hk", "key/value heads (grouped-query attention)"),
    ),
    trials=(
        Trial(
            "prefill",
            {"b": 1, "s": 8192, "hq": 32, "hk": 8},
            "a Llama-3-8B layer (32 query, 8 KV heads of 128) over an 8k-token prefill chunk: "
            "170 MB moved by 8192 one-token programs",
        ),
        Trial(
            "decode_70b",
            {"b": 64, "s": 1, "hq": 64, "hk": 8},
            "a Llama-3-70B decode step of 64 sequences (64 query, 8 KV heads): 2.4 MB in 64 "
            "programs on 132 SMs",
        ),
    ),
    backoff_dim="s",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the rotation runs in the dtype of cos/sin (bf16): a few roundings per element
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="rope",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    fixed_metrics={"head_dim": HEAD_DIM},
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
