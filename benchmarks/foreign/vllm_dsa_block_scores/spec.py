"""vLLM's sparse-attention candidate block scores (vLLM v0.34.0, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_dsa_block_scores` and never committed.

Why this one as the set's segmented block maximum: DeepSeek V4.1's two-level sparse
attention first picks, per query row, the top candidate blocks of compressed positions and
only then the top tokens inside them; vLLM's indexer scores every block with this kernel
(`select_candidate_blocks`) right after the lightning indexer's logits.  On Hopper there is
no DeepSelect, so every block of the static, CUDA-graph-sized width is scored: the grid is
(rows, 32), each row's 32 programs stride over tiles of 128 blocks, load [128, block] fp32
logits masked at the row's visible end, reduce each block to its maximum (NaN
propagating), pin the newest visible block to +inf and store 128 scores; program 0 stores
the row's valid block count.  A ragged 1-D max pooling with a grid-stride loop: the read is
the visible part of each row, the write every block of the width.  Both trials are decode
steps with one MTP draft per request (two rows share a visible length) over 64-position
blocks of compressed positions (V4.1's candidate block size and compression ratio are not
public: 64 and 4 are taken): 64 requests at a 128K context (32,768 compressed positions,
512 blocks) and 128 requests at 512K (131,072 positions, 2048 blocks).  Outputs: the
scores (fp32 whatever the dtype) and the valid counts.  The floor is reading each row's
visible logits once and writing the scores once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_dsa_block_scores")

CONTEXTS = ("reduction", "memory-bound")


def visible_columns(d: Mapping[str, int]) -> int:
    """Visible logits of the step, as reference.py's `visible_lengths` makes them."""
    total = 0
    for r in range(d["reqs"]):
        seen = 0 if r % 9 == 8 else d["width"] * ((r * 7919) % 97 + 1) // 97
        total += min(seen, d["width"]) * d["next_n"]
    return total


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each row's visible fp32 logits read once (the masked loads skip the rest), the ends,
    every block's fp32 score and each row's int32 count written (fp32 whatever the dtype)."""
    del dtype
    rows = d["reqs"] * d["next_n"]
    nblocks = -(-d["width"] // d["block"])
    return 4 * visible_columns(d) + 4 * d["reqs"] + 4 * rows * nblocks + 4 * rows


def flops(d: Mapping[str, int]) -> int:
    """One comparison per visible logit."""
    return visible_columns(d)


_make_inputs = _common.forward_make_inputs(
    "vllm_dsa_block_scores", "reqs", "next_n", "width", "block"
)
_reference = _common.forward_reference("vllm_dsa_block_scores")
_baselines = _common.forward_baselines(
    "vllm_dsa_block_scores",
    (
        "torch",
        "torch",
        "the same by torch ops: the rows padded to whole blocks and masked past their ends, "
        "amax per block, the newest block scattered to +inf",
        "torch_block_scores",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_dsa_block_scores.launcher")


TRITON_KNOBS = (
    Knob("tile", "int", (None, 8, 16, 32, 64, 128, 256), "tile_n",
         "blocks per tile (a tile loads tile x block logits); None: vLLM's 128"),
    Knob("programs", "int", (None, 1, 2, 4, 8, 16, 32, 64), "splits",
         "programs per row, striding over its tiles; None: vLLM's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the tile loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_dsa_block_scores",
    description=(
        "vLLM's sparse-attention candidate block scores (v0.34.0, _block_scores_kernel): "
        "32 programs per indexer row stride over 128-block tiles, each block's maximum of "
        "the visible fp32 logits, the newest block pinned to +inf"
    ),
    dims=(
        Dim("reqs", "decode requests of the step", "batch"),
        Dim("next_n", "rows per request: 1 + the MTP draft tokens (they share an end)"),
        Dim("width", "compressed positions per row (static, CUDA-graph sized)", "row_len"),
        Dim("block", "compressed positions per candidate block (candidate_block_size)"),
    ),
    trials=(
        Trial(
            "decode_64_mtp1_128k_deepseek_v41",
            {"reqs": 64, "next_n": 2, "width": 32768, "block": 64},
            "a DeepSeek V4.1 decode step of 64 requests with one MTP draft at a 128K "
            "context (32,768 compressed positions at ratio 4, 64-position blocks: both "
            "assumed): 128 rows x 32 programs, 512 blocks per row, 7.8 MB moved",
        ),
        Trial(
            "decode_128_mtp1_512k_deepseek_v41",
            {"reqs": 128, "next_n": 2, "width": 131072, "block": 64},
            "a decode step of 128 requests with one MTP draft at a 512K context (131,072 "
            "compressed positions, 2048 blocks per row): 256 rows x 32 programs, 62 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # maxima of the same fp32 values with +-inf in the same places: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="block_scores",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
