"""Step5's sliding-window GQA decode with a headwise sigmoid gate (vLLM v0.34.0,
Apache-2.0), as kbopt sees it: kernels nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py vllm_step5_swa_decode vllm_step5_decode_gate`
and never committed.

Why this one: Step5's sliding-window layers (head dim 192, a headwise sigmoid gate on the
attention output) decode on NVIDIA through this Triton path instead of FlashAttention-2,
whose wrapper rejects split KV (and FA4 has no head dim 192 on SM100).  One program takes
all query heads of a KV head (the GQA group, packed with the MTP verify tokens of a request
when the batch is large) for one split of the window: the window's keys gathered BLOCK_N at
a time through the paged block table, Q.K^T and P.V as tl.dots over the head dim split 128 +
64, the causal window mask, an online softmax; then either the gated store or fp32 partials
merged by a second launch that applies the gate.  Both trials are decode steps of one
layer with Step5's config defaults (40 query heads over 8 KV groups; the released
checkpoint's head counts and window are not in the wheel, so the window is an assumed 512
tokens) on 16-token pages: 128 requests verifying one MTP draft token each (2 tokens a
request, packed: 1024 programs, no split on an H100), and 4 requests in plain decode (32
programs, the window split in 4 and merged).  Outputs: [tokens, heads, 192] in the dtype.
The floor is each request's window of K and V read once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_step5_swa_decode", "vllm_step5_decode_gate")

CONTEXTS = ("attention-decode", "online-softmax", "memory-bound", "multi-kernel")
_SIZES = _common.ELEMENT_SIZE
HEAD = 192
BLOCK = 16


def _lengths(d: Mapping[str, int]) -> list[int]:
    """reference.py's `seq_lengths`."""
    ctx, q_len = d["ctx"], d["q_len"]
    return [max(q_len, ctx - (r * 7919) % max(1, ctx // 2)) for r in range(d["reqs"])]


def visible_keys(d: Mapping[str, int]) -> int:
    """(token, key) pairs one query head attends over: min(position + 1, window) each."""
    q_len, window = d["q_len"], d["window"]
    return sum(min(length - q_len + t + 1, window) for length in _lengths(d) for t in range(q_len))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each request's window + q_len - 1 keys' K and V rows read once per KV head (the
    re-reads by unpacked tokens and splits not counted), q and the gate read and the output
    written once, the table entries and lengths read; the fp32 split buffers not counted
    (their size follows the device's plan)."""
    e = _SIZES[dtype]
    q_len, window = d["q_len"], d["window"]
    tokens = d["reqs"] * q_len
    keys = sum(min(length, window + q_len - 1) for length in _lengths(d))
    kv = keys * d["kv_heads"] * 2 * HEAD * e
    qgo = tokens * d["heads"] * (2 * HEAD + 1) * e
    return kv + qgo + 4 * (keys // BLOCK + 2 * d["reqs"])


def flops(d: Mapping[str, int]) -> int:
    """Q.K^T and P.V over the visible keys, 2 FLOPs a multiply-add (the padded MMA rows of
    a group under 16 and the masked keys not counted)."""
    return 4 * HEAD * d["heads"] * visible_keys(d)


_make_inputs = _common.forward_make_inputs(
    "vllm_step5_swa_decode", "reqs", "q_len", "ctx", "window", "heads", "kv_heads"
)
_reference = _common.forward_reference("vllm_step5_swa_decode")
_baselines = _common.forward_baselines(
    "vllm_step5_swa_decode",
    (
        "torch",
        "torch",
        "the same by torch ops: each request's window gathered through its table, two "
        "einsums in the dtype around an fp32 softmax, then the unfused sigmoid gate",
        "torch_swa_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_step5_swa_decode.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 16, 32, 64, 128), "kv_tile",
         "keys per loop step (the tl.dots' N and K); None: vLLM's 64"),
    Knob("splits", "int", (None, 1, 2, 4, 8), "splits",
         "window splits (the split launch's second grid axis; over 1 a combine launch merges "
         "them); None: swa_decode_plan's, from the device's SM count"),
    Knob("pack", "int", (None, 1, 2), "rows_per_program",
         "tokens of a request per program (must divide q_len; the rows are pack x group "
         "heads); None: swa_decode_plan's (q_len for large MTP batches, else 1)"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "split launch: warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "split launch: pipelining of the key loop; None: Triton's default 3"),
    Knob("merge_warps", "int", (None, 1, 2, 4, 8), "warps",
         "combine launch (only when split): warps per program; None: vLLM's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_step5_swa_decode",
    description=(
        "Step5's sliding-window GQA decode (vLLM v0.34.0, _swa_decode_split, _store_gated, "
        "_swa_decode_combine): per (tokens, KV head, window split), the GQA group's rows "
        "against the window's paged keys 64 at a time, Q.K^T and P.V as tl.dots over head "
        "dim 128 + 64 under an online softmax; a sigmoid head gate on the store or a second "
        "launch merging the splits"
    ),
    dims=(
        Dim("reqs", "requests in the decode step", "batch"),
        Dim("q_len", "query tokens per request (1 decode, 2 with one MTP draft)", "query_len"),
        Dim("ctx", "the longest request's context (the others down to half of it)", "kv_len"),
        Dim("window", "sliding-window keys each token sees"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kv_heads", "KV heads (at most 16 query heads each)"),
    ),
    trials=(
        Trial(
            "mtp_verify_step5_128x32k",
            {"reqs": 128, "q_len": 2, "ctx": 32768, "window": 512, "heads": 40, "kv_heads": 8},
            "a Step5 sliding-window layer (40 query heads over 8 KV groups, head dim 192, an "
            "assumed 512-token window) verifying one MTP draft for 128 requests of 16K to 32K "
            "tokens: 256 tokens packed in pairs, 1024 programs of 10 rows, 4 GFLOP, 411 MB "
            "moved (bf16)",
        ),
        Trial(
            "decode_step5_4x4k",
            {"reqs": 4, "q_len": 1, "ctx": 4096, "window": 512, "heads": 40, "kv_heads": 8},
            "the same layer in plain decode for 4 requests of 2K to 4K tokens: 32 (token, KV "
            "head) programs, the window split in 4 on an H100 and merged by the combine "
            "launch, 12.7 MB moved (bf16)",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # products in the dtype (P rounded to it before P.V), fp32 softmax and accumulators, the
    # attention and the gate rounded to the dtype, against fp64; fp32 dots run as TF32 on GPUs
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="swa_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
