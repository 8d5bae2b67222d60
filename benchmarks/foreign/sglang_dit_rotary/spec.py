"""SGLang's diffusion rotary (SGLang v0.5.9's multimodal_gen Triton rotary, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_dit_rotary` and never committed.

Why this one as the set's video-DiT rotary: SGLang's diffusion runtime rotates q and k of
every DiT self-attention with a GPT-J-style (interleaved) rope through
`apply_rotary_embedding` (Wan 2.1's and HunyuanVideo's blocks call `_apply_rotary_emb`
with is_neox_style=False, and the FlashInfer-less fallback sends every rope there).  One
program per (token, head) row walks the row's head_dim / 2 pairs BLOCK_HS_HALF at a time:
two stride-2 loads of the even and odd values, the token's half-width cos and sin rows,
fp32 fma rotation, two stride-2 stores.  Its launch is an autotune over pair tile and warps
(32/2, 64/4, 128/4, 256/8); the stages are Triton's default.  The large trial is one
Wan 2.1-14B 480p, 81-frame video's q (21 x 30 x 52 = 32,760 latent tokens, 40 heads of
128: 1,310,400 programs, 680 MB moved); the small one a Wan 2.1-1.3B single 480 x 832 frame
(1,560 tokens, 12 heads: 18,720 programs, 10.0 MB moved).  Memory-bound; the floor is
reading x once, writing it once and reading the tables.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_dit_rotary")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once and written once, and the half-width cos and sin tables read once, all
    in the dtype."""
    values = d["tokens"] * d["heads"] * d["head_dim"]
    tables = 2 * d["tokens"] * d["head_dim"] // 2
    return (2 * values + tables) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an fma per rotated value (x1 cos - x2 sin, x2 cos + x1 sin)."""
    return 3 * d["tokens"] * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs("sglang_dit_rotary", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("sglang_dit_rotary")
_baselines = _common.forward_baselines(
    "sglang_dit_rotary",
    (
        "torch",
        "torch",
        "the plain-torch GPT-J rotation (strided even/odd views, several element-wise "
        "kernels and a stack)",
        "torch_rotary",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_dit_rotary.launcher")


TRITON_KNOBS = (
    Knob("block_hs_half", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "rotary pairs per loop step (the row loops over head_dim / 2 in these steps); "
         "None: SGLang's autotune config covering head_dim / 2 (64 for a head of 128)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: that config's warps (4 for a tile of 64)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline stages of the pair loop; None: Triton's default 3, as SGLang's "
         "autotune configs leave it"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_dit_rotary",
    description=(
        "SGLang's diffusion rotary (v0.5.9, multimodal_gen _rotary_embedding_kernel): one "
        "program per (token, head) row rotates its interleaved pairs GPT-J style by the "
        "token's cos/sin rows in fp32, head_dim / 2 pairs in 64-pair stride-2 steps"
    ),
    dims=(
        Dim("tokens", "latent video tokens (frames x rows x columns of patches)", "rows"),
        Dim("heads", "attention heads of the DiT", "num_heads"),
        Dim("head_dim", "values per head, all rotated", "head_dim"),
    ),
    trials=(
        Trial(
            "wan21_1p3b_480p_1frame",
            {"tokens": 1560, "heads": 12, "head_dim": 128},
            "one 480 x 832 frame through Wan 2.1-1.3B's DiT (1 x 30 x 52 latent patches, 12 "
            "heads of 128, q or k): 18,720 programs, 10.0 MB moved",
        ),
        Trial(
            "wan21_14b_480p_81frames",
            {"tokens": 32760, "heads": 40, "head_dim": 128},
            "an 81-frame 480 x 832 video through Wan 2.1-14B's DiT (21 x 30 x 52 latent "
            "patches, 40 heads of 128, q or k): 1,310,400 programs, 680 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 rotation rounded once to the dtype, as the reference does (fma vs mul-add)
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="rotary",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
