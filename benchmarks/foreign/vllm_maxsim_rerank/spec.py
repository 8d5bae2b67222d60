"""vLLM's flash-MaxSim rerank (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_maxsim_rerank` and never committed.

Why this one as the set's fused similarity reduction: late-interaction rerankers (ColBERT,
Jina-ColBERT-v2) score a document by MaxSim, the sum over the query's token embeddings of
each one's best dot product with any of the document's token embeddings, and vLLM's pooling
runner scores a whole rerank request in one launch straight from the packed token
embeddings the model produced, without padding the documents or materializing the
[docs, query, document tokens] similarities.  One program per document: 16 x 16 fp16
tl.dot tiles of query by document tokens into fp32, a running row maximum over the
document (every program walks the batch's longest bucket, masking past its own length),
then the maxima summed.  Both trials are Jina-ColBERT-v2 (128-dim token embeddings, 32
query tokens): a rerank request of 100 passages of 151 to 300 tokens (100 programs, under
one per SM, 5.7 MB read) and a 2048-document rerank of 257 to 512 tokens each (2048
programs, 201 MB read).  The useful work is 64 FLOP per document token and dimension pair
of 32 queries, against 256 bytes per document token: memory-bound at the floor, which is
reading the document embeddings once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_maxsim_rerank")

CONTEXTS = ("reduction", "memory-bound")
FP16 = 2  # the kernel reads fp16 embeddings whatever the spec's dtype


def doc_lengths(docs: int, doc_len: int) -> list[int]:
    """Each document's token count, from doc_len / 2 + 1 to doc_len (the first the
    longest), spread by a stride of 37."""
    half = max(1, doc_len // 2)
    return [doc_len - (i * 37) % half for i in range(docs)]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The document embeddings and the query read once (fp16), each document's offset and
    length read and its fp32 score written."""
    del dtype
    tokens = sum(doc_lengths(d["docs"], d["doc_len"]))
    return (tokens + d["query_len"]) * d["dim"] * FP16 + 12 * d["docs"]


def flops(d: Mapping[str, int]) -> int:
    """The useful similarities, 2 x query tokens x dim per document token (the padded
    query and document buckets, the maxima and the sum not counted)."""
    tokens = sum(doc_lengths(d["docs"], d["doc_len"]))
    return 2 * d["query_len"] * d["dim"] * tokens


_make_inputs = _common.forward_make_inputs(
    "vllm_maxsim_rerank", "docs", "doc_len", "query_len", "dim"
)
_reference = _common.forward_reference("vllm_maxsim_rerank")
_baselines = _common.forward_baselines(
    "vllm_maxsim_rerank",
    (
        "torch",
        "torch",
        "the same by torch ops: the documents gathered into a padded block, one batched "
        "fp16 matmul against the query, padded tokens at -inf, max and sum",
        "torch_maxsim",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_maxsim_rerank.launcher")


TRITON_KNOBS = (
    Knob("block_q", "int", (None, 16, 32, 64, 128), "tile_m",
         "query tokens per tl.dot tile (at most twice the query length, as vLLM prunes); "
         "None: 16, the first configuration vLLM's pruning keeps"),
    Knob("block_d", "int", (None, 16, 32, 64, 128), "tile_n",
         "document tokens per loop step; None: 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: 2"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loop over the document; None: 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_maxsim_rerank",
    description=(
        "vLLM's flash-MaxSim rerank (v0.34.0, _maxsim_rerank_kernel): one program per "
        "document computes query x document similarities in fp16 tl.dot tiles, keeps each "
        "query token's maximum over the document and sums them into an fp32 score"
    ),
    dims=(
        Dim("docs", "documents scored against the query", "batch"),
        Dim("doc_len", "tokens of the longest document (the others down to half)"),
        Dim("query_len", "query tokens", "query_len"),
        Dim("dim", "token embedding size", "head_dim"),
    ),
    trials=(
        Trial(
            "rerank_100_jina_colbert_v2",
            {"docs": 100, "doc_len": 300, "query_len": 32, "dim": 128},
            "one rerank request of Jina-ColBERT-v2 (128-dim embeddings, 32 query tokens) "
            "over 100 passages of 151 to 300 tokens: 100 programs, 5.7 MB read",
        ),
        Trial(
            "rerank_2048_jina_colbert_v2",
            {"docs": 2048, "doc_len": 512, "query_len": 32, "dim": 128},
            "a 2048-document rerank of 257 to 512 tokens each: 2048 programs, 201 MB read",
        ),
    ),
    backoff_dim="docs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp16 products summed in fp32 against fp64, the same whatever the spec's dtype
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="maxsim",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
