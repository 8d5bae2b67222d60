"""FlagGems' layer-norm backward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: kernels
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_layer_norm_backward` and never committed.

Why this one as the set's normalization backward: FlagGems replaces aten's
`native_layer_norm_backward` with it when it is enabled, and every training step of a model
with affine LayerNorms (a diffusion transformer such as Wan 2.1, a ViT such as SigLIP's
vision tower) runs it once per norm.  Two launches of a different shape: the input
gradient, one program per row walking the hidden size twice (two fp32 row sums of
dy * w and dy * w * x_hat, then dx from them, rereading dy and x), and the weight and bias
gradients, a column reduction: one program per column walks every row in 128-row steps,
each step a 128 x 1 strided load from dy and from x, then sums its tile.  Memory-bound;
the column reduction's one-column programs read one element per 128-byte row segment, so
its sectors are mostly wasted.  Trials: a fine-tuning step of SigLIP-so400m's vision tower
(hidden 1152, 4 images of 729 patches: 2916 rows; one masked 2048-column step per row, 1152
column programs) and a training step of Wan 2.1 14B (hidden 5120, a 480p 81-frame clip:
32,760 latent tokens; three 2048-column steps per row, the last half masked, 5120 column
programs each walking 256 row steps).  The floor is reading dy and x once, writing dx once,
plus the statistics and the weight.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_layer_norm_backward")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """dy and x read once, dx written once; mean and rstd read, the weight read and dw
    and db written once (all in the dtype)."""
    m, n = d["rows"], d["hidden"]
    return (3 * m * n + 2 * m + 3 * n) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """About 13 per element: x_hat (2), dy * w (1), the two row sums (3), dx (4), dw and
    db (3)."""
    return 13 * d["rows"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("flaggems_layer_norm_backward", "rows", "hidden")
_reference = _common.forward_reference("flaggems_layer_norm_backward")
_baselines = _common.forward_baselines(
    "flaggems_layer_norm_backward",
    (
        "torch",
        "torch",
        "aten's native_layer_norm_backward from the same statistics (in fp32)",
        "torch_layer_norm_backward",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_layer_norm_backward.launcher")


TRITON_KNOBS = (
    Knob("dx_block_rows", "int", (None, 1, 2, 4, 8), "rows_per_program",
         "rows per program of the input gradient; None: the tuning YAML's first value, 1"),
    Knob("dx_block_cols", "int", (None, 256, 512, 1024, 2048), "tile_n",
         "hidden columns per loop step of the input gradient; None: the YAML's 2048"),
    Knob("dx_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program of the input gradient; None: the YAML's first value, 4"),
    Knob("wb_block_rows", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows per loop step of the weight and bias gradients; None: the YAML's 128"),
    Knob("wb_block_cols", "int", (None, 1, 2, 4, 8, 16, 32), "tile_n",
         "columns per program of the weight and bias gradients; None: the YAML's first "
         "value, 1"),
    Knob("wb_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program of the weight and bias gradients; None: the YAML's first "
         "value, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of both launches' loops; None: the loader's default 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_layer_norm_backward",
    description=(
        "FlagGems' layer-norm backward (v5.0.2, layer_norm_backward_kernel and "
        "weight_bias_backward_kernel): per-row input gradients from two fp32 row sums, then "
        "the weight and bias gradients as a column reduction over every row"
    ),
    dims=(
        Dim("rows", "normalized rows (tokens or patches) in the batch", "rows"),
        Dim("hidden", "normalized size (the hidden size)", "row_len"),
    ),
    trials=(
        Trial(
            "siglip_so400m_4_images",
            {"rows": 2916, "hidden": 1152},
            "a fine-tuning step of SigLIP-so400m's vision tower (hidden 1152) on 4 images of "
            "27 x 27 patches: 2916 row programs with one masked 2048-column step, 1152 "
            "column programs of 23 row steps",
        ),
        Trial(
            "wan21_14b_480p_81_frames",
            {"rows": 32760, "hidden": 5120},
            "a training step of Wan 2.1 14B (hidden 5120) on a 480p 81-frame clip: 21 x 30 "
            "x 52 = 32,760 latent tokens, 32,760 row programs of three 2048-column steps "
            "(the last half masked), 5120 column programs of 256 row steps",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums over a row (dx) and over every row (dw, db), rounded once to the dtype
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-4},
    entry_point="layer_norm_backward",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
