"""FlagGems' index_add over dim 0 (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_index_add` and never committed.

Why this one as the set's indexed accumulation: FlagGems replaces `torch.index_add` and
`index_add_` with it when it is enabled, and the eager MoE blocks of Hugging Face
transformers (Mixtral, Qwen2-MoE, Qwen3-MoE; the path fine-tuning and reference inference
take) add each expert's output rows into the layer's output with
`final_hidden_states.index_add_(0, top_x, expert_out)`, once per expert and layer.  FlagGems
generates the kernel's text per source rank; one program per 128 source elements decodes
each element's row and column, loads its destination row from the index and adds it into
the output with a relaxed atomic (the rows are distinct, so no two atomics meet).  The out
-of-place `index_add` first clones the input: the timed call is that copy and the kernel.
Memory-bound: the copy moves the whole output, the kernel a read-modify-write of the
indexed rows.  Both trials are one expert of Mixtral 8x7B (hidden 4096, 8 experts, top-2: a
quarter of the tokens on average): a decode step of 64 sequences (16 rows into 64 tokens:
512 programs, 1.4 MB moved) and a fine-tuning micro-batch of 4 x 4096 tokens (4096 rows
into 16,384: 131,072 programs, 370 MB moved).  The floor is the copy plus reading the index
and the source once and the indexed rows of the output twice.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_index_add")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The clone (the input read, the output written), the int64 index and the source read
    once, the indexed output rows read and written by the atomics."""
    out = d["tokens"] * d["hidden"]
    src = d["rows"] * d["hidden"]
    return (2 * out + 3 * src) * ELEMENT_SIZE[dtype] + 8 * d["rows"]


def flops(d: Mapping[str, int]) -> int:
    """One add per source element (alpha is 1)."""
    return d["rows"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("flaggems_index_add", "tokens", "rows", "hidden")
_reference = _common.forward_reference("flaggems_index_add")
_baselines = _common.forward_baselines(
    "flaggems_index_add",
    ("torch", "torch", "the same by torch.index_add", "torch_index_add"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_index_add.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "source elements per program; None: FlagGems' generated wrapper's 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_index_add",
    description=(
        "FlagGems' index_add over dim 0 (v5.0.2, the generated _index_add_jit_function for a "
        "rank-2 source): after the input's clone, one program per 128 source elements adds "
        "each into the output row its index names with a relaxed atomic"
    ),
    dims=(
        Dim("tokens", "rows of the input and output (the MoE layer's tokens)", "batch"),
        Dim("rows", "source rows, one per index (the tokens routed to one expert)"),
        Dim("hidden", "columns (the model's hidden size)"),
    ),
    trials=(
        Trial(
            "moe_combine_decode64_mixtral_8x7b",
            {"tokens": 64, "rows": 16, "hidden": 4096},
            "one expert's combine in Mixtral 8x7B's eager MoE block (HF transformers) on a "
            "decode step of 64 sequences: 16 rows into 64 tokens, 512 programs, 1.4 MB moved "
            "(bf16)",
        ),
        Trial(
            "moe_combine_train4x4096_mixtral_8x7b",
            {"tokens": 16384, "rows": 4096, "hidden": 4096},
            "the same on a fine-tuning micro-batch of 4 x 4096 tokens: 4096 rows (a quarter, "
            "top-2 of 8) into 16,384 tokens, 131,072 programs, 370 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # one sum per element rounded to the dtype (the reference sums in fp32 and rounds once)
    tolerances={"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-5},
    entry_point="index_add",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
