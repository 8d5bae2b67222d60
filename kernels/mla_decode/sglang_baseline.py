"""SGLang's Triton decode kernel as a side-by-side baseline (never committed here).

The kernel file is a git-ignored local copy at ``kernels/mla_decode/third_party/
decode_attention.py`` (SGLang's ``python/sglang/srt/layers/attention/triton_ops/
decode_attention.py``, grouped/MLA path, with ``sglang.srt.utils.is_hip`` shimmed to False).
When it is absent, :func:`available` says why and the benchmark skips this baseline.

Adapter to our contract: SGLang's MLA decode takes one query position per request, a flat
token pool ``k_buffer [tokens, 1, 576]`` with ``v_buffer = k_buffer[..., :512]``, and
``kv_indptr``/``kv_indices`` page tables (page size 1). Speculative positions are passed as
``b*s`` requests that share their sequence's token indices — SGLang's decode kernel has no
multi-position mode, so it reads the KV once per position. We use SGLang's default
``max_kv_splits = 8`` with every request at 8 splits.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from kernels.mla_decode import triton_common as _triton_common  # noqa: F401  (interpreter fix)
from kernels.mla_decode.reference import D_QK, D_V, check_inputs

THIRD_PARTY = Path(__file__).resolve().parent / "third_party" / "decode_attention.py"
MAX_KV_SPLITS = 8


def available() -> tuple[bool, str]:
    if not THIRD_PARTY.is_file():
        return False, f"SGLang kernel copy not found at {THIRD_PARTY} (git-ignored; see module doc)"
    return True, ""


def _module():  # type: ignore[no-untyped-def]
    name = "_mla_sglang_decode_attention"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, THIRD_PARTY)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {THIRD_PARTY}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def prepare(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> Callable[[], torch.Tensor]:
    """Build SGLang's metadata once (as its backend does per batch); return the launch."""
    ok, why = available()
    if not ok:
        raise FileNotFoundError(why)
    check_inputs(q, kv_cache, cache_seqlens)
    mod = _module()
    b, s, h, _ = q.shape
    t = kv_cache.shape[1]
    dev = q.device
    lens = cache_seqlens.to(device=dev, dtype=torch.int64)
    req_lens = lens.repeat_interleave(s)  # request r = (sequence r // s, position r % s)
    kv_indptr = torch.zeros(b * s + 1, dtype=torch.int32, device=dev)
    kv_indptr[1:] = torch.cumsum(req_lens, 0).to(torch.int32)
    seq_of_req = torch.arange(b, device=dev).repeat_interleave(s)
    idx = [
        torch.arange(int(n), device=dev, dtype=torch.int64) + int(i) * t
        for i, n in zip(seq_of_req.tolist(), req_lens.tolist(), strict=True)
    ]
    kv_indices = torch.cat(idx).to(torch.int32)
    k_buffer = kv_cache.view(b * t, 1, D_QK)
    v_buffer = k_buffer[..., :D_V]
    q_flat = q.reshape(b * s, h, D_QK)
    o = torch.empty(b * s, h, D_V, dtype=q.dtype, device=dev)
    attn_logits = torch.empty(b * s, h, MAX_KV_SPLITS, D_V, dtype=torch.float32, device=dev)
    attn_lse = torch.empty(b * s, h, MAX_KV_SPLITS, dtype=torch.float32, device=dev)
    num_kv_splits = torch.full((b * s,), MAX_KV_SPLITS, dtype=torch.int32, device=dev)

    def launch() -> torch.Tensor:
        mod.decode_attention_fwd_grouped(
            q_flat,
            k_buffer,
            v_buffer,
            o,
            kv_indptr,
            kv_indices,
            attn_logits,
            attn_lse,
            num_kv_splits,
            MAX_KV_SPLITS,
            float(sm_scale),
            # by name: SGLang 0.5.9's twelfth parameter is logit_cap (0 = no soft cap), where
            # older releases had k_scale; a positional 1.0 capped every logit at 1 there
            logit_cap=0.0,
        )
        return o.view(b, s, h, D_V)

    return launch


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    """Contract signature (metadata built on every call; the benchmark times ``prepare``'s
    launch only)."""
    return prepare(q, kv_cache, cache_seqlens, sm_scale)()
