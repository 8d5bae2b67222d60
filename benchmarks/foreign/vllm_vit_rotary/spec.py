"""vLLM's ViT rotary (vLLM v0.34.0's bundled flash-attention Triton rotary, Apache-2.0;
Tri Dao's kernel), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py vllm_vit_rotary` and never
committed.

Why this one as the set's vision-tower rotary: `ApplyRotaryEmb.forward_cuda` runs vLLM's
bundled flash-attention `apply_rotary` in every block of the vision encoders that use it
(Qwen2.5-VL's ViT: q and k of a block stacked as a batch of two, each [patches, 16 heads,
80], rotated GPT-NeoX style by a 2-D rope whose cos and sin tables hold the patch's row
angles over the first quarter of the head and its column angles over the second).  One
program per BLOCK_M tokens, head and q-or-k loads both halves of its rows as [BLOCK_M,
BLOCK_K / 2] tiles, lanes past the rotary dims masked (80 of 128 columns live), and the
cos/sin table rows, rotates in fp32 and stores.  No loop and no reduction: the column tile
must cover the rotary dims, and the tokens per program set the grid.  The large trial is
one 1344 x 1344 image through Qwen2.5-VL's ViT (9,216 patches: 36,864 programs, 96 MB
moved); the small one a 224 x 224 image (256 patches: 1,024 programs, 2.6 MB moved).
Memory-bound; the floor is reading q and k once, writing them once and reading the tables.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_vit_rotary")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q and k read once and written once, and the half-width cos and sin tables read once,
    all in the dtype."""
    values = d["qk"] * d["tokens"] * d["heads"] * d["head_dim"]
    tables = 2 * d["tokens"] * d["head_dim"] // 2
    return (2 * values + tables) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """Two multiplies and an add or subtract per rotated value (x0 cos - x1 sin and
    x0 sin + x1 cos)."""
    return 3 * d["qk"] * d["tokens"] * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs("vllm_vit_rotary", "qk", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("vllm_vit_rotary")
_baselines = _common.forward_baselines(
    "vllm_vit_rotary",
    (
        "torch",
        "torch",
        "vLLM's forward_native way in plain torch (rotate_half by chunk and cat, several "
        "element-wise kernels)",
        "torch_rotary",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_vit_rotary.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8, 16, 32, 64), "rows_per_program",
         "tokens per program; None: vLLM's 8 (4 past 128 rotary dims)"),
    Knob("block_k", "int", (None, 128, 256), "tile_n",
         "columns per program, both halves (the kernel has no loop: it must cover the "
         "rotary dims, 80 here); None: vLLM's smallest of 32/64/128/256 covering them"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 2 up to 64 rotary dims, else 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_vit_rotary",
    description=(
        "vLLM's ViT rotary (v0.34.0, vllm_flash_attn rotary_kernel): one program per 8 "
        "tokens, head and q-or-k rotates both halves of the rows GPT-NeoX style by a 2-D "
        "patch rope's cos/sin tables in fp32, 80 of 128 columns live"
    ),
    dims=(
        Dim("qk", "tensors rotated in one call (q and k stacked: 2)", "batch"),
        Dim("tokens", "patch tokens of the image(s)", "rows"),
        Dim("heads", "attention heads of the vision tower", "num_heads"),
        Dim("head_dim", "values per head, all rotated (rotary_dim = head_dim)", "head_dim"),
    ),
    trials=(
        Trial(
            "vit_qwen25vl_224px",
            {"qk": 2, "tokens": 256, "heads": 16, "head_dim": 80},
            "one 224 x 224 image through Qwen2.5-VL's ViT (16 x 16 patches, 16 heads of 80, "
            "q and k): 1,024 programs, 2.6 MB moved",
        ),
        Trial(
            "vit_qwen25vl_1344px",
            {"qk": 2, "tokens": 9216, "heads": 16, "head_dim": 80},
            "one 1344 x 1344 image through Qwen2.5-VL's ViT (96 x 96 patches, 16 heads of "
            "80, q and k): 36,864 programs, 96 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 rotation rounded once to the dtype, as the reference does
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5},
    entry_point="rotary",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
