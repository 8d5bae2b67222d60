"""MLA decode attention, as kbopt sees it: dims, trial matrix, reference, roofline, versions.

`kbopt profile mla_decode triton_v7 --config decode`, `kbopt bench mla_decode` and
`kbopt cycle mla_decode` read this spec; nothing in kbopt knows MLA otherwise.  torch is
imported inside the functions below, so the spec loads on a machine without it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from kbopt.kernel import Dim, KernelSpec, Knob, Trial, Version
from kernels.mla_decode import shapes


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
    """Plain torch (two variants) and, when present, SGLang's Triton kernel (a local copy)
    and FlashMLA's dense sm90 decode (built on the GPU machine)."""
    from kernels.mla_decode import flashmla_baseline, reference, sglang_baseline

    out = {
        "torch": Version(
            "torch",
            "torch",
            "plain torch: baddbmm with mask bias, softmax, bmm (all in q's dtype)",
            reference.torch_batched,
        ),
        "torch_fp32_softmax": Version(
            "torch_fp32_softmax",
            "torch",
            "plain torch with an fp32 masked score matrix (first results' baseline)",
            reference.torch_fp32_softmax,
        ),
    }
    ok, why = sglang_baseline.available()
    if ok:
        out["sglang"] = Version(
            "sglang",
            "sglang",
            "SGLang's Triton MLA decode kernel (metadata built once per batch, untimed)",
            sglang_baseline.mla_decode,
            prepare=sglang_baseline.prepare,
        )
    else:
        print(f"[mla_decode] SGLang baseline skipped: {why}", file=sys.stderr)
    ok, why = flashmla_baseline.available()
    if ok:
        out["flashmla"] = Version(
            "flashmla",
            "flashmla",
            "FlashMLA's dense sm90 decode (deepseek-ai/FlashMLA 9241ae3): the cache viewed as "
            "64-row pages, scheduling metadata computed once per input set, untimed",
            flashmla_baseline.mla_decode,
            prepare=flashmla_baseline.prepare,
        )
    else:
        print(f"[mla_decode] FlashMLA baseline skipped: {why}", file=sys.stderr)
    return out


def _launch_info(family: str) -> dict[str, Any]:
    """Where a family's launches record their shape (registers, split count)."""
    if family == "cute":
        from kernels.mla_decode import cute_common

        return cute_common.LAST_INFO
    if family == "triton":
        from kernels.mla_decode import triton_tiled

        return triton_tiled.LAST_INFO
    return {}


# The tiled Triton kernel's TiledConfig fields (kernels/mla_decode/triton_tiled.py).
TRITON_KNOBS = (
    Knob(
        "block_m",
        "int",
        (16, 32, 64, 128),
        "heads_per_program",
        "query rows per program: (position, head) rows with the head fastest, so at s=1 the "
        "heads that share each KV tile read",
    ),
    Knob("block_n", "int", (16, 32, 64, 128), "kv_tile", "KV rows per loop step"),
    Knob("num_warps", "int", (4, 8, 16), "warps", "warps per program"),
    Knob("num_stages", "int", (1, 2, 3, 4), "pipeline_stages", "software pipeline depth"),
    Knob(
        "splits",
        "int",
        (None, 1, 2, 4, 8, 16, 32, 64),
        "splits",
        "KV splits per sequence (None: one wave's worth, from the SM count and the batch)",
    ),
    Knob("use_tma", "bool", (False, True), "tma", "tensor descriptors (Hopper TMA) for Q/KV"),
    Knob("warp_specialize", "bool", (False, True), "warp_specialization", ""),
    Knob("pipe_qk", "bool", (False, True), "mma_pipelining", "next tile's scores before P@V"),
)

SPEC = KernelSpec(
    name="mla_decode",
    description=(
        "DeepSeek-style multi-head latent attention decode: 128 query heads over one shared "
        "576-wide latent KV head (values are its first 512 columns), bf16"
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
            "speculative decoding: 16 query rows share each KV row",
            aliases=("spec",),
        ),
    ),
    backoff_dim="b",
    make_inputs=_make_inputs,
    make_check_inputs=_make_check_inputs,
    reference=_reference,
    flops=lambda d: shapes.flops(d["b"], d["s"], d["t"]),
    bytes_moved=lambda d: shapes.bytes_moved(d["b"], d["s"], d["t"]),
    # bf16 operands and a bf16 P matrix: errors land between 1e-3 and 1e-2
    tolerances={"bfloat16": 2e-2, "float16": 2e-2, "float32": 1e-3},
    entry_point="mla_decode",
    families=("triton", "cute", "cutile"),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch", "sglang", "flashmla"),
    fixed_metrics={"num_heads": shapes.N_HEADS, "head_dim": shapes.D_QK},
    contexts=("attention", "attention-decode", "mla", "online-softmax", "small-grid"),
    launch_info=_launch_info,
)
