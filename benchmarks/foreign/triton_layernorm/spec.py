"""The Triton tutorial's layer norm forward (python/tutorials/05-layer-norm.py, MIT), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py triton_layernorm` and never committed.

y = (x - mean) / sqrt(var + eps) * w + b per row, statistics in fp32, fp16 in and out
(the tutorial's benchmark dtype).  The kernel also writes each row's mean and 1/std for a
backward pass.  No matmul: the floor is reading x, w, b once and writing y once (the
statistics, 8 bytes a row, are left out); the kernel reads x three times, which is what
its DRAM-bytes ratio shows once the row no longer stays in L1/L2.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "triton_layernorm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "float16") -> int:
    return ELEMENT_SIZE[dtype] * (2 * d["rows"] * d["hidden"] + 2 * d["hidden"])


_make_inputs = _common.forward_make_inputs("triton_layernorm", "rows", "hidden")
_reference = _common.forward_reference("triton_layernorm")
_baselines = _common.forward_baselines(
    "triton_layernorm",
    ("torch", "torch", "torch.nn.functional.layer_norm", "torch_layer_norm"),
)


_launch_info = _common.triton_launch_info("foreign.triton_layernorm.launcher")


TRITON_KNOBS = (
    Knob(
        "block_size",
        "int",
        (None, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768),
        "tile_n",
        "columns per step of the three row loops; None: the tutorial's next_pow2(hidden)",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program; None: the tutorial's BLOCK_SIZE / 256, at most 8",
    ),
)

SPEC = KernelSpec(
    name="triton_layernorm",
    description="the Triton tutorial's fused layer norm forward (05-layer-norm): one row per program, fp16",
    dims=(
        Dim("rows", "tokens (rows of x)", "rows"),
        Dim("hidden", "hidden size (the normalized dimension)", "row_len"),
    ),
    trials=(
        Trial(
            "large",
            {"rows": 8192, "hidden": 4096},
            "a Llama-3-8B layer over an 8k-token chunk: 134 MB moved, bandwidth-bound",
        ),
        Trial(
            "wide",
            {"rows": 4096, "hidden": 16384},
            "the tutorial's benchmark (M=4096) at its wide end: 268 MB, a 32 KB row per program",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 statistics, one rounding of y (values up to ~4: fp16 half-ulp 1e-3 relative)
    tolerances={"float16": 5e-3, "bfloat16": 2e-2, "float32": 1e-5},
    entry_point="layer_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    dtype="float16",
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
