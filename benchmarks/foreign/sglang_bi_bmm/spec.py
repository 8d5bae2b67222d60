"""SGLang's batch-invariant persistent bmm (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_bi_bmm` and never committed.

Why this one: a server started with `--enable-deterministic-inference` (RL rollouts that
must match the trainer's logprobs bit for bit) replaces aten::bmm by this kernel, so every
DeepSeek MLA layer's absorbed-weight product `torch.bmm(q_nope.transpose(0, 1), w_kc)`
runs it on each decode step.  It is a GEMM, but not one the set has: a persistent batched
GEMM whose configuration is fixed per dtype (for batch invariance, not speed), whose grid
is min(SMs, tiles) programs each walking tiles SMs apart in batch-major order, with the
query read through a transposed view (rows heads x 128 elements apart) and a short K (128:
two 64-deep tl.dot steps per tile).  At decode the tokens are few, so a 128-row tile is
mostly clamped duplicate rows.  Both trials are DeepSeek-V3's q_nope x w_kc (nope 128, rank
512) in bf16: a TP8 rank's 16 heads at a decode batch of 64 (64 tiles, 64 programs), and a
DP-attention rank's 128 heads at a decode batch of 256 (1024 tiles over 132 persistent
programs).  The floor is reading q and w_kc once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_bi_bmm")

CONTEXTS = ("gemm", "small-grid")  # a persistent batched GEMM, K = 128, few decode rows


def _elem(dtype: str) -> int:
    return 4 if dtype == "float32" else 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q (heads x tokens x nope) and w_kc (heads x nope x rank) read once, the output
    (heads x tokens x rank) written once, in the input dtype."""
    h, t, k, n = d["heads"], d["tokens"], d["nope"], d["rank"]
    return _elem(dtype) * (h * t * k + h * k * n + h * t * n)


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per head, token, nope and rank element."""
    return 2 * d["heads"] * d["tokens"] * d["nope"] * d["rank"]


_make_inputs = _common.forward_make_inputs("sglang_bi_bmm", "heads", "tokens", "nope", "rank")
_reference = _common.forward_reference("sglang_bi_bmm")
_baselines = _common.forward_baselines(
    "sglang_bi_bmm",
    ("torch", "torch", "torch.bmm (cuBLAS), as SGLang runs it without deterministic inference",
     "torch_bmm"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_bi_bmm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows of a tile (tokens of one head); None: SGLang's 128"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "columns of a tile (latent rank); None: SGLang's 128 (256 for fp16)"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "depth of one tl.dot step; None: SGLang's 64 (32 for fp32)"),
    Knob("group_m", "int", (None, 1, 2, 4, 8, 16), "grouping",
         "row tiles walked together before the column moves on; None: SGLang's 8"),
    Knob("programs", "int", (None, 33, 66, 132, 264, 528), "occupancy",
         "programs of the persistent grid (at most the tiles; each walks tiles this many "
         "apart); None: the device's SMs, as SGLang"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the K loop; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_bi_bmm",
    description=(
        "SGLang's batch-invariant persistent bmm (v0.5.9, bmm_kernel_persistent): "
        "deterministic inference's torch.bmm, a fixed tile configuration per dtype over "
        "min(SMs, tiles) programs walking the tiles in batch-major order; here DeepSeek "
        "MLA's q_nope x w_kc"
    ),
    dims=(
        Dim("heads", "attention heads (the bmm's batch)", "num_heads"),
        Dim("tokens", "decode tokens (rows of q and of the output per head)", "rows"),
        Dim("nope", "no-position query width per head (the reduction length, 128)"),
        Dim("rank", "compressed KV latent width (kv_lora_rank, 512)"),
    ),
    trials=(
        Trial(
            "deepseek_v3_tp8_decode_bs64",
            {"heads": 16, "tokens": 64, "nope": 128, "rank": 512},
            "DeepSeek-V3's absorbed q_nope x w_kc on a TP8 rank (16 of 128 heads) at a "
            "decode batch of 64: 64 tiles of 128 x 128, one program each",
        ),
        Trial(
            "deepseek_v3_dp_attn_decode_bs256",
            {"heads": 128, "tokens": 256, "nope": 128, "rank": 512},
            "DeepSeek-V3's absorbed q_nope x w_kc on a DP-attention rank (all 128 heads) at a "
            "decode batch of 256: 1024 tiles over 132 persistent programs",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # 128-deep products summed in fp32 (tf32 tl.dot for fp32 inputs) against fp64
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="bmm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
