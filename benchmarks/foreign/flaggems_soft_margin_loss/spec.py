"""FlagGems' soft-margin loss with a mean reduction (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_soft_margin_loss` and never committed.

Why this one as the set's atomics: FlagGems replaces torch's `soft_margin_loss` with it when
it is enabled, and SigLIP's pairwise sigmoid loss is exactly this loss over a device's block
of image-text similarities (targets +1 on matching pairs, -1 elsewhere), summed instead of
averaged.  One program per 1024 elements computes log(1 + exp(-x y)) in fp32, sums its block
and adds the sum into a single fp32 scalar with one atomic add, every program on the same
address; the scalar is zero-filled first, then divided by the element count and cast:
four launches (three in fp32).  Both trials are SigLIP's per-device similarity blocks: a
4096 x 4096 block (16,384 programs, launch-sized) and a 16,384 x 16,384 block (262,144
programs, large).  The floor is reading the scores and the targets once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_soft_margin_loss")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The scores and the targets read once (the scalar result is negligible)."""
    return 2 * d["images"] * d["texts"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """About eight per element (product, abs, max, exp, log, adds), the atomics not
    counted."""
    return 8 * d["images"] * d["texts"]


_make_inputs = _common.forward_make_inputs("flaggems_soft_margin_loss", "images", "texts")
_reference = _common.forward_reference("flaggems_soft_margin_loss")
_baselines = _common.forward_baselines(
    "flaggems_soft_margin_loss",
    (
        "torch",
        "torch",
        "the same loss by torch's F.soft_margin_loss in the input dtype",
        "torch_soft_margin_loss",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_soft_margin_loss.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 512, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "elements summed per program (one atomic add each into the scalar); None: "
         "FlagGems' 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_soft_margin_loss",
    description=(
        "FlagGems' soft-margin loss, mean (v5.0.2), SigLIP's pairwise sigmoid loss over a "
        "block of image-text similarities: one program per 1024 elements sums "
        "log(1 + exp(-x y)) in fp32 and adds it atomically into one scalar (zero-filled "
        "before, divided and cast after)"
    ),
    dims=(
        Dim("images", "images in the device's block (rows of similarities)", "rows"),
        Dim("texts", "texts in the block (columns)"),
    ),
    trials=(
        Trial(
            "siglip_block4096",
            {"images": 4096, "texts": 4096},
            "a SigLIP device block of 4096 images x 4096 texts: 16,384 programs, 67.1 MB "
            "moved (bf16)",
        ),
        Trial(
            "siglip_block16384",
            {"images": 16384, "texts": 16384},
            "a 16,384 x 16,384 block: 262,144 programs, 1074 MB moved (bf16)",
        ),
    ),
    backoff_dim="images",
    make_inputs=_make_inputs,
    # A program's block is 1-D over the whole flattened similarity block (images x texts).
    shape_metrics=lambda d: {"row_len": d["images"] * d["texts"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 sum in atomic order against fp64, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="soft_margin_loss",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
