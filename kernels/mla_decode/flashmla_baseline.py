"""FlashMLA's dense sm90 decode (deepseek-ai/FlashMLA) as a side-by-side baseline.

Nothing of FlashMLA is committed here.  ``scripts/fetch_third_party.py flashmla`` packs its
sources (and the CUTLASS headers it pins) into the git-ignored ``third_party/flashmla-src.tgz``;
``scripts/build_flashmla.sh`` builds the extension on the GPU machine and prints the folder
where ``flash_mla`` imports, which the benchmark passes as ``KBOPT_FLASHMLA_PATH`` (or on
``PYTHONPATH``).  Without it, :func:`available` says why and the spec leaves the baseline out.

Adapter to our contract (``kernels/mla_decode/reference.py``):

- FlashMLA reads a paged cache ``k_cache [num_blocks, 64, 1, 576]`` through ``block_table
  [b, blocks per sequence]``.  Our contiguous ``kv_cache [b, t, 576]`` is the same memory seen
  as ``b*t/64`` pages of 64 rows, sequence ``i`` owning pages ``i*t/64 ..`` in order, so the
  block table is ``arange(b*t/64).view(b, t/64)`` and nothing is copied (:func:`paged_view`).
  ``t`` must be a multiple of 64.
- Values are the first 512 columns of the same rows (``head_dim_v=512``), as in our contract.
- Speculative positions: ``causal=False``, so every position sees all ``cache_seqlens[i]`` rows,
  our contract's semantics.
- Scheduling metadata: ``get_mla_metadata()`` returns an empty object that the first
  ``flash_mla_with_kvcache`` call fills (a small kernel over ``cache_seqlens``); FlashMLA's users
  reuse it for every call with the same shapes and lengths.  :func:`prepare` makes that first
  call, once per input set and outside the timed region (the harness times only the launch it
  returns), as our versions' and SGLang's set-up are kept out.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from kernels.mla_decode.reference import D_QK, D_V, check_inputs

PAGE_ROWS = 64  # FlashMLA's dense decode takes pages of exactly 64 rows
PATH_ENV = "KBOPT_FLASHMLA_PATH"
BUILD_HINT = (
    "python scripts/fetch_third_party.py flashmla, then on the GPU machine "
    f"{PATH_ENV}=$(scripts/build_flashmla.sh)"
)


def _add_build_path() -> None:
    """Put the folder named by KBOPT_FLASHMLA_PATH (the built tree) first on sys.path."""
    path = os.environ.get(PATH_ENV, "").strip()
    if path and path not in sys.path:
        sys.path.insert(0, path)


def available() -> tuple[bool, str]:
    """(True, "") when ``flash_mla`` imports with its CUDA extension; else (False, why)."""
    _add_build_path()
    try:
        found = importlib.util.find_spec("flash_mla") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        where = os.environ.get(PATH_ENV, "").strip()
        told = f" ({PATH_ENV}={where})" if where else f" ({PATH_ENV} unset)"
        return False, f"flash_mla is not importable{told}; build it with: {BUILD_HINT}"
    try:
        importlib.import_module("flash_mla")
    except Exception as exc:  # a broken build must not take the other baselines down
        return False, f"flash_mla does not import: {type(exc).__name__}: {exc}"
    return True, ""


def _module() -> ModuleType:
    ok, why = available()
    if not ok:
        raise ImportError(why)
    return importlib.import_module("flash_mla")


def paged_view(kv_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(k_cache [b*t/64, 64, 1, 576], block_table [b, t/64] int32)``: the same memory as
    the contiguous ``kv_cache [b, t, 576]``, paged the way FlashMLA reads it (no copy)."""
    if kv_cache.dim() != 3 or kv_cache.shape[-1] != D_QK:
        raise ValueError(f"kv_cache must be [b, t, {D_QK}], got {tuple(kv_cache.shape)}")
    b, t, d = kv_cache.shape
    if t % PAGE_ROWS:
        raise ValueError(
            f"FlashMLA pages the cache in {PAGE_ROWS}-row blocks: t={t} is not a multiple of "
            f"{PAGE_ROWS}"
        )
    if not kv_cache.is_contiguous():
        raise ValueError("kv_cache must be contiguous to be viewed as pages without a copy")
    pages = t // PAGE_ROWS
    k_cache = kv_cache.view(b * pages, PAGE_ROWS, 1, d)
    block_table = torch.arange(b * pages, dtype=torch.int32, device=kv_cache.device).view(b, pages)
    return k_cache, block_table


def prepare(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> Callable[[], torch.Tensor]:
    """Page the cache, compute FlashMLA's scheduling metadata (its first call), return the
    launch to time: one ``flash_mla_with_kvcache`` call reusing that metadata."""
    check_inputs(q, kv_cache, cache_seqlens)
    fm = _module()
    k_cache, block_table = paged_view(kv_cache)
    lens = cache_seqlens.to(dtype=torch.int32).contiguous()
    meta: Any = fm.get_mla_metadata()[0]
    scale = float(sm_scale)

    def launch() -> torch.Tensor:
        out, _lse = fm.flash_mla_with_kvcache(
            q, k_cache, block_table, lens, D_V, meta, None, softmax_scale=scale, causal=False
        )
        return out

    launch()  # fills `meta` (the scheduling metadata), once per input set, untimed
    return launch


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    """Contract signature (metadata computed on every call; the benchmark times ``prepare``'s
    launch only)."""
    return prepare(q, kv_cache, cache_seqlens, sm_scale)()
