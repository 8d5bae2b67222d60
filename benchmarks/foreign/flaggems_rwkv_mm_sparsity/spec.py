"""FlagGems' RWKV sparse matrix product (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_rwkv_mm_sparsity` and never committed.

Why this one as the set's activation-sparse product: the set has never had a product whose
reads depend on the data.  RWKV-7's channel mix computes k = relu(x @ W_key) ** 2, most of
whose elements are zero, then k @ W_value; FlagGems ships `rwkv_mm_sparsity` (registered
as a torch op next to its `rwkv_ka_fusion`) for that decode-step product, which skips the
value rows of the zero keys.  One program per 16 output columns walks the whole key vector
in 512-row steps (4 warps, 3 stages): it loads 512 keys, then a 512 x 16 tile of the value
weight masked to the non-zero keys' rows (32 bytes of each row it reads, one sector),
multiplies in fp32 and sums over the rows; every program re-reads the key vector.  Memory-
bound on the rows it reads, with narrow column strips.  Both trials are a batch-1 decode
step through one channel mix's value product of an RWKV-7 "Goose" model in bf16, one key in
eight non-zero (the share is our assumption, fixed so that the floor is known; RWKV's
squared-ReLU keys are mostly zero): RWKV-7 1.5B (8192 keys x 2048: 128 programs, 4.2 MB of
non-zero rows, 33.6 MB dense) and RWKV-7 7.2B (16,384 keys x 4096: 256 programs, 16.8 MB,
134 MB dense).  The floor is reading k, the non-zero keys' rows of v and writing the output
once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_rwkv_mm_sparsity")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "reduction", "memory-bound")  # a GEMV that reads only non-zero keys' rows


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """k read once, the rows of v under its non-zero keys read once, the output written
    once."""
    return (d["keys"] + d["nonzeros"] * d["cols"] + d["cols"]) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per element of the rows read."""
    return 2 * d["nonzeros"] * d["cols"]


_make_inputs = _common.forward_make_inputs("flaggems_rwkv_mm_sparsity", "keys", "cols", "nonzeros")
_reference = _common.forward_reference("flaggems_rwkv_mm_sparsity")
_baselines = _common.forward_baselines(
    "flaggems_rwkv_mm_sparsity",
    ("torch", "torch", "the same product by torch (k @ v, a dense GEMV over every row)",
     "torch_vecmat"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.flaggems_rwkv_mm_sparsity.launcher")


TRITON_KNOBS = (
    Knob("blk_size", "int", (None, 64, 128, 256, 512, 1024, 2048), "tile_k",
         "rows of v (keys) per loop step; None: FlagGems' 512"),
    Knob("block_size", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns per program; None: FlagGems' 16 (the launcher refuses a tile "
         "above 32,768 elements)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining stages of the key loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_rwkv_mm_sparsity",
    description=(
        "FlagGems' RWKV sparse matrix product (v5.0.2, rwkv_mm_sparsity_kernel): one "
        "program per 16 output columns walks the key vector in 512-row steps, loading only "
        "the value rows of non-zero keys, fp32 sums"
    ),
    dims=(
        Dim("keys", "key elements (the channel mix's FFN width, v's rows; a power of two)"),
        Dim("cols", "output elements (the model width, v's columns)"),
        Dim("nonzeros", "non-zero keys (the value rows read)"),
    ),
    trials=(
        Trial(
            "decode_b1_rwkv7_1p5b",
            {"keys": 8192, "cols": 2048, "nonzeros": 1024},
            "a batch-1 decode step through RWKV-7 1.5B's channel-mix value product (FFN "
            "8192 x width 2048, one key in eight non-zero): 128 programs, 4.2 MB moved "
            "(bf16)",
        ),
        Trial(
            "decode_b1_rwkv7_7p2b",
            {"keys": 16384, "cols": 4096, "nonzeros": 2048},
            "the same for RWKV-7 7.2B (FFN 16,384 x width 4096, one key in eight non-zero): "
            "256 programs, 16.8 MB moved (bf16)",
        ),
    ),
    backoff_dim="cols",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of up to 2048 non-zero products, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="rwkv_mm_sparsity",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
