"""scripts/kv_move_layouts.py: the KV move's tile layout over warps, compiled for sm_90 on
the CPU, beside its measured correct and wrong results.

It runs in a process of its own: the kernel tests' conftest sets TRITON_INTERPRET=1 for the
whole test process, and under the interpreter Triton does not compile."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("triton")

from codegen_script import SCRIPTS, run_codegen

sys.path.insert(0, str(SCRIPTS.parent / "benchmarks"))
from foreign import _common

pytestmark = pytest.mark.skipif(
    bool(_common.missing_sources("sglang_kv_move")),
    reason="SGLang's KV move is not fetched (python scripts/fetch_third_party.py sglang_kv_move)",
)


def test_warps_split_the_slots_only_beyond_the_tiles_bytes() -> None:
    out = run_codegen("kv_move_layouts.py", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows
    layout = {(r["bytes_per_tile"], r["slots"], r["num_warps"]): r for r in rows}
    # SGLang's own choice for 2 KB rows: 128-byte tiles of 256 slots over 4 warps
    assert layout[(128, 256, 4)]["warps_per_cta"] == [1, 4]
    assert layout[(128, 256, 8)]["warps_per_cta"] == [2, 4]
    for r in rows:
        assert r["slots_split_across_warps"] == (r["num_warps"] * 32 > r["bytes_per_tile"])
        # the committed runs: a wrong result only where warps split the slots
        if r["wrong"]:
            assert r["slots_split_across_warps"], r


def test_the_script_refuses_to_run_under_the_interpreter() -> None:
    out = run_codegen("kv_move_layouts.py", "--json", TRITON_INTERPRET="1")
    assert out.returncode == 2 and "TRITON_INTERPRET" in out.stderr
