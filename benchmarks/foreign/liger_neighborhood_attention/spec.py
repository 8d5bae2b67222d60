"""Liger-Kernel's fused neighborhood attention forward (liger-kernel 0.8.5, BSD-2-Clause), as
kbopt sees it: a kernel nobody here wrote, imported from the installed `liger_kernel`
package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

1-D neighborhood attention (each query attends to the 7 keys around it) done densely:
three launches, QK^T over every [s, s] tile by tl.dot with the neighborhood applied as a
mask, a softmax over whole rows, and weights @ V by tl.dot over all s keys, with the
[b, h, s, s] scores and weights written and read in between.  Output: the attention output
(bf16).  The floor is the operation's own: q, k and v read once and the output written
once, and 4 * b * h * s * 7 * d flops for the neighborhood's scores and sum; Liger's
[s, s] intermediates (kept for its backward pass) are not part of it.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

KERNEL_SIZE = 7  # liger's default, as in reference.py
ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "multi-kernel", "gemm")


def flops(d: Mapping[str, int]) -> int:
    """The neighborhood's scores and weighted sum: two d-long dot products per (query, key)."""
    return 4 * d["b"] * d["h"] * d["s"] * KERNEL_SIZE * d["d"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k and v read once, the output written once."""
    return ELEMENT_SIZE[dtype] * 4 * d["b"] * d["h"] * d["s"] * d["d"]


_make_inputs = _common.forward_make_inputs("liger_neighborhood_attention", "b", "h", "s", "d")
_reference = _common.forward_reference("liger_neighborhood_attention")
_baselines = _common.forward_baselines(
    "liger_neighborhood_attention",
    (
        "torch",
        "torch",
        "masked dense attention in plain torch: [s, s] scores, mask, softmax, matmul",
        "torch_neighborhood_attention",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_neighborhood_attention.launcher")


TRITON_KNOBS = (
    Knob(
        "block_m",
        "int",
        (None, 16, 32, 64, 128),
        "tile_m",
        "query rows per program in both GEMM kernels; None: Liger's min(64, next_pow2(s))",
    ),
    Knob(
        "block_n",
        "int",
        (None, 16, 32, 64, 128),
        "tile_n",
        "key columns per QK^T program and head columns per AV program; None: Liger's "
        "min(64, next_pow2(s))",
    ),
    Knob(
        "block_k",
        "int",
        (None, 16, 32, 64, 128),
        "tile_k",
        "head-dim step of QK^T and key step of AV; None: Liger's max(16, next_pow2(d))",
    ),
    Knob(
        "softmax_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per softmax program (one whole score row); None: Liger's, from the row length",
    ),
)

SPEC = KernelSpec(
    name="liger_neighborhood_attention",
    description=(
        "Liger-Kernel's fused neighborhood attention forward (0.8.5): 7-key 1-D neighborhoods "
        "computed densely, QK^T and AV by tl.dot with a softmax between, three launches, bf16"
    ),
    dims=(
        Dim("b", "sequences", "batch"),
        Dim("h", "attention heads", "num_heads"),
        Dim(
            "s", "tokens per sequence (queries, and the keys they are masked against)", "query_len"
        ),
        Dim("d", "head dimension", "head_dim"),
    ),
    trials=(
        Trial(
            "vit_1k",
            {"b": 8, "h": 12, "s": 1024, "d": 64},
            "a ViT-B-sized layer (12 heads of 64) over 8 images of 1024 patch tokens: 201 MB "
            "of [s, s] scores written, then again as weights, for 50 MB of q, k, v and output",
        ),
        Trial(
            "long_4k",
            {"b": 1, "h": 16, "s": 4096, "d": 64},
            "one 4k-token sequence with 16 heads of 64: 537 MB per [s, s] matrix, and the "
            "67 MB fp32 neighborhood mask read once per head",
        ),
    ),
    backoff_dim="s",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation; the scores and weights are rounded to the input dtype between the
    # launches; fp32 inputs go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 2e-3},
    entry_point="neighborhood_attention",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
