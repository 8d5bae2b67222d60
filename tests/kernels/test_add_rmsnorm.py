"""add_rmsnorm: the spec, the reference, the baselines and every Triton version.

On the CPU (CI) the Triton versions run under TRITON_INTERPRET=1 (set by conftest.py) in
float32 and float16 at small odd shapes (hidden not a power of two, rows not a multiple of
rows_per_program, persistent loops that stride); one test compiles the versions for sm_90
in a subprocess (no GPU needed).  bf16 is not checked in the interpreter: it converts
fp32 to bf16 by truncation, not round-to-nearest as the GPU does.  Tests marked ``gpu``
check bf16 on the GPU at the trial points and odd shapes, with a NaN-poisoned allocator
pool (every output element written), and that the inputs are left untouched.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from kbopt.kernel import check_spec, clear_cache, load_spec, read_knob_values
from kernels.add_rmsnorm import baselines
from kernels.add_rmsnorm import reference as ref
from kernels.add_rmsnorm import triton_common as tc

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "kernels" / "add_rmsnorm"
VERSIONS = sorted(
    (p.stem for p in FOLDER.glob("triton_v*.py")), key=lambda s: int(s.split("_v")[1])
)
CPU = not torch.cuda.is_available()
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}

# (rows, hidden, dtype): hidden not a power of two, and below / above one 256-wide chunk of
# triton_v1; rows odd, so never a multiple of rows_per_program=2.
CPU_CASES = [
    (5, 96, torch.float32),
    (3, 1000, torch.float16),
    (9, 128, torch.float16),
]


def _version(name: str) -> ModuleType:
    return importlib.import_module(f"kernels.add_rmsnorm.{name}")


@pytest.fixture(scope="module")
def spec():
    clear_cache()
    return load_spec("add_rmsnorm", REPO)


# ---------------------------------------------------------------------- the spec


def test_spec_loads_and_has_no_problem(spec) -> None:
    assert check_spec(spec, spec.spec_file) == []
    assert spec.dim_names == ("rows", "hidden")
    assert spec.dim_metrics({"rows": 8192, "hidden": 4096}) == {"rows": 8192.0, "row_len": 4096.0}
    assert [t.name for t in spec.trials] == ["large", "xlarge", "decode"]
    assert spec.trial("xlarge").dims == {"rows": 32768, "hidden": 8192}
    assert spec.backoff_dim == "rows" and spec.entry_point == "add_rmsnorm"
    assert spec.compare_with == ("torch", "torch_compile", "liger")
    assert list(spec.version_files()) == VERSIONS and len(VERSIONS) >= 5


def test_spec_module_imports_neither_torch_nor_triton_at_top_level() -> None:
    tree = ast.parse((FOLDER / "spec.py").read_text(encoding="utf-8"))
    top = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module.split(".")[0])
    assert not top & {"torch", "triton", "liger_kernel"}, top


def test_roofline_counts(spec) -> None:
    dims = {"rows": 8192, "hidden": 4096}
    assert spec.flops(dims) == 0
    assert spec.bytes_moved(dims) == 2 * (4 * 8192 * 4096 + 4096)
    assert spec.bytes_moved({"rows": 32, "hidden": 4096}) == 2 * (4 * 32 * 4096 + 4096)
    from kernels.add_rmsnorm.spec import bytes_moved

    assert bytes_moved(dims, "float32") == 4 * (4 * 8192 * 4096 + 4096)
    floor = spec.floor_us(dims, copy_bw_gbps=4000.0, matmul_tflops=700.0)
    assert floor == pytest.approx(spec.bytes_moved(dims) / 4000e9 * 1e6)


def test_every_version_declares_its_knobs_in_config(spec) -> None:
    """kbopt reads the knobs from source and overrides them on CONFIG at run time."""
    names = [k.name for k in spec.knobs["triton"]]
    fields = {f.name for f in dataclasses.fields(tc.AddRmsNormConfig)}
    assert set(names) == fields
    for name in VERSIONS:
        mod = _version(name)
        assert isinstance(mod.CONFIG, tc.AddRmsNormConfig)
        assert isinstance(mod.DESCRIPTION, str) and mod.DESCRIPTION and "\n" not in mod.DESCRIPTION
        assert (mod.__doc__ or "").startswith(f"{name} — "), name
        read = read_knob_values(spec.version_path(name), names)
        assert read == {k: getattr(mod.CONFIG, k) for k in read}
    # each step of the ladder changes its CONFIG (v1 -> v2 changes the kernel)
    configs = [_version(n).CONFIG for n in VERSIONS]
    assert all(a != b for a, b in itertools.pairwise(configs))


def test_spec_loads_every_version_and_the_baselines(spec) -> None:
    versions, errors = spec.load_versions()
    assert errors == {}
    assert set(VERSIONS) <= set(versions)
    assert "torch" in versions
    assert ("liger" in versions) == baselines.liger_available()[0]
    assert ("torch_compile" in versions) == baselines.torch_compile_available()[0]
    assert spec.launch_info("triton") is tc.LAST_INFO
    assert spec.launch_info("torch") == {}


# ---------------------------------------------------------------------- reference


def test_reference_matches_a_float64_loop() -> None:
    x, r, w, eps = ref.make_inputs(3, 7, dtype=torch.float32, seed=0)
    y, s = ref.reference(x, r, w, eps)
    for i in range(3):
        row = x[i].double() + r[i].double()
        rstd = 1.0 / torch.sqrt((row * row).mean() + eps)
        assert torch.allclose(s[i].double(), row, atol=1e-6)
        assert torch.allclose(y[i].double(), row * rstd * w.double(), atol=1e-5)


def test_make_inputs_is_seeded_and_weight_matters() -> None:
    a = ref.make_inputs(4, 64, dtype=torch.float32, seed=3)
    b = ref.make_inputs(4, 64, dtype=torch.float32, seed=3)
    c = ref.make_inputs(4, 64, dtype=torch.float32, seed=4)
    assert all(torch.equal(p, q) for p, q in zip(a[:3], b[:3], strict=True))
    assert not torch.equal(a[0], c[0])
    w = a[2]
    assert 0.02 < float(w.std()) < 0.3 and abs(float(w.mean()) - 1.0) < 0.1
    assert a[3] == ref.DEFAULT_EPS


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_torch_baseline_matches_reference(dtype: torch.dtype) -> None:
    inputs = ref.make_inputs(6, 300, dtype=dtype, seed=1)
    out = ref.torch_add_rmsnorm(*inputs)
    assert all(o.dtype == dtype and o.shape == (6, 300) for o in out)
    err = ref.rel_error(out, ref.reference(*inputs))
    assert err < (1e-6 if dtype == torch.float32 else TOL[dtype]), err


def test_a_wrong_result_fails_the_tolerance() -> None:
    """Guard against a tautological comparison: forgetting the weight must be caught."""
    x, r, w, eps = ref.make_inputs(4, 256, dtype=torch.bfloat16, seed=2)
    unweighted = ref.reference(x, r, torch.ones_like(w), eps)
    assert ref.rel_error(unweighted, ref.reference(x, r, w, eps)) > 5 * TOL[torch.bfloat16]


def _bad_calls() -> list[tuple[str, tuple, str]]:
    x, r, w, eps = ref.make_inputs(4, 64, dtype=torch.float32, seed=0)
    return [
        ("x-1d", (x[0], r[0], w, eps), "x must be 2-D"),
        ("residual-shape", (x, r[:3], w, eps), "residual must have x's shape"),
        ("weight-shape", (x, r, w[:10], eps), "weight must be 1-D"),
        ("weight-2d", (x, r, w[None, :], eps), "weight must be 1-D"),
        ("non-contiguous", (x.t().contiguous().t(), r, w, eps), "x must be contiguous"),
        ("strided-rows", (x[:, ::2], r[:, ::2], w[::2], eps), "must be contiguous"),
        ("dtype-mismatch", (x, r.half(), w, eps), "share one dtype"),
        ("int-dtype", (x.int(), r.int(), w.int(), eps), "dtype must be"),
        ("eps", (x, r, w, 0.0), "eps must be a positive number"),
        ("not-a-tensor", (x, r.tolist(), w, eps), "residual must be a torch.Tensor"),
        ("empty", (x[:0], r[:0], w, eps), "must not be empty"),
    ]


@pytest.mark.parametrize("fn_name", ["reference", *VERSIONS])
def test_bad_inputs_raise_a_clear_value_error(fn_name: str) -> None:
    fn = ref.reference if fn_name == "reference" else _version(fn_name).add_rmsnorm
    for label, args, message in _bad_calls():
        with pytest.raises(ValueError, match=message):
            fn(*args)
            pytest.fail(f"{label}: no ValueError")


# ---------------------------------------------------------------------- launch planning


def test_launch_planning_helpers() -> None:
    # 16-byte vectors: 8 bf16 / 4 fp32 elements; warps capped to 1..32
    assert tc.auto_num_warps(4096, 2, 4) == 4
    assert tc.auto_num_warps(8192, 2, 4) == 8
    assert tc.auto_num_warps(4096, 4, 4) == 8
    assert tc.auto_num_warps(64, 2, 4) == 1 and tc.auto_num_warps(1 << 20, 2, 1) == 32
    # rows per program never drops the grid below one program per SM
    assert tc.effective_rows_per_program(8192, 2, 132) == 2
    assert tc.effective_rows_per_program(32, 4, 132) == 1
    assert tc.effective_rows_per_program(300, 4, 132) == 2
    # H100/H200 occupancy: registers (per-warp granularity 256), threads, shared memory
    assert tc.resident_programs(64, 4) == 8
    assert tc.resident_programs(70, 8) == 3
    assert tc.resident_programs(32, 32) == 2
    assert tc.resident_programs(122, 4, 32784) == 4
    assert tc.resident_programs(121, 8, 65568) == 2
    assert tc.resident_programs(255, 32, 200_000) == 1
    # the cp.async ring shrinks (then disappears) when it would not fit
    assert tc.pipeline_stages(3, 4096 * 2) == 3
    assert tc.pipeline_stages(3, 2 * 16384 * 2) == 2
    assert tc.pipeline_stages(4, 65536 * 2) == 1


def test_plan_rejects_what_the_one_pass_kernel_cannot_do() -> None:
    cfg = tc.AddRmsNormConfig()
    with pytest.raises(ValueError, match="whole row"):
        tc._plan(4, 1000, 2, 132, dataclasses.replace(cfg, block=256))
    with pytest.raises(ValueError, match="power of two"):
        tc._plan(4, 1000, 2, 132, dataclasses.replace(cfg, rows_per_program=3))
    with pytest.raises(ValueError, match="exceeds"):
        tc._plan(4, tc.MAX_FUSED + 1, 2, 132, cfg)
    plan = tc._plan(32768, 8192, 2, 132, dataclasses.replace(cfg, persistent=True, num_stages=3))
    assert plan.kwargs["NUM_STAGES"] == 3 and plan.kwargs["EVEN"] and plan.grid_size is None
    plan = tc._plan(9, 1000, 2, 2, dataclasses.replace(cfg, rows_per_program=2))
    assert plan.rows_per_program == 2 and not plan.kwargs["EVEN"] and plan.grid_size == 5


# ---------------------------------------------------------------------- Triton, interpreted


def _check_version(fn, rows: int, hidden: int, dtype: torch.dtype, seed: int = 0) -> float:
    inputs = ref.make_inputs(rows, hidden, dtype=dtype, seed=seed)
    before = [t.clone() for t in inputs[:3]]
    y, s = fn(*inputs)
    assert y.shape == s.shape == (rows, hidden) and y.dtype == s.dtype == dtype
    assert y.is_contiguous() and s.is_contiguous()
    for t in inputs[:3]:
        assert y.data_ptr() != t.data_ptr() and s.data_ptr() != t.data_ptr()
    assert all(torch.equal(a, b) for a, b in zip(before, inputs[:3], strict=True)), "inputs changed"
    err = ref.rel_error((y, s), ref.reference(*inputs))
    assert err < TOL[dtype], err
    return err


@pytest.mark.skipif(not CPU, reason="CPU interpreter test")
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CPU_CASES, ids=lambda c: f"r{c[0]}h{c[1]}-{str(c[2])[6:]}")
def test_triton_version_matches_reference_interpreted(version: str, case: tuple) -> None:
    rows, hidden, dtype = case
    _check_version(_version(version).add_rmsnorm, rows, hidden, dtype)


@pytest.mark.skipif(not CPU, reason="CPU interpreter test")
@pytest.mark.parametrize(
    "changes",
    [
        {"rows_per_program": 4},
        {"rows_per_program": 4, "persistent": True, "programs_per_sm": 1},
        {"rows_per_program": 2, "persistent": True, "programs_per_sm": 1, "num_stages": 2},
        {"persistent": True, "programs_per_sm": 1, "evict": True},
    ],
    ids=["rpp4", "rpp4-persistent", "rpp2-persistent-pipelined", "persistent-evict"],
)
def test_partial_row_blocks_and_strided_persistent_loops(monkeypatch, changes: dict) -> None:
    """rows=11: never a multiple of rows_per_program; the persistent grid (2 programs on the
    interpreter's 2 'SMs') loops over 3 to 11 row blocks, the last one partial."""
    mod = _version("triton_v3")
    monkeypatch.setattr(mod, "CONFIG", dataclasses.replace(mod.CONFIG, **changes))
    _check_version(mod.add_rmsnorm, 11, 200, torch.float32, seed=5)
    _check_version(mod.add_rmsnorm, 11, 256, torch.float16, seed=6)
    info = tc.LAST_INFO
    assert info["rows_per_program"] == changes.get("rows_per_program", 1)
    if changes.get("persistent"):
        assert info["metrics"]["grid_size"] == 2


@pytest.mark.skipif(not CPU, reason="CPU interpreter test")
def test_config_is_read_at_call_time(monkeypatch) -> None:
    mod = _version("triton_v3")
    x, r, w, eps = ref.make_inputs(3, 64, dtype=torch.float32, seed=0)
    mod.add_rmsnorm(x, r, w, eps)
    assert tc.LAST_INFO["num_warps"] == 1  # 64 fp32 = 16 vectors: fewer than one warp's worth
    monkeypatch.setattr(mod, "CONFIG", dataclasses.replace(mod.CONFIG, num_warps=2))
    mod.add_rmsnorm(x, r, w, eps)
    assert tc.LAST_INFO["num_warps"] == 2
    assert (
        tc.LAST_INFO["metrics"]["grid_size"] == 3 and tc.LAST_INFO["metrics"]["kernel_count"] == 1
    )
    v1 = _version("triton_v1")
    monkeypatch.setattr(v1, "CONFIG", dataclasses.replace(v1.CONFIG, block=32))
    _check_version(v1.add_rmsnorm, 3, 100, torch.float32)  # four chunks, the last partial
    assert tc.LAST_INFO["block"] == 32


@pytest.mark.skipif(not CPU, reason="compiles without a GPU; on a GPU machine the GPU tests run")
def test_versions_compile_for_sm90_without_spills() -> None:
    """The real compile path (not the interpreter): Triton + ptxas for sm_90, in a subprocess
    without TRITON_INTERPRET.  16-byte vectors from triton_v2 on, no spills at the trials."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    picked = ["triton_v1", "triton_v2", "triton_v7", "triton_v8"]
    cmd = [
        sys.executable,
        "-m",
        "kernels.add_rmsnorm.compile_check",
        "--json",
        "--versions",
        ",".join(picked),
        "--shapes",
        "32768x8192,3x1000",
    ]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout)
    assert len(rows) == 8
    for row in rows:
        assert row["n_regs"] > 0 and row["spill_bytes"] == 0, row
        if row["version"] != "triton_v1" and row["hidden"] % 16 == 0:
            assert row["ld_bytes"] == 16 and row["st_bytes"] == 16, row
    last = next(r for r in rows if r["version"] == "triton_v7" and r["hidden"] == 8192)
    assert last["shared"] > 16384  # the cp.async ring of the pipelined persistent loop
    assert last["waves"] == 1.0


# ---------------------------------------------------------------------- baselines


def test_baseline_availability_is_reported() -> None:
    ok, why = baselines.liger_available()
    assert ok or "liger_kernel" in why
    ok, why = baselines.torch_compile_available()
    assert ok or why


@pytest.mark.slow
@pytest.mark.skipif(not CPU, reason="the GPU test covers torch.compile on CUDA")
def test_torch_compile_baseline_on_cpu() -> None:
    ok, why = baselines.torch_compile_available()
    if not ok:
        pytest.skip(why)
    inputs = ref.make_inputs(5, 96, dtype=torch.float32, seed=1)
    err = ref.rel_error(baselines.torch_compile_add_rmsnorm(*inputs), ref.reference(*inputs))
    assert err < 1e-6


# ---------------------------------------------------------------------- GPU


def _poison(nbytes: int) -> None:
    junk = torch.full((nbytes // 4 + 1,), float("nan"), device="cuda")
    del junk


GPU_SHAPES = [(8192, 4096), (32768, 8192), (32, 4096), (5, 96), (3, 1000), (129, 4100), (1, 8192)]
GPU_BASELINES = ["torch", "torch_compile", "liger"]
BASELINE_SHAPES = [(32, 4096), (3, 1000), (129, 4100)]  # torch.compile compiles per shape


def _gpu_fn(name: str):
    if name == "torch":
        return ref.torch_add_rmsnorm
    if name == "torch_compile":
        ok, why = baselines.torch_compile_available()
        if not ok:
            pytest.skip(why)
        return baselines.torch_compile_add_rmsnorm
    if name == "liger":
        ok, why = baselines.liger_available()
        if not ok:
            pytest.skip(why)
        return baselines.liger_add_rmsnorm
    return _version(name).add_rmsnorm


@pytest.mark.gpu
@pytest.mark.parametrize("version", [*VERSIONS, *GPU_BASELINES])
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=lambda s: f"r{s[0]}h{s[1]}")
def test_bf16_on_gpu_against_reference(version: str, shape: tuple) -> None:
    rows, hidden = shape
    if version in GPU_BASELINES and shape not in BASELINE_SHAPES:
        pytest.skip("baselines are checked at three shapes (torch.compile compiles per shape)")
    fn = _gpu_fn(version)
    inputs = ref.make_inputs(rows, hidden, dtype=torch.bfloat16, device="cuda")
    before = [t.clone() for t in inputs[:3]]
    expect = ref.reference(*inputs)
    _poison(16 * rows * hidden * 2)
    y, s = fn(*inputs)
    torch.cuda.synchronize()
    assert y.shape == s.shape == (rows, hidden) and y.dtype == s.dtype == torch.bfloat16
    assert torch.isfinite(y.float()).all() and torch.isfinite(s.float()).all(), (
        "unwritten (NaN-poisoned) or overflowed elements"
    )
    assert all(torch.equal(a, b) for a, b in zip(before, inputs[:3], strict=True))
    err = ref.rel_error((y, s), expect)
    assert err < TOL[torch.bfloat16], err
    del expect, before, inputs, y, s
    torch.cuda.empty_cache()


@pytest.mark.gpu
@pytest.mark.parametrize("version", VERSIONS)
def test_launch_records_what_it_chose_on_gpu(version: str) -> None:
    fn = _version(version).add_rmsnorm
    inputs = ref.make_inputs(8192, 4096, dtype=torch.bfloat16, device="cuda", seed=0)
    tc.LAST_INFO.clear()
    fn(*inputs)
    torch.cuda.synchronize()
    info = tc.LAST_INFO
    assert info["n_regs"] > 0 and info["n_spills"] == 0, info
    n_sm = tc.sm_count(0)
    grid = info["metrics"]["grid_size"]
    if info.get("persistent"):
        assert grid <= 8192 and grid % n_sm == 0 and grid >= n_sm, info
    else:
        assert grid == -(-8192 // info["rows_per_program"])
