"""scripts/triton_fit_check.py: a Triton kernel's shared memory on sm_90, compiled on a
machine without a GPU, and a launch that would not fit caught before a GPU session."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "benchmarks" / "foreign" / "flaggems_sdpa_masked_fwd" / "spec.py"
SMALL = "batch=2,heads=28,kv_heads=4,seq=256,head_dim=128"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "triton_fit_check.py"), *args],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=600,
    )  # fmt: skip


def _needs_sdpa_source() -> None:
    pytest.importorskip("triton")
    if not (REPO / "third_party" / "flag_gems" / "attention_fwd.py").is_file():
        pytest.skip("third_party/ lacks FlagGems' attention (scripts/fetch_third_party.py)")


def test_a_launch_that_does_not_fit_is_compiled_and_the_fallback_followed() -> None:
    # FlagGems' first tuned configuration needs 393,216 bytes at a 128-wide head (the H100's
    # OutOfResources figure); the launch drops stages until one fits
    _needs_sdpa_source()
    done = _run(str(SPEC), "--config", SMALL, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {r["version"]: r for r in json.loads(done.stdout)["rows"]}
    kernels = rows["triton_v1"]["kernels"]
    assert [(k["num_stages"], k["shared_bytes"]) for k in kernels] == [
        (4, 393_216),
        (3, 294_912),
        (2, 196_608),
    ]
    assert "error" not in rows["triton_v1"] and rows["torch"]["kernels"] == []


def test_a_fixed_configuration_that_does_not_fit_fails_the_check() -> None:
    _needs_sdpa_source()
    done = _run(str(SPEC), "--config", SMALL, "--knob", "num_stages=4")
    assert "FAILS on the GPU: OutOfResources" in done.stdout, done.stderr[-2000:]
    assert done.returncode == 1
    done = _run(str(SPEC), "--config", SMALL, "--knob", "num_stages=2")
    assert done.returncode == 0 and "196,608 bytes" in done.stdout


def test_bad_arguments_are_refused_with_a_message() -> None:
    # a kernel of this repository: no third-party source needed to load its spec
    done = _run("add_rmsnorm", "--config", "rows=two")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "expected name=integer pairs" in done.stderr + done.stdout
    done = _run("add_rmsnorm", "--config", "rows=8,hidden=64", "--knob", "no_such_knob=3")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no version's launch configuration has such a knob" in done.stderr
    done = _run("no/such/spec.py")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = _run("add_rmsnorm", "--config", "rows=8,hidden=64", "--version", "triton_v99")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "the spec has no such version" in done.stderr and "triton_v1" in done.stderr


def test_only_the_versions_named_are_checked() -> None:
    pytest.importorskip("triton")
    done = _run("add_rmsnorm", "--config", "rows=8,hidden=64", "--version", "triton_v1", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)["rows"]
    assert [r["version"] for r in rows] == ["triton_v1"] and rows[0]["kernels"]


def test_debug_assert_branches_are_dropped_and_nothing_else() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from foreign._common import DropDeviceAssertBranches

    source = (
        "def k(a, b):\n"
        "    if (a == 0 and b == 0) and a < 3:\n"
        "        tl.device_assert(False, 'only the last split')\n"
        "    if a:\n"
        "        x = 1\n"
        "    if b:\n"
        "        tl.device_assert(b)\n"
        "    else:\n"
        "        y = 2\n"
    )
    tree = DropDeviceAssertBranches().visit(ast.parse(source))
    out = ast.unparse(tree)
    assert "only the last split" not in out
    assert "if a:" in out and "if b:" in out and "tl.device_assert(b)" in out


def test_this_repository_s_kernels_compile_for_sm90_without_a_gpu() -> None:
    pytest.importorskip("triton")
    done = _run("add_rmsnorm", "--config", "rows=64,hidden=4096", "--json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = {r["version"]: r for r in json.loads(done.stdout)["rows"]}
    v7 = rows["triton_v7"]
    assert "error" not in v7 and v7["kernels"], v7
    # the compiler's figure for the reduction's scratch, under the GPU's limit
    assert all(0 < k["shared_bytes"] <= 232_448 for k in v7["kernels"])
