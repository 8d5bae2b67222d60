"""FlagGems' fused gated-delta-rule chunk prologue (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into third_party/ by
scripts/fetch_third_party.py (`flaggems_gdn_fused_kkt_inv`); nothing of it is committed.

The chunked prefill of a gated-delta-rule layer (Qwen3-Next) starts, per 64-token chunk and
value head, with the chunk-local cumsum of the log gates, the gated beta K K^T (strictly
lower) and its (I + A)^-1; FlagGems does all three in one kernel, one program per chunk and
head.  bf16 keys and beta, fp32 gates.  The floor is the larger of the tensor-core time for
K K^T (2 * b * t * h * 64 * kd flops, the 16x16 block solve's few dots not counted) and the
time to read g, k and beta once and write g_out and A_inv once (the fp32 scratch A each
program writes and reads back is its own and not counted).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_gdn_fused_kkt_inv")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CHUNK = 64
CONTEXTS = ("attention", "gemm", "small-grid")  # linear attention; the small trial: 64 programs


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["b"] * d["t"] * d["h"] * CHUNK * d["kd"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """k, beta and A_inv in the spec's dtype, g and g_out in fp32, each once."""
    e = ELEMENT_SIZE[dtype]
    bt = d["b"] * d["t"]
    return e * (bt * d["hg"] * d["kd"] + bt * d["h"] + bt * d["h"] * CHUNK) + 4 * 2 * bt * d["h"]


_make_inputs = _common.forward_make_inputs("flaggems_gdn_fused_kkt_inv", "b", "t", "h", "hg", "kd")
_reference = _common.forward_reference("flaggems_gdn_fused_kkt_inv")
_baselines = _common.forward_baselines(
    "flaggems_gdn_fused_kkt_inv",
    (
        "torch",
        "torch",
        "chunked cumsum, one batched einsum for K K^T and a batched triangular solve in fp32",
        "torch_fused_kkt_inv",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_gdn_fused_kkt_inv.launcher")


TRITON_KNOBS = (
    Knob(
        "bk",
        "int",
        (None, 32, 64, 128),
        "tile_k",
        "key columns per K K^T tl.dot step; None: 64 (FlagGems' tuner grid: 32, 64, 128)",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8),
        "warps",
        "warps per program; None: 4 (FlagGems' tuner grid: 2, 4, 8)",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the K K^T loop; None: 3 (FlagGems' tuner grid: 2, 3, 4)",
    ),
    Knob(
        "use_tma",
        "bool",
        (None, False, True),
        "tma",
        "the solve's 16x16 blocks of A and A_inv through tensor descriptors; None: FlagGems' "
        "choice (on Hopper)",
    ),
)

SPEC = KernelSpec(
    name="flaggems_gdn_fused_kkt_inv",
    description=(
        "FlagGems' fused gated-delta-rule chunk prologue (v5.0.2): per 64-token chunk and "
        "head, gate cumsum, gated beta K K^T by tl.dot and (I + A)^-1 by 16x16 blocks, bf16"
    ),
    dims=(
        Dim("b", "sequences (fixed length, no cu_seqlens)", "batch"),
        Dim("t", "tokens per sequence", "rows"),
        Dim("h", "value heads on this GPU"),
        Dim("hg", "key heads on this GPU (h a multiple)"),
        Dim("kd", "key head width"),
    ),
    trials=(
        Trial(
            "prefill_qwen3next_tp1",
            {"b": 1, "t": 16384, "h": 32, "hg": 16, "kd": 128},
            "Qwen3-Next-80B-A3B's gated delta rule layers (32 value heads, 16 key heads of "
            "width 128) on one GPU over a 16k-token prefill: 8192 programs",
        ),
        Trial(
            "prefill_qwen3next_tp4_short",
            {"b": 2, "t": 256, "h": 8, "hg": 4, "kd": 128},
            "the same layer at TP4 over two 256-token prompts: 64 programs",
        ),
    ),
    backoff_dim="t",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # A_inv is stored in k's dtype; the K K^T dot takes bf16/fp16 operands (tf32 for fp32)
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 2e-3},
    entry_point="fused_kkt_inv",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
