"""Liger-Kernel's GroupNorm forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

y = (x - mean) * rstd * w + b with mean and variance over each (sample, group) of a
diffusion U-Net's feature map (c/groups channels x hw pixels), fp32 as diffusion pipelines
run their norms.  No matmul: the floor is reading x once and writing y once (Liger reads x
twice: one loop for the statistics, one for the output).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("normalization", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "float32") -> int:
    return ELEMENT_SIZE[dtype] * (2 * d["n"] * d["c"] * d["hw"] + 2 * d["c"])


_make_inputs = _common.forward_make_inputs("liger_group_norm", "n", "c", "hw", "groups")
_reference = _common.forward_reference("liger_group_norm")
_baselines = _common.forward_baselines(
    "liger_group_norm",
    ("torch", "torch", "F.group_norm (torch's own kernels)", "torch_group_norm"),
)


_launch_info = _common.triton_launch_info("foreign.liger_group_norm.launcher")


TRITON_KNOBS = (
    Knob(
        "block_size",
        "int",
        (None, 1024, 2048, 4096, 8192, 16384, 32768, 65536),
        "tile_n",
        "elements of the group per loop step; None: Liger's min(65536, next_pow2(group size))",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one sample's group); None: Triton's default 4 (Liger sets none)",
    ),
)

SPEC = KernelSpec(
    name="liger_group_norm",
    description=(
        "Liger-Kernel's GroupNorm forward (0.8.5): one program per (sample, group), two "
        "loops over the group, fp32"
    ),
    dims=(
        Dim("n", "samples in the batch", "batch"),
        Dim("c", "channels"),
        Dim("hw", "pixels per channel (height x width)"),
        Dim("groups", "channel groups (the statistics are per sample and group)"),
    ),
    trials=(
        Trial(
            "sd_unet",
            {"n": 8, "c": 320, "hw": 4096, "groups": 32},
            "a Stable Diffusion 1.5 U-Net block at a 64x64 latent, batch 8: 84 MB moved by "
            "256 programs of 40960 elements",
        ),
        Trial(
            "sdxl_1024",
            {"n": 2, "c": 320, "hw": 16384, "groups": 32},
            "an SDXL U-Net block at a 128x128 latent (1024 px), batch 2: 84 MB moved by 64 "
            "programs of 163840 elements",
        ),
    ),
    backoff_dim="n",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # E[x^2] - mean^2 in fp32 (block sums in the input dtype): fp32 ~1e-6; fp16 one rounding
    # of y plus fp16 block sums
    tolerances={"float32": 1e-5, "float16": 5e-3, "bfloat16": 3e-2},
    entry_point="group_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    dtype="float32",
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
