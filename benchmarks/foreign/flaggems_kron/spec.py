"""FlagGems' Kronecker product of two matrices (FlagGems v5.0.2, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_kron` and never committed.

Why this one as the set's broadcast expansion: FlagGems replaces `torch.kron` with it when
it is enabled, and a LoKr adapter (LyCORIS' and PEFT's Kronecker-product adaptation) builds
each layer's weight update as kron(w1, w2), an 8 x 8 factor by a large one, whenever the
adapter is merged into the weights (loading it, or switching adapters in a server that
serves merged weights).  One program per 1 x 1024 output tile decodes each element's row and
column into an element of each factor, gathers both, multiplies and stores: the factors
(a few KB and up to 1.8 MB) stay in the cache, and the output, 64 times the larger factor,
is written once.  Memory-bound on the store.  Both trials are a LoKr update of
Llama 3.1 8B at factor 8 (w1 8 x 8): the grouped-query k_proj (1024 x 4096; w2 128 x 512:
4096 programs, 8.5 MB moved) and the MLP's gate_proj (14,336 x 4096; w2 1792 x 512: 57,344
programs, 119 MB moved).  The floor is reading both factors once and writing the output
once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_kron")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Both factors read once, the product written once."""
    a = d["m1"] * d["n1"]
    b = d["m2"] * d["n2"]
    return (a + b + a * b) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """One multiply per output element."""
    return d["m1"] * d["n1"] * d["m2"] * d["n2"]


_make_inputs = _common.forward_make_inputs("flaggems_kron", "m1", "n1", "m2", "n2")
_reference = _common.forward_reference("flaggems_kron")
_baselines = _common.forward_baselines(
    "flaggems_kron",
    ("torch", "torch", "the same product by torch.kron", "torch_kron"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_kron.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8, 16), "tile_m",
         "output rows per tile; None: the tuning YAML's first value, 1"),
    Knob("block_n", "int", (None, 256, 512, 1024, 2048, 4096), "tile_n",
         "output columns per tile; None: the tuning YAML's first value, 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: the tuning YAML's first value, 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_kron",
    description=(
        "FlagGems' Kronecker product of two matrices (v5.0.2, kron_kernel_for_batch_size_1): "
        "one program per 1 x 1024 output tile gathers an element of each factor per output "
        "element, multiplies and stores"
    ),
    dims=(
        Dim("m1", "rows of the small factor (LoKr's w1)"),
        Dim("n1", "columns of the small factor"),
        Dim("m2", "rows of the large factor (LoKr's w2)"),
        Dim("n2", "columns of the large factor"),
    ),
    trials=(
        Trial(
            "lokr_k_proj_llama31_8b",
            {"m1": 8, "n1": 8, "m2": 128, "n2": 512},
            "a factor-8 LoKr update of Llama 3.1 8B's k_proj (1024 x 4096 from 8 x 8 and "
            "128 x 512): 4096 programs, 8.5 MB moved (bf16)",
        ),
        Trial(
            "lokr_gate_proj_llama31_8b",
            {"m1": 8, "n1": 8, "m2": 1792, "n2": 512},
            "the same for the MLP's gate_proj (14,336 x 4096 from 8 x 8 and 1792 x 512): "
            "57,344 programs, 119 MB moved (bf16)",
        ),
    ),
    backoff_dim="m2",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # one product rounded to the dtype, as the fp64 reference rounds it
    tolerances={"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-6},
    entry_point="kron",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
