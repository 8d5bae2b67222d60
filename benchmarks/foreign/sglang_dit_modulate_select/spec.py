"""SGLang's per-token select of two adaLN modulations (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_dit_modulate_select` and never committed.

Why this one as the set's DiT modulation: SGLang's diffusion runtime serves
Qwen-Image-Edit-2511 with `zero_cond_t`, where the reference images' tokens are modulated
with timestep zero's adaLN parameters and the noisy latent's tokens with the denoising
step's; every one of its 60 double-stream blocks calls this kernel twice on the image
stream (after norm1 and after norm2), at every denoising step.  One program per 128 tokens
x 128 channels of a sample loads the x tile, the tokens' int32 index and the six
modulation rows of its sample (shift, scale and gate of both sets, [1, 128] each, reused by
its 128 tokens), selects per token with tl.where and stores y = x * (1 + scale) + shift and
the selected gate.  Memory-bound, two full-size outputs per input; the modulation rows are
re-read once per token tile.  Both trials are Qwen-Image-Edit-2511 (hidden 3072, batch 1,
as `zero_cond_t` runs it): a 512 x 512 edit (1024 noisy tokens and 1024 of one reference
image: 2048 tokens, 384 programs, 38 MB moved in bf16) and a 1024 x 1024 edit with two
reference images (4096 + 8192 tokens: 12,288 tokens, 2304 programs, 226 MB).  The floor is
reading x, the index and the modulation rows once and writing y and the gate once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_dit_modulate_select")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once, y and the gate written once, the int32 index and the six modulation
    rows of each sample read once."""
    tokens = d["batch"] * (d["noisy_tokens"] + d["cond_tokens"])
    es = ELEMENT_SIZE[dtype]
    return 3 * tokens * d["hidden"] * es + 4 * tokens + 6 * d["batch"] * d["hidden"] * es


def flops(d: Mapping[str, int]) -> int:
    """Per element: 1 + scale, the product and the shift (three; the selects not counted)."""
    return 3 * d["batch"] * (d["noisy_tokens"] + d["cond_tokens"]) * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "sglang_dit_modulate_select", "batch", "noisy_tokens", "cond_tokens", "hidden"
)
_reference = _common.forward_reference("sglang_dit_modulate_select")
_baselines = _common.forward_baselines(
    "sglang_dit_modulate_select",
    (
        "torch",
        "torch",
        "SGLang's non-CUDA path: torch.where on the index for each of shift, scale and "
        "gate, then x * (1 + scale) + shift (several launches)",
        "torch_modulate_select",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_dit_modulate_select.launcher")


TRITON_KNOBS = (
    Knob("block_l", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "tokens per program (each reuses its sample's modulation rows); None: SGLang's 128"),
    Knob("block_c", "int", (None, 32, 64, 128, 256, 512), "tile_n",
         "channels per program; None: SGLang's 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: SGLang's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_dit_modulate_select",
    description=(
        "SGLang's per-token select of two adaLN modulations (v0.5.9, "
        "fuse_scale_shift_gate_select01_kernel_blc_opt), Qwen-Image-Edit's zero_cond_t: one "
        "program per 128 tokens x 128 channels picks each token's shift, scale and gate "
        "from two sets by its index and stores x * (1 + scale) + shift and the gate"
    ),
    dims=(
        Dim("batch", "samples (Qwen-Image's zero_cond_t runs one)", "batch"),
        Dim("noisy_tokens", "tokens of the noisy latent (set 0: the step's timestep)"),
        Dim("cond_tokens", "tokens of the reference images (set 1: timestep zero)"),
        Dim("hidden", "the DiT's hidden size", "row_len"),
    ),
    trials=(
        Trial(
            "qwen_image_edit_512px_1ref",
            {"batch": 1, "noisy_tokens": 1024, "cond_tokens": 1024, "hidden": 3072},
            "Qwen-Image-Edit-2511 (hidden 3072) editing a 512 x 512 image: 32 x 32 latent "
            "patches of the noisy image and of one reference image, 2048 tokens: 384 "
            "programs, 38 MB moved (bf16)",
        ),
        Trial(
            "qwen_image_edit_1024px_2ref",
            {"batch": 1, "noisy_tokens": 4096, "cond_tokens": 8192, "hidden": 3072},
            "the same model at 1024 x 1024 with two reference images (64 x 64 patches "
            "each): 12,288 tokens, 2304 programs, 226 MB moved (bf16)",
        ),
    ),
    backoff_dim="noisy_tokens",
    make_inputs=_make_inputs,
    # block_l tiles a sample's whole token axis, noisy and reference tokens alike.
    shape_metrics=lambda d: {"rows": d["noisy_tokens"] + d["cond_tokens"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the kernel computes in the model's dtype (a few roundings), the reference in fp32;
    # the gate is a copy and exact
    tolerances={"bfloat16": 2e-2, "float16": 4e-3, "float32": 1e-5},
    entry_point="modulate_select",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
