"""Transformer Engine's fused grouped bias gradient (TE v2.20.2, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py te_grouped_dbias_dscales` and never committed.

Why this one: TE's fused grouped MLP (its `GroupedLinear` op with `scale_bias`, the routed
experts of a MoE trained with TE on Hopper) folds each token's routing probability into the
FC2 bias, out = x W_g^T + s_i b_g, as GPT-OSS's experts (which have biases) weigh their
outputs; the backward then needs every expert's bias gradient, summed down the expert's
rows with the probabilities, and each token's probability gradient, its output gradient's
dot with its expert's bias.  This kernel does both in one pass over dy: one program per
expert, split of its row tiles and 128-column block walks its share of the expert's
contiguous (jagged) rows, column sums kept in registers and added atomically once, row sums
added atomically per tile.  Its nearest spec is `torchao_jagged_fp8_colwise` (a column-wise
amax per expert, then a cast); it differs in reducing both ways at once (down the columns
for dbias, across the row for dscales), in splitting an expert's rows across programs whose
partials meet through fp32 atomics, and in a loop whose trip count is the expert's share of
tiles (uneven with routing; a short expert's later splits walk only masked steps).  Both
trials are training steps of GPT-OSS models (hidden 2880, top-4 routing, expert biases):
GPT-OSS-120B's 128 experts (the larger) and GPT-OSS-20B's 32.  Outputs: dbias [groups, hidden] and dscales
[rows], both fp32.  No matmul: the floor is reading dy, the scales and the biases once and
writing both outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "te_grouped_dbias_dscales")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")  # column and row sums; two zero fills


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """dy and the biases read once in the spec's dtype, the fp32 scales and the int64 group
    offsets read once, the fp32 dbias [groups, hidden] and dscales [rows] written once.  The
    two zero fills, the atomic adds' read-modify-writes (N_ROW_SPLITS per dbias element,
    cdiv(hidden, BLOCK_H) per dscales element) and every split's re-read of its expert's
    bias row are not counted."""
    rows, groups, hidden = d["rows"], d["groups"], d["hidden"]
    es = ELEMENT_SIZE[dtype]
    return es * (rows + groups) * hidden + 8 * rows + 8 * (groups + 1) + 4 * groups * hidden


def flops(d: Mapping[str, int]) -> int:
    """Two multiply-adds per dy element: dy s into dbias and dy b into dscales."""
    return 4 * d["rows"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("te_grouped_dbias_dscales", "rows", "groups", "hidden")
_reference = _common.forward_reference("te_grouped_dbias_dscales")
_baselines = _common.forward_baselines(
    "te_grouped_dbias_dscales",
    (
        "torch",
        "torch",
        "the same gradients in torch's kernels (the scaled rows summed per expert by an "
        "index_add, each row's expert bias gathered and the row products summed), in fp32",
        "torch_grouped_dbias",
    ),
)


_launch_info = _common.triton_launch_info("foreign.te_grouped_dbias_dscales.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_k",
         "rows of the expert (the dbias reduction axis) loaded per step of the row loop; "
         "None: TE's 128"),
    Knob("block_h", "int", (None, 32, 64, 128, 256, 512), "tile_n",
         "columns of dy per program (the dscales reduction axis is split into "
         "cdiv(hidden, block_h) atomic partials); None: TE's 128"),
    Knob("n_row_splits", "int", (None, 1, 2, 4, 8, 16), "splits",
         "programs sharing an expert's row tiles (each adds its column sums into dbias "
         "atomically); None: TE's 4"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: TE's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the row loop; None: TE's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="te_grouped_dbias_dscales",
    description=(
        "Transformer Engine's fused grouped bias gradient (v2.20.2, "
        "compute_grouped_dbias_dscales, the FC2 backward of its grouped MLP with "
        "probability-scaled expert biases): one program per expert, row split and column "
        "block walks the expert's rows, dbias = column sums of dy s added atomically once, "
        "dscales = row sums of dy b added atomically per tile; TE's fixed launch"
    ),
    dims=(
        Dim("rows", "routed token rows of all experts (tokens x top-k)", "rows"),
        Dim("groups", "experts (token groups), each a contiguous run of rows"),
        Dim(
            "hidden",
            "the FC2 output width (dscales' dot length, split across the grid's column "
            "blocks into atomic partials)",
        ),
    ),
    # A GPT-OSS-120B step first (128 experts of about 256 rows: two 128-row tiles each, so
    # two of an expert's four splits walk one masked step; 11,776 programs, 191 MB), then a
    # GPT-OSS-20B one (32 experts of about 512 rows, one tile a split; 2,944 programs, 95 MB).
    trials=(
        Trial(
            "gpt_oss_120b_8k_fc2_dbias",
            {"rows": 32768, "groups": 128, "hidden": 2880},
            "GPT-OSS-120B (128 experts with biases, top-4 routing) trained with TE's fused "
            "grouped MLP, one 8192-token micro-batch a GPU, all experts local: the FC2 "
            "backward's bias and probability gradients over the 32,768 routed rows' dy "
            "[rows, 2880]: TE's 128 x 128 tiles, 4 row splits, 128 x 4 x 23 = 11,776 "
            "programs, 191 MB moved (bf16)",
        ),
        Trial(
            "gpt_oss_20b_4k_fc2_dbias",
            {"rows": 16384, "groups": 32, "hidden": 2880},
            "GPT-OSS-20B (32 experts with biases, top-4) trained the same way, one "
            "4096-token sequence a GPU: the FC2 backward over 16,384 routed rows: 32 x 4 x "
            "23 = 2,944 programs of about one 128-row tile each, 95 MB moved",
        ),
    ),
    backoff_dim="rows",
    # each program's loop reduces a column segment of its expert's rows (dbias, the sum kept
    # in registers): the mean of those (rows / groups) is the length a row-wise kernel's
    # row_len states; the launch records the split of it (num_splits)
    shape_metrics=lambda d: {"row_len": -(-d["rows"] // d["groups"])},
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of the same products, only their order differs (tiles, splits, atomics)
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="grouped_dbias_dscales",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    dtype="bfloat16",
)
