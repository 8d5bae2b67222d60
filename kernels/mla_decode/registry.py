"""Version name -> callable, all with the signature of :mod:`kernels.mla_decode.reference`.

``fn(q [b,s,h,576], kv_cache [b,t,576], cache_seqlens [b] int32, sm_scale) -> out [b,s,h,512]``

Triton versions live in ``triton_v*.py`` and CuTe DSL versions in ``cute_v*.py``; each such
module exports ``VERSION`` (its registry name, e.g. ``"triton_v1"``), ``DESCRIPTION`` (one line:
the one optimization it adds) and ``mla_decode(q, kv_cache, cache_seqlens, sm_scale)``.
Modules that fail to import (no GPU toolchain, missing package) are recorded in
:func:`import_errors` instead of breaking the registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

import torch

from kernels.mla_decode import reference

Fn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor]

_PREFIXES = ("triton_v", "cute_v", "cutile_v")


@dataclass(frozen=True)
class Version:
    name: str
    family: str  # "torch", "triton", "cute", "cutile": the module name's prefix before "_v"
    description: str
    fn: Fn


_ERRORS: dict[str, str] = {}


def _baselines() -> dict[str, Version]:
    return {
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


def _module_names() -> list[str]:
    import kernels.mla_decode as pkg

    names = [m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith(_PREFIXES)]

    def key(n: str) -> tuple[str, int, str]:
        fam, _, rest = n.partition("_v")
        digits = "".join(ch for ch in rest if ch.isdigit())
        return (fam, int(digits) if digits else 0, rest)

    return sorted(names, key=key)


def versions(include_baselines: bool = True) -> dict[str, Version]:
    """All importable versions, in ladder order (triton_v1.., cute_v1..)."""
    out = _baselines() if include_baselines else {}
    for mod_name in _module_names():
        try:
            mod = importlib.import_module(f"kernels.mla_decode.{mod_name}")
        except Exception as exc:  # import failures must not hide the other versions
            _ERRORS[mod_name] = f"{type(exc).__name__}: {exc}"
            continue
        name = getattr(mod, "VERSION", mod_name)
        fam = mod_name.partition("_v")[0]  # triton_v3 -> triton, cutile_v1 -> cutile
        out[name] = Version(name, fam, getattr(mod, "DESCRIPTION", ""), mod.mla_decode)
    return out


def import_errors() -> dict[str, str]:
    """Modules that failed to import during the last :func:`versions` call."""
    return dict(_ERRORS)


def get(name: str) -> Version:
    vs = versions()
    if name not in vs:
        raise KeyError(f"unknown MLA decode version {name!r}; known: {', '.join(vs)}")
    return vs[name]
