"""SGLang's Double Sparsity approximate attention (SGLang v0.5.9, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_ds_label_scores` and never committed.

Why this one as the set's token-selection scoring: with `--enable-double-sparsity` SGLang
decodes long contexts sparsely (from `ds_sparse_decode_threshold`, 4096 tokens, on): this
kernel scores every context token of every query head from 32 heavy channels of the query
and of the key (the label cache SGLang fills when it stores the key), torch.topk keeps the
256 best per head, and only those are attended to.  One program per request, query head and
32 positions gathers the positions' token slots through the request's req_to_token row,
then their 64-byte label rows from a shuffled pool, and stores 32 fp16 scores: a gathered,
very skinny batched GEMV whose reads are scattered 64-byte rows, each re-read by the four
query heads of its KV group.  Memory- and latency-bound.  Both trials are Llama 3.1 8B (32
query heads, 8 KV heads) with SGLang's defaults (32 heavy channels, bf16 labels): one
request at the sparse threshold (4096 tokens: 4096 programs) and a step of 32 requests of
24,792 to 32,768 tokens (1,048,576 programs, 472 MB of labels, 67 MB of scores).  The
floor is reading every context token's label row, slot and the queries once and writing
the scores once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ds_label_scores")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "reduction", "memory-bound")


def seq_lens(d: Mapping[str, int]) -> list[int]:
    """As reference.seq_lens_of: the first request `ctx` long, request b shorter by
    (b * 997) % (ctx // 4)."""
    return [d["ctx"] - (b * 997) % max(d["ctx"] // 4, 1) for b in range(d["batch"])]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each context token's label row and int32 slot read once, the query labels and the
    lengths once, the fp16 scores [heads, batch, ctx] written once."""
    tokens = sum(seq_lens(d))
    es = ELEMENT_SIZE[dtype]
    reads = tokens * (d["kv_heads"] * d["channels"] * es + 4)
    reads += d["batch"] * (d["heads"] * d["channels"] * es + 8)
    return reads + d["heads"] * d["batch"] * d["ctx"] * 2


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per channel, query head and context token."""
    return 2 * d["heads"] * d["channels"] * sum(seq_lens(d))


_make_inputs = _common.forward_make_inputs(
    "sglang_ds_label_scores", "batch", "ctx", "heads", "kv_heads", "channels"
)
_reference = _common.forward_reference("sglang_ds_label_scores")
_baselines = _common.forward_baselines(
    "sglang_ds_label_scores",
    ("torch", "torch", "the same scores by a gather and a batched einsum", "torch_label_scores"),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ds_label_scores.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "context positions per program (must divide the longest context); None: SGLang's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 4 for MHA, 2 with grouped KV heads"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ds_label_scores",
    description=(
        "SGLang's Double Sparsity approximate attention (v0.5.9, "
        "_sparse_fwd_kernel_flash_decode_stage1): one program per request, query head and 32 "
        "context positions gathers the positions' heavy-channel key labels through the "
        "request's token table and stores fp16 q . k * scale, -inf past the request"
    ),
    dims=(
        Dim("batch", "requests in the decode step"),
        Dim("ctx", "the longest request's context tokens (the others 3/4 of it to all)"),
        Dim("heads", "query heads"),
        Dim("kv_heads", "KV heads (each label row read by heads / kv_heads query heads)"),
        Dim("channels", "heavy channels per label (ds_heavy_channel_num)"),
    ),
    trials=(
        Trial(
            "ds_decode_llama31_8b_1x4k",
            {"batch": 1, "ctx": 4096, "heads": 32, "kv_heads": 8, "channels": 32},
            "Llama 3.1 8B with --enable-double-sparsity, one request at SGLang's sparse-decode "
            "threshold (4096 tokens), SGLang's 32 heavy channels: 4096 programs, 2.4 MB moved "
            "(bf16 labels)",
        ),
        Trial(
            "ds_decode_llama31_8b_32x32k",
            {"batch": 32, "ctx": 32768, "heads": 32, "kv_heads": 8, "channels": 32},
            "the same with 32 requests of 24,792 to 32,768 tokens (922,704 in all): "
            "1,048,576 programs, 543 MB moved (bf16 labels)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp16 products of fp16-cast labels summed over 32 channels, stored in fp16, against fp32
    tolerances={"bfloat16": 1e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="ds_label_scores",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
