"""`kbopt kernel new NAME --dims a,b`: a new kernel folder that kbopt can measure at once.

It writes, under the project root:

- `kernels/NAME/__init__.py`, `spec.py` (the dims, one trial point per `--trial`, the
  roofline counts, tolerances, knobs), `reference.py` (inputs, an fp32 torch reference and
  a plain-torch baseline), `triton_v1.py` (a first, naive Triton version with one knob),
  `cycle-plan.json` (a one-step plan for a first `kbopt cycle` with the fake backend);
- `tests/kernels/test_NAME.py` (CPU tests: the spec is valid, triton_v1 matches the
  reference under the Triton interpreter);
- `docs/kernels/NAME.md` (the devlog, with its tool-owned blocks);
- `kernels/__init__.py` when missing, so `kernels.NAME` is importable.

The scaffold's math is an elementwise placeholder (`y = 2x + 1` over a tensor shaped by
the dims): replace it in `reference.py` and `triton_v1.py` with your kernel's, and its
byte and FLOP counts in `spec.py`.  Existing files are never overwritten.
"""

from __future__ import annotations

import json
import keyword
import math
import re
from pathlib import Path

from kbopt.comma_items import comma_items
from kbopt.errors import KbError
from kbopt.kernel import IDENT_RE, KERNELS_DIR, RESERVED_DIMS
from kbopt.vocab import VALUE_MAX

ELEMENTS = 1 << 24  # default trial point: 16 Mi elements (32 MiB of bf16 per tensor)
# What triton_v1.py imports: its entry point `def NAME(x)` must not take one of these names.
SHADOWED = frozenset({"torch", "triton", "tl", "check_inputs"})


def parse_dims(text: str) -> list[str]:
    dims = comma_items(text, f"--dims {text!r}", "names")
    if not dims:
        raise KbError("--dims names no dimension: give e.g. --dims rows,cols")
    for d in dims:
        if not IDENT_RE.match(d):
            raise KbError(f"--dims: {d!r} is not a lower-case identifier (letters, digits, _)")
        if d in RESERVED_DIMS:
            raise KbError(f"--dims: {d!r} is a reserved name; choose another")
    dup = sorted({d for d in dims if dims.count(d) > 1})
    if dup:
        raise KbError(f"--dims: {', '.join(dup)} given twice")
    return dims


def parse_trial(text: str, dims: list[str]) -> tuple[str, dict[str, int]]:
    """`NAME:a=1,b=2` -> (name, dims)."""
    name, sep, body = text.partition(":")
    if not sep or not IDENT_RE.match(name.strip()):
        raise KbError(
            f"--trial {text!r} is not NAME:dim=value,... (e.g. large:rows=8192,cols=4096)"
        )
    values: dict[str, int] = {}
    for part in comma_items(body, f"--trial {text!r}", "dim=value items"):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq:
            raise KbError(f"--trial {text!r}: {part!r} is not dim=value")
        if key not in dims:
            raise KbError(f"--trial {text!r}: unknown dim {key!r} (dims: {', '.join(dims)})")
        if key in values:
            raise KbError(f"--trial {text!r}: {key} is given twice")
        if not re.fullmatch(r"[0-9]+", value):
            raise KbError(f"--trial {text!r}: {key}={value!r} is not a positive integer")
        if len(value.lstrip("0")) > 16 or int(value) > VALUE_MAX:  # int() refuses 4300+ digits
            raise KbError(f"--trial {text!r}: {key} is above {VALUE_MAX:g}")
        if int(value) < 1:
            raise KbError(f"--trial {text!r}: {key}={value!r} is not a positive integer")
        values[key] = int(value)
    missing = [d for d in dims if d not in values]
    if missing:
        raise KbError(f"--trial {text!r} lacks {', '.join(missing)}")
    return name.strip(), {d: values[d] for d in dims}


def default_trial(dims: list[str]) -> dict[str, int]:
    """About ELEMENTS elements in all, a power of two per dim."""
    each = 2 ** round(math.log2(ELEMENTS) / len(dims))
    return dict.fromkeys(dims, each)


