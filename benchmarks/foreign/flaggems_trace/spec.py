"""FlagGems' trace (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody here
wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
flaggems_trace` and never committed.

Why this one: the set has never had a single-program kernel whose time is a serial walk of
strided gathers.  FlagGems replaces `torch.trace` with it when it is enabled, and K-FAC's
factored Tikhonov damping (Martens and Grosse 2015; kfac-pytorch, KFAC-JAX) takes the trace
of each layer's Kronecker factors at every factor update, pi = sqrt((tr(A) / dim A) /
(tr(G) / dim G)).  The kernel runs one program (grid (1,)): it loads 1024 diagonal elements
per step, n + 1 elements apart (each in its own 32-byte sector, one useful element of 16),
adds them into an fp32 vector and sums it once at the end; the loop's steps are serial, so
the time is the latency of ceil(n / 1024) dependent rounds of scattered loads on one SM.
Both trials are K-FAC input-activation factors of Llama 3.1 layers: the 4096 x 4096 factor
of an 8B attention projection (4 steps) and the 28,672 x 28,672 factor of a 70B MLP
down-projection (28 steps; a 1.6 GB matrix of which 57 KB is read).  The floor counts the
diagonal's bytes only; a sector per element is the real traffic, and one SM the real limit.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_trace")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The diagonal read once and the 0-d trace written (the sectors around each diagonal
    element are not counted)."""
    return (d["n"] + 1) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """One add per diagonal element."""
    return d["n"]


_make_inputs = _common.forward_make_inputs("flaggems_trace", "n")
_reference = _common.forward_reference("flaggems_trace")
_baselines = _common.forward_baselines(
    "flaggems_trace",
    ("torch", "torch", "torch.trace (what K-FAC calls)", "torch_trace"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_trace.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "diagonal elements loaded per loop step; None: FlagGems' 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps of the one program; None: Triton's default 4 (FlagGems passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining stages of the diagonal loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_trace",
    description=(
        "FlagGems' trace (v5.0.2, trace_kernel) of a K-FAC Kronecker factor: one program "
        "walks the diagonal 1024 strided elements per step, summed in fp32"
    ),
    dims=(Dim("n", "rows and columns of the square factor (its diagonal's length)"),),
    trials=(
        Trial(
            "llama31_8b_kfac_attn_factor",
            {"n": 4096},
            "K-FAC's damping trace of a Llama 3.1 8B attention projection's input factor "
            "(4096 x 4096): one program, 4 steps of 1024 diagonal elements (bf16)",
        ),
        Trial(
            "llama31_70b_kfac_down_proj_factor",
            {"n": 28672},
            "the same for a Llama 3.1 70B MLP down-projection's input factor (28,672 x "
            "28,672, 1.6 GB in bf16): one program, 28 steps",
        ),
    ),
    backoff_dim="n",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the fp32 sum rounded once to the output's dtype: one ulp of it at most
    tolerances={"bfloat16": 8e-3, "float16": 1e-3, "float32": 1e-5},
    entry_point="trace",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
