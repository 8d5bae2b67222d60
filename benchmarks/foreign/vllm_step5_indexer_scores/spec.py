"""Step5's paged fp8 indexer scores (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_step5_indexer_scores` and never committed.

Why this one as the set's sparse-indexer logits: Step5's sparse attention first scores every
closed 8-token region of the context for each query token (a DeepSeek-style lightning
indexer over compressed region summaries: sum over the indexer heads of a weight times
relu(q . key), times the region key's fp8 scale), then keeps the top 512 regions for the
attention.  On Hopper vLLM scores them with this Triton kernel instead of FlashInfer's
`fp8_paged_mqa_logits`: one program per token row and 32 regions gathers the regions' fp8
keys from 32-region packed pages through the request's table, one [32, 256] x [256, 16]
fp8 tl.dot (the 4 real heads of an index-TP-4 rank padded to the MMA's 16), relu, the
weighted head sum in four FMA chains, the scale, -inf past the row's closed regions.  In
prefill, consecutive token pairs share a table and length (`prefill_pair_inputs`, next_n 2
on their 4 real heads) once the context passes the top-k (512 regions).  Both trials are a
prefill chunk at the end of a request's context on one rank (Step5's sparse config: 16
indexer heads over index TP 4, proxy dim 256, 8-token regions): a 512-token chunk ending a
16K context (2048 regions) and an 8192-token chunk ending a 128K context (16,384 regions).
Outputs: the [rows, regions] fp32 scores.  The floor is writing the scores once (the keys
are re-read from L2 by every row; counted once).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_step5_indexer_scores")

CONTEXTS = ("gemm", "memory-bound")


def visible_scores(d: Mapping[str, int]) -> int:
    """(row, region) pairs scored (the rest stored as -inf), as reference.py's
    `pair_lengths` makes the lengths."""
    start = d["regions"] * 8 - d["tokens"]
    per_req = sum(2 * min((start + t + 2) // 8, d["regions"]) for t in range(0, d["tokens"], 2))
    return d["reqs"] * per_req


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each request's region keys and scales read once (260 bytes a region), the fp8 queries,
    fp32 head weights, tables and lengths read once, the fp32 scores written once (the same
    whatever the dtype)."""
    del dtype
    rows = d["reqs"] * d["tokens"]
    pages = -(-d["regions"] // 128) * 4
    reads = d["reqs"] * d["regions"] * 260 + rows * d["heads"] * (256 + 4)
    reads += (rows // 2) * (pages + 1) * 4
    return reads + rows * d["regions"] * 4


def flops(d: Mapping[str, int]) -> int:
    """The useful fp8 products, 2 x 256 per head and visible (row, region) (the heads padded
    to 16 in the MMA, relu, weights and scales not counted)."""
    return 2 * 256 * d["heads"] * visible_scores(d)


_make_inputs = _common.forward_make_inputs(
    "vllm_step5_indexer_scores", "reqs", "tokens", "regions", "heads"
)
_reference = _common.forward_reference("vllm_step5_indexer_scores")
_baselines = _common.forward_baselines(
    "vllm_step5_indexer_scores",
    (
        "torch",
        "torch",
        "the same by torch ops: the regions gathered through the tables into fp32 keys, one "
        "batched matmul against the pair's heads, relu, weights, scales, -inf past lengths",
        "torch_indexer_scores",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_step5_indexer_scores.launcher")


TRITON_KNOBS = (
    Knob("tile", "int", (None, 16, 32, 64, 128), "tile_m",
         "regions per program (the tl.dot's M; at least 16); None: vLLM's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_step5_indexer_scores",
    description=(
        "Step5's paged fp8 indexer scores on Hopper (vLLM v0.34.0, _paged_scores_sm90): one "
        "program per token row and 32 regions gathers fp8 region keys through a page table, "
        "a [32, 256] x [256, 16] fp8 tl.dot, relu, a weighted head sum and the key scales"
    ),
    dims=(
        Dim("reqs", "prefill requests of the chunk", "batch"),
        Dim("tokens", "query tokens of each request's chunk (scored in pairs)", "query_len"),
        Dim("regions", "closed 8-token regions of the context (the static width)", "kv_len"),
        Dim("heads", "indexer heads on this rank (16 over index TP 4)", "num_heads"),
    ),
    trials=(
        Trial(
            "prefill_512_of_16k_step5",
            {"reqs": 1, "tokens": 512, "regions": 2048, "heads": 4},
            "Step5 on one index-TP-4 rank (4 of 16 indexer heads, proxy dim 256): a "
            "512-token prefill chunk ending a 16K context (2048 regions), scored in token "
            "pairs: 512 rows x 64 programs, 4.2 MB of scores",
        ),
        Trial(
            "prefill_8192_of_128k_step5",
            {"reqs": 1, "tokens": 8192, "regions": 16384, "heads": 4},
            "an 8192-token prefill chunk (vLLM's chunked-prefill budget) ending a 128K "
            "context (16,384 regions): 8192 rows x 512 programs, 537 MB of scores",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # exact e4m3 products summed in fp32 (fp64 reference), the same whatever the dtype
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="indexer_scores",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    matmul_dtype="float8_e4m3fn",
)
