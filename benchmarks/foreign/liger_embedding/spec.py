"""Liger-Kernel's experimental embedding forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt
sees it: a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The token embedding lookup at the bottom of every LLM: each token's row of the [vocab, dim]
table gathered into a [tokens, dim] output, in 128 x 128 tiles.  Output: the gathered rows,
bf16.  No arithmetic at all: the floor is reading the token ids and the rows they name once
and writing the output once (the rest of the table is never touched).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")
SIZES = (None, 16, 32, 64, 128, 256)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The named rows read once and the output written once, int64 token ids read."""
    return 2 * ELEMENT_SIZE[dtype] * d["tokens"] * d["dim"] + 8 * d["tokens"]


_make_inputs = _common.forward_make_inputs("liger_embedding", "tokens", "vocab", "dim")
_reference = _common.forward_reference("liger_embedding")
_baselines = _common.forward_baselines(
    "liger_embedding",
    ("torch", "torch", "torch's F.embedding (one gather kernel)", "torch_embedding"),
)


_launch_info = _common.triton_launch_info("foreign.liger_embedding.launcher")


TRITON_KNOBS = (
    Knob(
        "block_m",
        "int",
        SIZES,
        "rows_per_program",
        "tokens (output rows) per program; None: Liger's next_pow2(min(128, dim))",
    ),
    Knob(
        "block_n",
        "int",
        SIZES,
        "tile_n",
        "embedding columns per program; None: Liger's next_pow2(min(128, dim))",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16),
        "warps",
        "warps per program (one tokens x columns tile); None: Triton's default 4 (Liger sets none)",
    ),
)

SPEC = KernelSpec(
    name="liger_embedding",
    description=(
        "Liger-Kernel's experimental embedding forward (0.8.5): table rows gathered by token "
        "id in 128 x 128 tiles, bf16"
    ),
    dims=(
        Dim("tokens", "token ids looked up (output rows)", "rows"),
        Dim("vocab", "rows of the embedding table"),
        Dim("dim", "embedding width (hidden size)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill",
            {"tokens": 8192, "vocab": 128256, "dim": 4096},
            "Llama-3-8B's embedding (128k x 4096) over an 8k-token prefill chunk: 134 MB "
            "gathered and written by 2048 programs",
        ),
        Trial(
            "decode_70b",
            {"tokens": 64, "vocab": 128256, "dim": 8192},
            "a Llama-3-70B decode step of 64 sequences (8192 wide): 2.1 MB in 64 programs "
            "on 132 SMs",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: every element comes out exactly (the check needs a positive bound)
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="embedding",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
