"""Version name -> callable, all with the signature of :mod:`kernels.mla_decode.reference`.

``fn(q [b,s,h,576], kv_cache [b,t,576], cache_seqlens [b] int32, sm_scale) -> out [b,s,h,512]``

The versions are those of the kernel's spec (:mod:`kernels.mla_decode.spec`): Triton
versions in ``triton_v*.py``, CuTe DSL versions in ``cute_v*.py``, cuTile in ``cutile_v*.py``;
each module exports ``DESCRIPTION`` (one line: the one optimization it adds) and
``mla_decode(q, kv_cache, cache_seqlens, sm_scale)``.  Modules that fail to import (no GPU
toolchain, missing package) are recorded in :func:`import_errors` instead of breaking the
registry.
"""

from __future__ import annotations

from pathlib import Path

from kbopt.kernel import KernelSpec, Version, load_spec

__all__ = ["Version", "get", "import_errors", "spec", "versions"]

_ERRORS: dict[str, str] = {}


def spec() -> KernelSpec:
    return load_spec(str(Path(__file__).resolve().parent / "spec.py"))


def versions(include_baselines: bool = True) -> dict[str, Version]:
    """All importable versions, in ladder order (baselines, triton_v1.., cute_v1..)."""
    out, errors = spec().load_versions(include_baselines)
    _ERRORS.clear()
    _ERRORS.update(errors)
    return out


def import_errors() -> dict[str, str]:
    """Modules that failed to import during the last :func:`versions` call."""
    return dict(_ERRORS)


def get(name: str) -> Version:
    vs = versions()
    if name not in vs:
        raise KeyError(f"unknown MLA decode version {name!r}; known: {', '.join(vs)}")
    return vs[name]
