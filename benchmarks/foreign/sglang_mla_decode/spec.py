"""SGLang's Triton MLA decode kernel, as kbopt sees it (a kernel nobody here wrote).

The kernel is SGLang's (`python/sglang/srt/layers/attention/triton_ops/decode_attention.py`,
v0.5.9, Apache-2.0), fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang`; it is never committed.  Our wrapper
(`launcher.py`) replicates SGLang's launcher so that stage 1's BLOCK_N, BLOCK_H, split
count, stages and warps are knobs; `triton_v1` is SGLang's own choice of them.

The problem is kernels/mla_decode's (same dims, trial matrix, inputs, fp32 reference and
roofline), so results compare with that kernel's versions: 128 query heads over one
shared 576-wide latent KV head, values its first 512 columns, bf16.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial, Version

_common.require_sources(__file__, "sglang")
_common.ensure_repo_on_path()

from kernels.mla_decode import shapes  # noqa: E402

CONTEXTS = ("attention-decode", "mla", "online-softmax", "multi-kernel")


def _make_inputs(
    dims: Mapping[str, int], *, dtype: Any, device: str, seed: int | None = None
) -> tuple[Any, ...]:
    from kernels.mla_decode import reference

    return reference.make_inputs(
        dims["b"], dims["s"], dims["t"], dtype=dtype, device=device, seed=seed
    )


def _make_check_inputs(
    dims: Mapping[str, int], *, dtype: Any, device: str, seed: int | None = None
) -> tuple[Any, ...]:
    """Ragged lengths (one full, one of a single row) catch masking and split-edge bugs."""
    from kernels.mla_decode import reference

    return reference.make_inputs(
        dims["b"], dims["s"], dims["t"], dtype=dtype, device=device, ragged=True, seed=seed
    )


def _reference(q: Any, kv_cache: Any, cache_seqlens: Any, sm_scale: float) -> Any:
    from kernels.mla_decode import reference

    return reference.reference(q, kv_cache, cache_seqlens, sm_scale)


def _baselines() -> dict[str, Version]:
    """SGLang's own launcher (what triton_v1 must equal) and plain torch."""
    from foreign.sglang_mla_decode import launcher
    from kernels.mla_decode import reference

    return {
        "sglang": Version(
            "sglang",
            "sglang",
            "SGLang's decode_attention_fwd_grouped as SGLang calls it (8 splits, set-up untimed)",
            launcher.sglang_launcher,
            prepare=launcher.prepare_sglang_launcher,
        ),
        "torch": Version(
            "torch",
            "torch",
            "plain torch: baddbmm with mask bias, softmax, bmm (all in q's dtype)",
            reference.torch_batched,
        ),
    }


_launch_info = _common.triton_launch_info("foreign.sglang_mla_decode.launcher")


# The fields of launcher.SglangConfig; every triton_v* module sets CONFIG.
TRITON_KNOBS = (
    Knob("block_n", "int", (16, 32, 64, 128), "kv_tile", "stage 1: KV rows per loop step"),
    Knob(
        "block_h",
        "int",
        (16, 32, 64, 128),
        "heads_per_program",
        "stage 1: query heads per program (128 = every head of a request: each KV tile read once)",
    ),
    Knob(
        "num_kv_splits",
        "int",
        (1, 2, 4, 8, 16, 32, 64),
        "splits",
        "KV splits per request (stage 1's third grid axis; stage 2 merges them)",
    ),
    Knob("num_stages", "int", (1, 2, 3, 4), "pipeline_stages", "stage 1: KV loop pipelining"),
    Knob("num_warps", "int", (2, 4, 8, 16), "warps", "stage 1: warps per program"),
)

SPEC = KernelSpec(
    name="sglang_mla_decode",
    description=(
        "SGLang's Triton MLA decode (grouped stage 1 + split merge, v0.5.9) on DeepSeek-style "
        "latent attention: 128 query heads over one 576-wide latent KV head, bf16"
    ),
    dims=(
        Dim("b", "sequences in the batch", "batch"),
        Dim("s", "query positions per sequence (1: decode; more: speculative)", "query_len"),
        Dim("t", "KV-cache length of every sequence", "kv_len"),
    ),
    trials=(
        Trial("decode", {"b": 32, "s": 1, "t": 4096}, "plain decode: one query row per sequence"),
        Trial(
            "speculative",
            {"b": 32, "s": 16, "t": 4096},
            "speculative decoding: 16 query rows per sequence, which SGLang runs as 16 requests "
            "that each read the sequence's KV",
            aliases=("spec",),
        ),
    ),
    backoff_dim="b",
    make_inputs=_make_inputs,
    make_check_inputs=_make_check_inputs,
    reference=_reference,
    flops=lambda d: shapes.flops(d["b"], d["s"], d["t"]),
    bytes_moved=lambda d: shapes.bytes_moved(d["b"], d["s"], d["t"]),
    # as kernels/mla_decode: bf16 operands, fp32 partials; errors land between 1e-3 and 1e-2
    tolerances={"bfloat16": 2e-2, "float16": 2e-2, "float32": 1e-3},
    entry_point="mla_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("sglang", "torch"),
    fixed_metrics={"num_heads": shapes.N_HEADS, "head_dim": shapes.D_QK},
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