def files(name: str, dims: list[str], trials: list[tuple[str, dict[str, int]]]) -> dict[str, str]:
    """Relative path -> content of everything the scaffold writes."""
    if not trials:
        trials = [("default", default_trial(dims))]
    numel = " * ".join(f'd["{d}"]' for d in dims)
    shape = ", ".join(f'dims["{d}"]' for d in dims)
    dim_lines = "\n".join(f'        Dim("{d}", "TODO: what {d} counts"),' for d in dims)
    trial_lines = "\n".join(
        f'        Trial("{t}", {json.dumps(v)}, "TODO: why this point matters to your users"),'
        for t, v in trials
    )
    title = name.replace("_", " ")
    out: dict[str, str] = {}
    out[f"{KERNELS_DIR}/{name}/__init__.py"] = (
        f'"""{title}: a kernel measured and tuned with kbopt."""\n'
    )
    out[
        f"{KERNELS_DIR}/{name}/spec.py"
    ] = f'''"""{title} as kbopt sees it: dims, trial points, reference, roofline, versions.

Edit the Dim docs (and map a dim to a catalog metric with `metric=`, see `kbopt vocab`),
the trial points and their reasons, and the byte / FLOP counts once the math in
reference.py is yours.  torch is imported inside the functions: the spec loads anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kbopt.kernel import Dim, KernelSpec, Knob, Trial

ELEMENT_BYTES = 2  # bfloat16


def _make_inputs(
    dims: Mapping[str, int], *, dtype: Any, device: str, seed: int | None = None
) -> tuple[Any, ...]:
    from {KERNELS_DIR}.{name} import reference

    return reference.make_inputs(dims, dtype=dtype, device=device, seed=seed)


def _reference(*inputs: Any) -> Any:
    from {KERNELS_DIR}.{name} import reference

    return reference.reference(*inputs)


def _baselines() -> dict[str, Any]:
    from kbopt.kernel import Version
    from {KERNELS_DIR}.{name} import reference

    return {{"torch": Version("torch", "torch", "plain torch, in the input dtype", reference.torch_eager)}}


def _bytes_moved(d: Mapping[str, int]) -> int:
    """Fewest DRAM bytes of one call: x read once, y written once."""
    return 2 * {numel} * ELEMENT_BYTES


SPEC = KernelSpec(
    name="{name}",
    description="TODO: what {title} computes (the scaffold's placeholder: y = 2x + 1)",
    dims=(
{dim_lines}
    ),
    trials=(
{trial_lines}
    ),
    backoff_dim="{dims[0]}",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,  # tensor-core FLOPs of one call; 0 when there is no matmul
    bytes_moved=_bytes_moved,
    tolerances={{"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-5}},
    entry_point="{name}",
    # What kind of kernel this is, in the catalog's context tags (`kbopt vocab`): it keeps
    # entries written for other kinds (attention, GEMM...) off this kernel's rankings.
    # The placeholder is element-wise and memory-bound: change them with the math.
    contexts=("elementwise", "memory-bound"),
    families=("triton",),
    knobs={{
        "triton": (
            Knob("block_size", "int", (256, 512, 1024, 2048, 4096), "vector_width", "elements per program"),
            Knob("num_warps", "int", (1, 2, 4, 8, 16), "warps", "warps per program"),
        )
    }},
    baselines=_baselines,
    compare_with=("torch",),
)
'''
    out[
        f"{KERNELS_DIR}/{name}/reference.py"
    ] = f'''"""{title}: inputs, the float32 reference, and the plain-torch baseline.

Every version has the signature `{name}(x) -> y` (replace it with yours everywhere).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch


def check_inputs(x: torch.Tensor) -> None:
    if not x.is_contiguous():
        raise ValueError("x must be contiguous")


def make_inputs(
    dims: Mapping[str, int], *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn({shape}, generator=gen, dtype=torch.float32)
    return (x.to(dtype=dtype, device=device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    """float32 reference; the result in x's dtype."""
    check_inputs(x)
    return (x.float() * 2.0 + 1.0).to(x.dtype)


def torch_eager(x: torch.Tensor) -> torch.Tensor:
    """What a user writes in plain torch, in x's dtype."""
    check_inputs(x)
    return x * 2 + 1
'''
    out[
        f"{KERNELS_DIR}/{name}/triton_v1.py"
    ] = f'''"""triton_v1: the naive Triton version -- one program per BLOCK_SIZE elements of the flat tensor."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from {KERNELS_DIR}.{name}.reference import check_inputs

DESCRIPTION = "naive: one program per block of the flattened tensor"


@dataclass(frozen=True)
class Config:
    block_size: int = 1024
    num_warps: int = 4


CONFIG = Config(block_size=1024, num_warps=4)


@triton.jit
def _kernel(X, Y, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(X + offs, mask=mask).to(tl.float32)
    tl.store(Y + offs, (x * 2.0 + 1.0).to(Y.dtype.element_ty), mask=mask)


def {name}(x: torch.Tensor) -> torch.Tensor:
    check_inputs(x)
    y = torch.empty_like(x)
    n = x.numel()
    cfg = CONFIG  # read at call time: kbopt may set knob values per measurement
    _kernel[(triton.cdiv(n, cfg.block_size),)](x, y, n, BLOCK_SIZE=cfg.block_size, num_warps=cfg.num_warps)
    return y
'''
    plan = {
        "language": "triton",
        "steps": [
            {
                "optimization": "coalesced-vectorized-global-access",
                "new_version": "triton_v2",
                "copy_from": "triton_v1",
                "changes": ["block_size 1024 -> 4096: more bytes in flight per program"],
                "edits": [
                    {
                        "path": "triton_v2.py",  # a file of the kernel's folder
                        "old": "CONFIG = Config(block_size=1024, num_warps=4)",
                        "new": "CONFIG = Config(block_size=4096, num_warps=8)",
                    }
                ],
            }
        ],
    }
    out[f"{KERNELS_DIR}/{name}/cycle-plan.json"] = json.dumps(plan, indent=1) + "\n"
    small = ", ".join(
        f'"{d}": {v}' for d, v in zip(dims, [5, 37, 3, 3, 3, 3][: len(dims)], strict=False)
    )
    out[
        f"tests/kernels/test_{name}.py"
    ] = f'''"""{title}: the spec is valid and triton_v1 matches the reference (CPU, Triton interpreter)."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported: run on the CPU

from pathlib import Path

import pytest
import torch

from kbopt.kernel import check_spec, load_spec

ROOT = Path(__file__).resolve().parents[2]


def test_spec_is_valid() -> None:
    spec = load_spec("{name}", ROOT)
    assert check_spec(spec, spec.spec_file) == []
    assert "triton_v1" in spec.version_files()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_triton_v1_matches_the_reference(dtype: torch.dtype) -> None:
    spec = load_spec("{name}", ROOT)
    dims = {{{small}}}
    inputs = spec.make_inputs(dims, dtype=dtype, device="cpu", seed=0)
    out = spec.load_version("triton_v1").fn(*inputs)
    expect = spec.reference(*inputs)
    err = float((out.double() - expect.double()).norm() / expect.double().norm())
    assert err <= spec.tolerance(str(dtype).removeprefix("torch."))
'''
    out[f"docs/kernels/{name}.md"] = _devlog(name, title)
    return out


