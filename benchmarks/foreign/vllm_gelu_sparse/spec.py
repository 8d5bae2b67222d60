"""vLLM's Gemma 3n activation-sparsity GELU-and-mul (vLLM v0.34.0, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_gelu_sparse` and never committed.

Why this one as the set's statistics-gated activation: Gemma 3n's first ten layers keep
only about 5% of the MLP's gate (activation_sparsity 0.95): `GeluAndMulSparse` cuts each
token's gate at mean + 1.6449 x std of that token's own gate row (a Gaussian top-k), then
applies the tanh GELU and multiplies by the up half.  vLLM's Triton op does it in one
launch, one program per token that holds the whole intermediate row in registers
(BLOCK_SIZE = next_power_of_2(d) lanes of gate and of up, fp32): two row reductions (mean,
then the centred sum of squares), the statistics rounded to the input dtype as PyTorch's
op-by-op path would, then the clamp, an exp-based tanh, a product and a store.  Unlike a
plain GEGLU the elementwise part waits on a full-row reduction, and unlike a norm the row
is 16,384 wide and held whole by 8 warps (64 gate + 64 up values a thread).  The large
trial is a 4,096-token prefill chunk of Gemma-3n-E4B (intermediate 16,384: 384 MiB moved in
bf16); the small one a 32-token decode batch of Gemma-3n-E2B (intermediate 8,192).
Memory-bound at prefill, latency- and register-bound at decode; the floor is reading the
gate_up rows once and writing the product once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_gelu_sparse")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The [rows, 2d] gate_up read once and the [rows, d] output written once."""
    return 3 * d["rows"] * d["d"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """About 20 a gate value: 4 for the mean and centred sum of squares, 2 for the cutoff
    and clamp, 13 for the tanh GELU (cube, fused adds, the sigmoid's exp and divide), 1
    for the product with up."""
    return 20 * d["rows"] * d["d"]


_make_inputs = _common.forward_make_inputs("vllm_gelu_sparse", "rows", "d")
_reference = _common.forward_reference("vllm_gelu_sparse")
_baselines = _common.forward_baselines(
    "vllm_gelu_sparse",
    (
        "torch",
        "torch",
        "vLLM's native op by op in the input dtype: mean, std, relu of gate minus the "
        "cutoff, tanh GELU, product with up",
        "torch_gelu_sparse",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_gelu_sparse.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "lanes of a program's gate row and of its up row (at least d: a program takes the "
         "whole row, the rest masked); None: vLLM's next_power_of_2(d)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program (the row's registers spread over them); None: vLLM's "
         "min(max(block / 256, 1), 8)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages (the kernel has no loop to pipeline); None: Triton's "
         "default 3 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_gelu_sparse",
    description=(
        "vLLM's Gemma 3n activation-sparsity GELU-and-mul (v0.34.0, "
        "_gelu_and_mul_sparse_kernel): one program per token holds its whole gate and up "
        "rows, cuts the gate at mean + 1.6449 std of the row, then tanh GELU times up"
    ),
    dims=(
        Dim("rows", "token rows of the MLP", "batch"),
        Dim("d", "intermediate size (half the gate_up width)", "row_len"),
    ),
    trials=(
        Trial(
            "decode_32_gemma3n_e2b",
            {"rows": 32, "d": 8192},
            "a 32-token decode batch through a sparse-activation MLP of Gemma-3n-E2B "
            "(intermediate 8,192): 32 programs of 8,192 lanes, 1.5 MiB moved",
        ),
        Trial(
            "prefill_4096_gemma3n_e4b",
            {"rows": 4096, "d": 16384},
            "a 4,096-token prefill chunk through a sparse-activation MLP of Gemma-3n-E4B "
            "(intermediate 16,384): 4,096 programs of 16,384 lanes, 384 MiB moved",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the statistics and the cutoff rounded to the dtype as vLLM's op-by-op path rounds
    # them (the reference keeps them in fp32): values near the cutoff move by a dtype ulp
    tolerances={"bfloat16": 5e-2, "float16": 1e-2, "float32": 1e-4},
    entry_point="gelu_sparse",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
