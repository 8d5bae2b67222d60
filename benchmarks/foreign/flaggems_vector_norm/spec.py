"""FlagGems' whole-tensor L2 norm (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_vector_norm` and never committed.

Why this one as the set's global reduction: FlagGems replaces `torch.linalg.vector_norm`
with it when it is enabled, and training asks for the L2 norm of every weight's gradient
before each optimizer step (`clip_grad_norm_` without foreach takes one norm per parameter,
then the norm of the norms; LAMB and LARS take each layer's weight and update norms for
their trust ratio).  Two launches: one program per sqrt(numel)-sized block (rounded up to
a power of two) squares and sums its block in fp32 and stores the sum as one partial in the
input's dtype, then a single program loads every partial through one power-of-two tile,
sums them and stores the square root.  The first launch reads the tensor once with no loop
(the whole block in registers); the second is a one-program tail whose width grows with
the partials' count.  Both trials are Llama 3.1 8B's gradients in bf16 training: a k_proj
weight (1024 x 4096: 2048 programs of 2048 elements, 8.4 MB read; launch-sized) and the
embedding table (128,256 x 4096: 16,032 programs of 32,768 elements, then a 16,384-wide
tail; 1.05 GB read).  The floor is reading the tensor once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_vector_norm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The tensor read once, one value written (the partials not counted)."""
    return (d["rows"] * d["cols"] + 1) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """One multiply and one add per element."""
    return 2 * d["rows"] * d["cols"]


_make_inputs = _common.forward_make_inputs("flaggems_vector_norm", "rows", "cols")
_reference = _common.forward_reference("flaggems_vector_norm")
_baselines = _common.forward_baselines(
    "flaggems_vector_norm",
    ("torch", "torch", "the same norm by torch.linalg.vector_norm", "torch_vector_norm"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_vector_norm.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768, 65536), "tile_n",
         "elements per program of the first launch (one partial each; a block leaving more "
         "than 65,536 partials is refused); None: FlagGems' next power of two of "
         "ceil(sqrt(numel))"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program of the first launch; None: Triton's default 4"),
    Knob("mid_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps of the second launch's one program; None: Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_vector_norm",
    description=(
        "FlagGems' whole-tensor L2 norm (v5.0.2, l2_norm_kernel_1 and _2), a weight "
        "gradient's norm for clipping: per-program sums of squares of sqrt(numel)-sized "
        "blocks, then one program's square root of their sum (two launches)"
    ),
    dims=(
        Dim("rows", "rows of the gradient (a weight's output features, or vocabulary)"),
        Dim("cols", "columns of the gradient (the weight's input features)"),
    ),
    trials=(
        Trial(
            "grad_k_proj_llama31_8b",
            {"rows": 1024, "cols": 4096},
            "Llama 3.1 8B's k_proj weight gradient (1024 x 4096, bf16 training): 2048 "
            "programs of 2048 elements and a 2048-wide tail, 8.4 MB read",
        ),
        Trial(
            "grad_embedding_llama31_8b",
            {"rows": 128256, "cols": 4096},
            "its embedding table's gradient (128,256 x 4096): 16,032 programs of 32,768 "
            "elements and a 16,384-wide tail, 1.05 GB read",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the partials are rounded to the dtype before the second sum, the norm once more
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="vector_norm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
