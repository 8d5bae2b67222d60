"""Triton's CPU interpreter (`TRITON_INTERPRET=1`), made to run the kernels' CPU tests.

Triton 3.6's interpreter holds scalars as 1-element arrays and converts them with
`int(array)`, which numpy 2.4 rejects ("only 0-dimensional arrays can be converted"), so
`range(start, end)` over a loaded scalar fails.  `fix_scalar_index()` re-registers
`__index__` to read the single element.  Compiled kernels are untouched; calling it twice,
or from several kernels' modules, patches once.  A kernel module calls
`fix_scalar_index_if_interpreting()` at import.
"""

from __future__ import annotations

import os
from typing import Any

_FIXED = "_kbopt_scalar_index_fixed"


def fix_scalar_index() -> None:
    from triton.runtime import interpreter as itp

    original = itp._patch_lang_tensor
    if getattr(original, _FIXED, False):
        return

    def patched(tensor: Any, scope: Any) -> None:
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    setattr(patched, _FIXED, True)
    itp._patch_lang_tensor = patched


def fix_scalar_index_if_interpreting() -> None:
    if os.environ.get("TRITON_INTERPRET") == "1":
        fix_scalar_index()
