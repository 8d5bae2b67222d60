"""SGLang's adaLN modulation kernel (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_dit_scale_shift` and never committed.

Why this one: SGLang's diffusion runtime modulates every LayerNorm of its DiTs through
`fuse_scale_shift_kernel` (LayerNormScaleShift and ScaleResidualLayerNormScaleShift); in
Wan2.2-TI2V-5B, whose timesteps are per token, each of its 30 blocks calls it twice per
denoising step with per-token fp32 shift and scale as large as the video stream.  One
program per 128 tokens x 128 channels of a sample loads the x tile and the matching shift
and scale tiles and stores x * (1 + scale) + shift: a pure stream, three inputs and one
output, no reuse.  Both trials are Wan2.2-TI2V-5B (hidden 3072, batch 1) at 1280 x 704
(its 16 x 16 VAE and 2 x 2 patches: 22 x 40 = 880 tokens a latent frame): a single-frame
image (880 tokens, 168 programs, 32.4 MB moved in bf16) and a 121-frame video (31 latent
frames: 27,280 tokens, 5136 programs, 1.0 GB).  The floor is reading x, shift and scale
once and writing y once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_dit_scale_shift")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")
MOD_BYTES = 4  # shift and scale are fp32 (Wan asserts it)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once and y written once in the model's dtype; the fp32 shift and scale read
    once each."""
    n = d["batch"] * d["tokens"] * d["hidden"]
    return 2 * n * ELEMENT_SIZE[dtype] + 2 * n * MOD_BYTES


def flops(d: Mapping[str, int]) -> int:
    """Per element: 1 + scale, the product and the shift (three)."""
    return 3 * d["batch"] * d["tokens"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("sglang_dit_scale_shift", "batch", "tokens", "hidden")
_reference = _common.forward_reference("sglang_dit_scale_shift")
_baselines = _common.forward_baselines(
    "sglang_dit_scale_shift",
    (
        "torch",
        "torch",
        "SGLang's non-CUDA path: x * (1 + scale) + shift in eager torch (several launches)",
        "torch_scale_shift",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_dit_scale_shift.launcher")


TRITON_KNOBS = (
    Knob("block_l", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "tokens per program; None: SGLang's 128"),
    Knob("block_c", "int", (None, 32, 64, 128, 256, 512), "tile_n",
         "channels per program; None: SGLang's 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: SGLang's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_dit_scale_shift",
    description=(
        "SGLang's adaLN modulation (v0.5.9, fuse_scale_shift_kernel_blc_opt), "
        "Wan2.2-TI2V's per-token modulation: one program per 128 tokens x 128 channels "
        "streams x and the fp32 shift and scale tiles and stores x * (1 + scale) + shift"
    ),
    dims=(
        Dim("batch", "samples (one video)", "batch"),
        Dim("tokens", "video tokens of a sample (latent frames x 880 patches)"),
        Dim("hidden", "the DiT's hidden size", "row_len"),
    ),
    trials=(
        Trial(
            "wan22_ti2v_5b_121f_720p",
            {"batch": 1, "tokens": 27280, "hidden": 3072},
            "Wan2.2-TI2V-5B (hidden 3072) generating 121 frames at 1280 x 704: 31 latent "
            "frames of 22 x 40 patches, 27,280 tokens: 5136 programs, 1.0 GB moved (bf16)",
        ),
        Trial(
            "wan22_ti2v_5b_image_720p",
            {"batch": 1, "tokens": 880, "hidden": 3072},
            "the same model generating one 1280 x 704 image (one latent frame): 880 "
            "tokens, 168 programs, 32.4 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    shape_metrics=lambda d: {"rows": d["tokens"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the kernel computes in fp32 (x promoted by the fp32 modulations) and rounds once, as
    # the reference does; the bounds leave room for a contracted multiply-add
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="scale_shift",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
