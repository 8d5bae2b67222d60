"""A toy kernel project for the cycle tests: fake-measurable versions, a devlog, a small KB."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kbopt.index import write_catalog
from kbopt.store import Store

REPO = Path(__file__).resolve().parent.parent


def version_source(name: str, decode: float, spec: float, correct: bool = True) -> str:
    return (
        f'"""{name}: a fake-measurable toy version."""\n\n'
        f'FAKE_DURATION_US = {{"decode": {decode}, "spec": {spec}}}\n'
        'FAKE_FLOOR_US = {"decode": 50.0, "spec": 800.0}\n'
        f"FAKE_CORRECT = {correct}\n"
        "FAKE_MAX_BATCH = 16\n"
        'FAKE_TIMING_METRICS = {"dram_throughput_pct": 12.0, "tensor_core_util_pct": 3.0, "ctas_per_sm": 0.5}\n'
    )


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


def make_project(root: Path, steps: list[dict[str, object]]) -> Path:
    """A project with kernels/toy/toy_v1..v2, docs/kernels/toy.md, two KB entries, a plan."""
    kdir = root / "kernels" / "toy"
    kdir.mkdir(parents=True)
    (kdir / "toy_v1.py").write_text(version_source("toy_v1", 400.0, 3200.0))
    (kdir / "toy_v2.py").write_text(version_source("toy_v2", 200.0, 1600.0))
    (kdir / "helper.py").write_text("# not a version: no FAKE_DURATION_US\n")
    (root / "docs" / "kernels").mkdir(parents=True)
    (root / "docs" / "kernels" / "toy.md").write_text(DEVLOG)
    shutil.copytree(REPO / "docs" / "knowledge", root / "docs" / "knowledge")
    write_catalog(Store(root))
    plan = root / "plan.json"
    plan.write_text(json.dumps({"language": "triton", "steps": steps}, indent=1))
    return plan


def slower_copy_step(name: str = "split-kv-decode") -> dict[str, object]:
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


FASTER_STEP: dict[str, object] = {
    "optimization": "mla-pack-query-heads-per-cta",
    "new_version": "toy_v2",
    "changes": ["64 query rows per program"],
}
