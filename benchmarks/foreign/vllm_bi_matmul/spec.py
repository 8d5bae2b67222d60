"""vLLM's batch-invariant persistent matmul (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_bi_matmul` and never committed.

Why this one: a vLLM server run with VLLM_BATCH_INVARIANT=1 (a token's logits must not
depend on the batch around it: RL rollouts matched bit for bit to the trainer, reproducible
evals) sends every unquantized linear layer and the lm_head through
`linear_batch_invariant`, i.e. this kernel on `x @ weight.t()`, on Hopper as elsewhere.  A
2-D GEMM over a persistent grid of min(SMs, tiles) programs, each walking output tiles SMs
apart with a GROUP_SIZE_M swizzle, each tile a full K loop of tl.dot steps; the weight is
read through the transposed view of vLLM's [out, hidden] parameter (K-contiguous columns).
Its launch comes from a Hopper table tuned per (N, K) and M bucket, BLOCK_K fixed per shape
for invariance.  Nearest: sglang_bi_bmm (the same persistent tile walk, but batched, one
fixed 128 x 128 x 64 configuration per dtype and K = 128) and triton_matmul (one tile per
program, row-major B).  Both trials are Qwen3-8B (hidden 4096, intermediate 12288) in bf16
with vLLM's tuned configurations: the down_proj of a 2,048-token prefill chunk
(2048 x 4096 x 12288: 512 tiles of 128 x 128 over 132 programs, 96 K steps of 128 each,
compute-bound) and the fused qkv_proj of an 8-sequence decode step (8 x 6144 x 4096: 96
tiles of 16 x 64, half of each 16-row tile clamped duplicates, 32 K steps, 5 stages:
bound by reading the 48 MiB weight once).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_bi_matmul")

CONTEXTS = ("gemm", "small-grid")  # a persistent GEMM; the decode trial is weight-bound


def _elem(dtype: str) -> int:
    return 4 if dtype == "float32" else 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x (tokens x hidden) and the weight (out x hidden) read once, the output
    (tokens x out) written once, in the input dtype."""
    m, n, k = d["tokens"], d["out"], d["hidden"]
    return _elem(dtype) * (m * k + n * k + m * n)


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per token, output and hidden element."""
    return 2 * d["tokens"] * d["out"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("vllm_bi_matmul", "tokens", "out", "hidden")
_reference = _common.forward_reference("vllm_bi_matmul")
_baselines = _common.forward_baselines(
    "vllm_bi_matmul",
    ("torch", "torch", "torch.nn.functional.linear (cuBLAS), as vLLM runs the layer "
     "without VLLM_BATCH_INVARIANT", "torch_linear"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.vllm_bi_matmul.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows (tokens) of a tile; None: vLLM's (the Hopper table's bucket, else 128)"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "columns (output features) of a tile; None: vLLM's (the table's, else 128; fp16 "
         "256)"),
    Knob("block_k", "int", (None, 32, 64, 128, 256), "tile_k",
         "depth of one tl.dot step; None: vLLM's (the table's per-shape 64 or 128, else 64; "
         "fp32 32)"),
    Knob("group_m", "int", (None, 1, 2, 4, 8, 16), "grouping",
         "row tiles walked together before the column moves on; None: vLLM's 8"),
    Knob("programs", "int", (None, 33, 66, 132, 264, 528), "occupancy",
         "programs of the persistent grid (at most the tiles; each walks tiles this many "
         "apart); None: the device's SMs, as vLLM"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: vLLM's (the table's 4 or 8, else 8)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: vLLM's (the table's 2-5, else 3)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_bi_matmul",
    description=(
        "vLLM's batch-invariant persistent matmul (v0.34.0, matmul_kernel_persistent): "
        "VLLM_BATCH_INVARIANT's linear layers, x @ weight.t() over min(SMs, tiles) "
        "programs walking the tiles SMs apart, configured from a Hopper table tuned per "
        "(N, K) and M bucket; here Qwen3-8B's down_proj and qkv_proj"
    ),
    dims=(
        Dim("tokens", "rows of x and of the output (tokens in the step)", "rows"),
        Dim("out", "output features (the weight's rows)"),
        Dim("hidden", "input features (the reduction length)"),
    ),
    trials=(
        Trial(
            "qwen3_8b_down_proj_prefill_2048",
            {"tokens": 2048, "out": 4096, "hidden": 12288},
            "Qwen3-8B's down_proj on a 2,048-token prefill chunk: vLLM's Hopper entry "
            "128 x 128 x 128, 4 warps, 3 stages; 512 tiles over 132 persistent programs, 96 "
            "K steps a tile",
        ),
        Trial(
            "qwen3_8b_qkv_proj_decode_8",
            {"tokens": 8, "out": 6144, "hidden": 4096},
            "Qwen3-8B's fused qkv_proj (32 q + 2 x 8 kv heads of 128) on an 8-sequence "
            "decode step: vLLM's Hopper entry 16 x 64 x 128, 4 warps, 5 stages; 96 tiles, "
            "one program each, 32 K steps over the 48 MiB weight",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # up to 12,288-deep products summed in fp32 (tf32 tl.dot for fp32 inputs) against fp64
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="matmul",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
