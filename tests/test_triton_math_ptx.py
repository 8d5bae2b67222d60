"""scripts/triton_math_ptx.py: how Triton lowers log and exp, compiled for sm_90 on the CPU."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("triton")

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "triton_math_ptx.py"


def test_log_is_a_software_routine_and_exp_one_instruction() -> None:
    spec = importlib.util.spec_from_file_location("triton_math_ptx", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = {r["variant"]: r for r in mod.measure()}
    assert rows["identity"]["beyond_identity"] == 0
    assert rows["tl.exp"]["approx_instructions"] == ["ex2.approx"]
    assert rows["lg2.approx * ln 2 (inline PTX)"]["approx_instructions"] == ["lg2.approx"]
    assert rows["tl.log"]["approx_instructions"] == []
    # the libdevice routine costs many instructions more than the hardware one
    assert (
        rows["tl.log"]["beyond_identity"]
        > 5 * rows["lg2.approx * ln 2 (inline PTX)"]["beyond_identity"]
    )
