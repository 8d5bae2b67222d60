"""FlagGems' fast Hadamard transform (FlagGems v5.0.2, Apache-2.0; a Triton rewrite of
Dao-AILab's fast-hadamard-transform), as kbopt sees it: a kernel nobody here wrote, fetched
into the git-ignored third_party/ by `scripts/fetch_third_party.py flaggems_hadamard` and
never committed.

Why this one as the set's butterfly: rotation-based quantization (QuaRot, SpinQuant)
multiplies activations by a Hadamard matrix online, before the low-bit down projection, so
that outlier channels are spread over all of them; Meta's SpinQuant releases of Llama 3.2
apply it at every layer to the 8192-wide MLP activation.  The transform is log2(dim)
butterfly stages of sums and differences: each program holds whole rows in registers (8192
fp32 values over 8 warps at FlagGems' choice) and runs the 13 stages as reshapes, axis
swaps, splits and joins, which the compiler lowers to register shuffles or round trips
through shared memory.  13 adds per value against 4 bytes moved in bf16: memory-bound if
the shuffles are cheap.  Both trials are Llama-3.2-1B's SpinQuant rotation of the
down projection's input (8192 wide): a 32-token decode step (32 programs on 132 SMs) and
an 8192-token prefill.  Output: the rotated rows (scale 1 / sqrt(dim)) in the input dtype.
The floor is reading x once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_hadamard")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound",)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once and the output written once."""
    return 2 * ELEMENT_SIZE[dtype] * d["tokens"] * d["dim"]


def flops(d: Mapping[str, int]) -> int:
    """A sum or a difference per value and stage (log2(dim) stages), and the scale."""
    return d["tokens"] * d["dim"] * (d["dim"].bit_length() - 1 + 1)


_make_inputs = _common.forward_make_inputs("flaggems_hadamard", "tokens", "dim")
_reference = _common.forward_reference("flaggems_hadamard")
_baselines = _common.forward_baselines(
    "flaggems_hadamard",
    (
        "torch",
        "torch",
        "the same transform as log2(dim) torch butterfly stages in fp32 (QuaRot's fallback "
        "without the CUDA kernel)",
        "torch_hadamard",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_hadamard.launcher")


TRITON_KNOBS = (
    Knob("rows_per_program", "int", (None, 1, 2, 4, 8, 16), "rows_per_program",
         "rows transformed per program, all held in registers at once; None: FlagGems' "
         "table (1 above 1024 columns)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program (the row's values spread over them); None: FlagGems' table "
         "(8 above 4096 columns)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_hadamard",
    description=(
        "FlagGems' fast Hadamard transform (v5.0.2, 2-D fp32 kernel): each program holds "
        "whole rows in registers and runs log2(dim) butterfly stages as reshape, permute, "
        "split and join, then scales and stores in the dtype"
    ),
    dims=(
        Dim("tokens", "rows (tokens) transformed", "rows"),
        Dim("dim", "row width, a power of two", "row_len"),
    ),
    trials=(
        Trial(
            "spinquant_llama3_2_1b_decode32",
            {"tokens": 32, "dim": 8192},
            "Llama-3.2-1B SpinQuant's online rotation of the down projection's 8192-wide "
            "input in a 32-sequence decode step: 32 programs of 8 warps, 1 MB moved",
        ),
        Trial(
            "spinquant_llama3_2_1b_prefill8k",
            {"tokens": 8192, "dim": 8192},
            "the same rotation over an 8192-token prefill: 8192 programs, 268 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # 13 fp32 butterfly stages (exact sums of +-x up to rounding), rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="hadamard",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
