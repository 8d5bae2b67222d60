"""SGLang's DP-attention token copy (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_dp_memcpy` and never committed.

Why this one as the set's plain copy with a device-side offset: with data-parallel attention
(DeepSeek-V3 and R1 served with `--enable-dp-attention`), each rank's attention output is
gathered into one global token buffer before the MoE layers and scattered back after them,
in every layer.  SGLang's gather zero-fills the buffer, copies the rank's rows into it at
the rank's first token with this kernel, and all-reduces it.  The offset and the row count
live on the device (the kernel reads them, so no host sync), and the grid covers the whole
local buffer: one program per 8192 elements copies them, and programs past the count store
nothing.  Memory-bound.  Both trials are DeepSeek-V3 (hidden 7168, bf16) with 8 attention
ranks, the copy of the last rank: a decode step of 64 tokens per rank (56 programs, 1.8 MB
moved) and an 8192-token prefill chunk per rank (7168 programs, 235 MB moved).  Output: the
global buffer (written in place).  The floor is reading the rank's rows and writing them
once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_dp_memcpy")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The rank's rows read once and written once (the offset and count are negligible)."""
    return 2 * d["tokens"] * d["hidden"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """A copy: none."""
    del d
    return 0


_make_inputs = _common.forward_make_inputs("sglang_dp_memcpy", "ranks", "tokens", "hidden")
_reference = _common.forward_reference("sglang_dp_memcpy")
_baselines = _common.forward_baselines(
    "sglang_dp_memcpy",
    (
        "torch",
        "torch",
        "the same by torch's copy_ into a slice (the offset and count read to the host "
        "first, as a plain slice needs)",
        "torch_copy",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_dp_memcpy.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "elements copied per program; None: SGLang's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_dp_memcpy",
    description=(
        "SGLang's DP-attention token copy (v0.5.9, memcpy_triton_kernel): a rank's rows "
        "copied into the global token buffer at an offset read on the device, one program "
        "per 8192 elements of the local buffer"
    ),
    dims=(
        Dim("ranks", "data-parallel attention ranks (the global buffer holds all of theirs)"),
        Dim("tokens", "tokens of each rank", "rows"),
        Dim("hidden", "hidden size"),
    ),
    trials=(
        Trial(
            "decode_64x8_deepseek_v3",
            {"ranks": 8, "tokens": 64, "hidden": 7168},
            "a decode step of DeepSeek-V3 with 8 DP-attention ranks of 64 requests each, "
            "the last rank's rows: 56 programs, 1.8 MB moved (bf16)",
        ),
        Trial(
            "prefill_8192x8_deepseek_v3",
            {"ranks": 8, "tokens": 8192, "hidden": 7168},
            "an 8192-token prefill chunk on each of the 8 ranks: 7168 programs, 235 MB "
            "moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    # A program's block is 1-D over the rank's whole flattened buffer (tokens x hidden).
    shape_metrics=lambda d: {"row_len": d["tokens"] * d["hidden"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="dp_memcpy",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
