"""The whole cycle on a CPU: a toy kernel, the fake backend and a scripted designer.

    python -m kbopt.workflow.demo /tmp/kbopt-demo

builds a throw-away project in the folder (a copy of this project's knowledge base, a
`kernels/toy/` with its spec and versions that script the fake backend's figures, a devlog
and a designer plan),
then runs `kbopt cycle toy` on it and prints the Optimization Summary.  The plan makes
one change that is kept, one change that also edits a helper module the versions share
and regresses (the helper restored byte for byte, the new file removed), one new file that
regresses (removed) and one change that breaks correctness (removed).  The tests build the
same project.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from kbopt.catalog_index import write_catalog
from kbopt.store import KNOWLEDGE_DIR, Store, find_project_root

DEVLOG = """\
# toy

## Overview

A toy kernel measured by the fake backend.

## Current Best Results

Nothing yet.

## Performance

Notes a person wrote.

## Devlog
"""


TOY_SPEC = """\
\"\"\"The toy kernel: its versions script the fake backend's figures; nothing runs.\"\"\"

from kbopt.kernel import Dim, KernelSpec, Trial


def _no_real_run(*args, **kwargs):
    raise RuntimeError("the toy kernel has no implementation: measure it with --backend fake")


SPEC = KernelSpec(
    name="toy",
    description="a toy attention-like kernel for the fake backend",
    dims=(
        Dim("b", "sequences in the batch", "batch"),
        Dim("s", "query positions per sequence", "query_len"),
        Dim("t", "KV length", "kv_len"),
    ),
    trials=(
        Trial("decode", {"b": 32, "s": 1, "t": 4096}, "plain decode: one query row per sequence"),
        Trial("spec", {"b": 32, "s": 16, "t": 4096}, "speculative: 16 query rows per KV row"),
    ),
    backoff_dim="b",
    make_inputs=_no_real_run,
    reference=_no_real_run,
    flops=lambda d: 2 * d["b"] * d["s"] * 128 * d["t"] * 1088,
    bytes_moved=lambda d: 2 * d["b"] * d["t"] * 576,
    tolerances={"bfloat16": 2e-2},
    entry_point="toy",
    families=("toy",),
)
"""


def version_source(name: str, decode: float, spec: float, correct: bool = True) -> str:
    """A version file that scripts the fake backend's figures (kbopt.bench.backend)."""
    return (
        f'"""{name}: a fake-measurable toy version."""\n\n'
        f'FAKE_DURATION_US = {{"decode": {decode}, "spec": {spec}}}\n'
        'FAKE_FLOOR_US = {"decode": 50.0, "spec": 800.0}\n'
        f"FAKE_CORRECT = {correct}\n"
        "FAKE_MAX_BACKOFF = 16\n"
        'FAKE_TIMING_METRICS = {"dram_throughput_pct": 12.0, "tensor_core_util_pct": 3.0, '
        '"ctas_per_sm": 0.5}\n'
    )


FASTER_STEP: dict[str, Any] = {
    "optimization": "mla-pack-query-heads-per-cta",
    "new_version": "toy_v2",
    "changes": ["64 query rows per program"],
}
HELPER = '''\
"""Shared by the toy's versions; not a version (its name is not <family>_v<N>)."""

KV_SPLITS = 8
'''
# A step writes a new version, never the one it starts from; it may edit other files of
# the kernel's folder in place (this one's shared helper), restored byte for byte on rollback.
IN_PLACE_REGRESSION: dict[str, Any] = {
    "optimization": "split-kv-decode",
    "new_version": "toy_v3",
    "copy_from": "toy_v2",
    "changes": ["splits 8 -> 64, in the helper module the versions share"],
    "edits": [
        {"path": "kernels/toy/helper.py", "old": "KV_SPLITS = 8", "new": "KV_SPLITS = 64"},
        {"path": "kernels/toy/toy_v3.py", "old": '"decode": 200.0', "new": '"decode": 260.0'},
    ],
}
WRONG_RESULT: dict[str, Any] = {
    "optimization": "split-kv-decode",
    "new_version": "toy_v3",
    "copy_from": "toy_v2",
    "changes": ["drop the rescale of the partial outputs"],
    "edits": [
        {
            "path": "kernels/toy/toy_v3.py",
            "old": "FAKE_CORRECT = True",
            "new": "FAKE_CORRECT = False",
        },
        {"path": "kernels/toy/toy_v3.py", "old": '"decode": 200.0', "new": '"decode": 20.0'},
    ],
}


def slower_copy_step(name: str = "split-kv-decode") -> dict[str, Any]:
    """A parameter change written as a new file that turns out 2x slower."""
    return {
        "optimization": name,
        "new_version": "toy_v3",
        "copy_from": "toy_v2",
        "changes": ["BLOCK_N 32 -> 256"],
        "edits": [
            {
                "path": "kernels/toy/toy_v3.py",
                "old": '{"decode": 200.0, "spec": 1600.0}',
                "new": '{"decode": 400.0, "spec": 3200.0}',
            }
        ],
    }


def default_steps() -> list[dict[str, Any]]:
    return [FASTER_STEP, IN_PLACE_REGRESSION, slower_copy_step(), WRONG_RESULT]


def make_project(root: Path, steps: list[dict[str, Any]], knowledge: Path | None = None) -> Path:
    """Write the toy project under `root`; return the path of its designer plan."""
    source = knowledge or (find_project_root() / KNOWLEDGE_DIR)
    kdir = root / "kernels" / "toy"
    kdir.mkdir(parents=True)
    (root / "kernels" / "__init__.py").write_text("")
    (kdir / "__init__.py").write_text("")
    (kdir / "spec.py").write_text(TOY_SPEC)
    (kdir / "toy_v1.py").write_text(version_source("toy_v1", 400.0, 3200.0))
    (kdir / "toy_v2.py").write_text(version_source("toy_v2", 200.0, 1600.0))
    (kdir / "helper.py").write_text(HELPER)
    (root / "docs" / "kernels").mkdir(parents=True)
    (root / "docs" / "kernels" / "toy.md").write_text(DEVLOG)
    shutil.copytree(source, root / KNOWLEDGE_DIR)
    write_catalog(Store(root))
    plan = root / "plan.json"
    plan.write_text(json.dumps({"language": "triton", "steps": steps}, indent=1))
    return plan


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m kbopt.workflow.demo EMPTY_OR_NEW_FOLDER", file=sys.stderr)
        return 2
    root = Path(args[0]).resolve()
    if root.exists() and any(root.iterdir()):
        print(f"{root} is not empty; give a new folder", file=sys.stderr)
        return 2
    root.mkdir(parents=True, exist_ok=True)
    plan = make_project(root, default_steps())
    from kbopt.cli import main as kbopt

    return kbopt(
        [
            "--root",
            str(root),
            "cycle",
            "toy",
            "--target",
            "pct_of_floor>=90",
            "--from",
            "toy_v1",
            "--designer",
            f"scripted:{plan}",
            "--backend",
            "fake",
            "--run-id",
            "demo",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