def _devlog(name: str, title: str) -> str:
    from kbopt.devlog import skeleton

    text = skeleton(name)
    return text.replace(
        f"What {name} computes, its shapes and layout, and the reference it is checked against.",
        f"What {title} computes, its shapes and layout, and the reference it is checked against "
        f"(`kernels/{name}/reference.py`).",
    )


def scaffold(
    root: Path, name: str, dims: list[str], trials: list[tuple[str, dict[str, int]]]
) -> dict[str, list[str]]:
    """Write the scaffold under `root`; returns {"created": [...], "kept": [...]}.

    Everything is checked before the first file is written: a scaffold that `kbopt kernel
    check` would then reject is never left behind."""
    if not IDENT_RE.match(name):
        raise KbError(f"kernel name {name!r} must be lower-case letters, digits and _")
    if keyword.iskeyword(name):
        # the name is the entry point's `def NAME` and the package `kernels.NAME`
        raise KbError(f"kernel name {name!r} is a Python keyword; choose another")
    if name in SHADOWED:
        raise KbError(
            f"kernel name {name!r} would hide the {name} that triton_v1.py uses; choose another"
        )
    trial_names = [t for t, _ in trials]
    dup = [t for t in trial_names if trial_names.count(t) > 1]
    if dup:
        raise KbError(f"--trial: the trial name {dup[0]!r} is given twice")
    folder = root / KERNELS_DIR / name
    if (folder / "spec.py").exists():
        raise KbError(f"{folder.relative_to(root)}/spec.py already exists: the kernel is there")
    created, kept = [], []
    package = root / KERNELS_DIR / "__init__.py"
    todo = files(name, dims, trials)
    if not package.exists():
        todo = {
            f"{KERNELS_DIR}/__init__.py": '"""Kernels measured and tuned with kbopt."""\n',
            **todo,
        }
    for rel, text in todo.items():
        path = root / rel
        if path.exists():
            kept.append(rel)
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise KbError(f"cannot write {rel}: {exc.strerror}") from None
        created.append(rel)
    return {"created": created, "kept": kept}
