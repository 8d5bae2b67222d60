"""torch's fused scaled_dot_product_attention on a multi-head attention decode step, as
kbopt sees it: kernels nobody here wrote (torch dispatches to its flash, memory-efficient
or cuDNN backend), called as a model file calls them.

out = softmax(q k^T / sqrt(128)) v for one query row per (sequence, head), 32 heads of
128, bf16.  The tensor-core FLOPs are q.k and p.v (4 b h t d); the floor is memory: K and
V read once (q and out are negligible).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from foreign._common import ELEMENT_SIZE
from kbopt.kernel import Dim, KernelSpec, Trial

HEAD_DIM = 128
CONTEXTS = ("attention", "attention-decode", "memory-bound")


def flops(d: Mapping[str, int]) -> int:
    return 4 * d["b"] * d["h"] * d["t"] * HEAD_DIM


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """K and V read once, q read once, out written once."""
    return ELEMENT_SIZE[dtype] * HEAD_DIM * d["b"] * d["h"] * (2 * d["t"] + 2)


_make_inputs = _common.forward_make_inputs("torch_sdpa_decode", "b", "h", "t")
_reference = _common.forward_reference("torch_sdpa_decode")
_baselines = _common.forward_baselines(
    "torch_sdpa_decode",
    (
        "naive",
        "torch",
        "matmul, scale, fp32 softmax, cast, matmul in plain torch (several launches)",
        "naive",
    ),
)


SPEC = KernelSpec(
    name="torch_sdpa_decode",
    description=(
        "torch's fused scaled_dot_product_attention on a decode step (one query row per "
        "head), 32 heads of 128, bf16"
    ),
    dims=(
        Dim("b", "sequences in the batch", "batch"),
        Dim("h", "attention heads (each with its own K and V)", "num_heads"),
        Dim("t", "KV-cache length of every sequence", "kv_len"),
    ),
    trials=(
        Trial(
            "decode",
            {"b": 32, "h": 32, "t": 4096},
            "a decode step of 32 sequences at 4k context, 32 heads of 128: 2.1 GB of K and V",
        ),
        Trial(
            "long",
            {"b": 4, "h": 32, "t": 32768},
            "4 sequences at 32k context: the same bytes in 8x fewer (sequence, head) pairs",
        ),
    ),
    backoff_dim="b",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # p rounded to the dtype before p @ v in the fused kernels too; sums over up to 32k keys
    tolerances={"bfloat16": 3e-2, "float16": 1e-2, "float32": 1e-4},
    entry_point="attention_decode",
    families=("torch",),
    baselines=_baselines,
    compare_with=("naive",),
    fixed_metrics={"head_dim": HEAD_DIM, "query_len": 1},
    contexts=CONTEXTS,
)
