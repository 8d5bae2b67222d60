"""torch's own kernels on a naive multi-head attention decode, as kbopt sees them: kernels
nobody here wrote (cuBLAS batched GEMV-shaped matmuls, torch's softmax and element-wise
kernels), chained by a plain torch function; torch's fused scaled_dot_product_attention
is the baseline.

out = softmax(q k^T / sqrt(128)) v for one query row per (sequence, head), Llama-2-7B-like
32 heads of 128, fp16.  The tensor-core FLOPs are q.k and p.v (4 b h t d); the floor is
memory: K and V read once (q and out are negligible).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from foreign._common import ELEMENT_SIZE
from kbopt.kernel import Dim, KernelSpec, Trial

HEAD_DIM = 128
CONTEXTS = ("attention-decode", "multi-kernel", "memory-bound")


def flops(d: Mapping[str, int]) -> int:
    return 4 * d["b"] * d["h"] * d["t"] * HEAD_DIM


def bytes_moved(d: Mapping[str, int], dtype: str = "float16") -> int:
    """K and V read once, q read once, out written once."""
    return ELEMENT_SIZE[dtype] * HEAD_DIM * d["b"] * d["h"] * (2 * d["t"] + 2)


_make_inputs = _common.forward_make_inputs("torch_attention_decode", "b", "h", "t")
_reference = _common.forward_reference("torch_attention_decode")
_baselines = _common.forward_baselines(
    "torch_attention_decode",
    (
        "sdpa",
        "torch",
        "torch.nn.functional.scaled_dot_product_attention (one fused kernel)",
        "torch_sdpa",
    ),
)


SPEC = KernelSpec(
    name="torch_attention_decode",
    description=(
        "naive multi-head attention decode in plain torch (matmul, scale, softmax, cast, "
        "matmul: several launches), 32 heads of 128, fp16"
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
            "a Llama-2-7B-like decode step of 32 sequences at 4k context: 2.1 GB of K and V",
        ),
        Trial(
            "long",
            {"b": 4, "h": 32, "t": 32768},
            "4 sequences at 32k context: the same bytes in fewer, longer rows",
        ),
    ),
    backoff_dim="b",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # p rounded to fp16 before p @ v; sums over up to 32k keys
    tolerances={"float16": 1e-2, "bfloat16": 3e-2, "float32": 1e-4},
    entry_point="attention_decode",
    families=("torch",),
    baselines=_baselines,
    compare_with=("sdpa",),
    dtype="float16",
    fixed_metrics={"head_dim": HEAD_DIM, "query_len": 1},
    contexts=CONTEXTS,
)
