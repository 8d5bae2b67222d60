"""scripts/triton_sass_per_element.py: what divisions, index decoding and a Welford update
cost in SASS, compiled for sm_90 on the CPU.

It runs in a process of its own: the kernel tests' conftest sets TRITON_INTERPRET=1 for the
whole test process, and under the interpreter Triton does not compile."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("triton")

from codegen_script import SCRIPTS, run_codegen


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_codegen("triton_sass_per_element.py", *args, **env)


def test_divisions_and_welford_cost_instructions_per_element() -> None:
    out = run("--json")
    assert out.returncode == 0, out.stderr
    rows = {r["variant"]: r for r in json.loads(out.stdout)}
    plain, ieee = rows["fp32 x / y (Triton's /)"], rows["fp32 div_rn (IEEE)"]
    # Triton's `/` is the approximate division; the IEEE one must be asked for
    assert plain["ptx_division"] == ["div.full.f32"]
    assert ieee["ptx_division"] == ["div.rn.f32"]
    assert 0 < plain["extra_per_element"] < ieee["extra_per_element"]
    # a division and a modulo by a run-time integer against a shift and a mask
    assert rows["index // width, % width"]["extra_per_element"] >= 8
    # the loop kernels are compared by one iteration of their loops
    sums, welford = rows["row sum + sum of squares"], rows["row Welford update"]
    assert sums["loop_instructions"] and welford["loop_instructions"]
    assert welford["extra_per_element"] >= 8
    assert rows["fp32 multiply"]["loop_instructions"] is None


def test_loop_body_is_from_the_label_to_the_branch_back() -> None:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import triton_sass_per_element as m
    finally:
        sys.path.remove(str(SCRIPTS))
    sass = "\n".join(
        [
            "        /*0000*/                   MOV R1, RZ ;",
            ".L_x_1:",
            "        /*0010*/                   FADD R2, R2, R3 ;",
            "        /*0020*/                   IADD3 R4, R4, 0x1, RZ ;",
            "        /*0030*/              @!P0 BRA `(.L_x_1) ;",
            "        /*0040*/                   EXIT ;",
            ".L_x_2:",
            "        /*0050*/                   BRA `(.L_x_2);",
            "        /*0060*/                   NOP;",
            "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath:",
            "        /*0070*/                   FFMA R5, R5, R6, R7 ;",
        ]
    )
    assert m.loop_instructions(sass) == 3
    # the slow-path subroutine, the NOP and the branch-to-self are not counted
    assert m.sass_instructions(sass) == [
        "MOV R1, RZ",
        "FADD R2, R2, R3",
        "IADD3 R4, R4, 0x1, RZ",
        "@!P0 BRA `(.L_x_1)",
        "EXIT",
    ]


def test_under_the_interpreter_it_says_so_instead_of_failing() -> None:
    out = run("--json", TRITON_INTERPRET="1")
    assert out.returncode == 2 and "unset TRITON_INTERPRET" in out.stderr
