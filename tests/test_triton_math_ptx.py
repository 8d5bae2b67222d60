"""scripts/triton_math_ptx.py: how Triton lowers log and exp, compiled for sm_90 on the CPU.

It runs in a process of its own: the kernel tests' conftest sets TRITON_INTERPRET=1 for the
whole test process, and under the interpreter Triton does not compile to PTX."""

from __future__ import annotations

import json
import subprocess

import pytest

pytest.importorskip("triton")

from codegen_script import run_codegen


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_codegen("triton_math_ptx.py", *args, **env)


def test_log_is_a_software_routine_and_exp_one_instruction() -> None:
    out = run("--json")
    assert out.returncode == 0, out.stderr
    rows = {r["variant"]: r for r in json.loads(out.stdout)}
    hw_log = rows["lg2.approx * ln 2 (inline PTX)"]
    assert rows["identity"]["beyond_identity"] == 0
    assert rows["tl.exp"]["approx_instructions"] == ["ex2.approx"]
    assert hw_log["approx_instructions"] == ["lg2.approx"]
    assert rows["tl.log"]["approx_instructions"] == []
    # the libdevice routine costs many instructions more than the hardware one
    assert rows["tl.log"]["beyond_identity"] > 5 * hw_log["beyond_identity"]


def test_under_the_interpreter_it_says_so_instead_of_failing() -> None:
    out = run("--json", TRITON_INTERPRET="1")
    assert out.returncode == 2 and "unset TRITON_INTERPRET" in out.stderr
