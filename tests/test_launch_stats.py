"""Launch statistics without Nsight Compute: the occupancy arithmetic against what Nsight
Compute measured on the H200 (recorded CSVs), and the launch spy on Triton's launcher."""

from __future__ import annotations

import csv
import dataclasses
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from kbopt.bench import launch_stats
from kbopt.bench.launch_stats import SM90, Launch, launch_metrics, occupancy

REPO = Path(__file__).resolve().parent.parent

DATA = Path(__file__).parent / "data"
CSVS = [
    "ncu_h200_raw_captured.csv",
    "ncu_h200_add_rmsnorm_v1_large.csv",
    "ncu_h200_add_rmsnorm_v3_decode.csv",
]
LIMITS = {
    "occupancy_limit_registers": "launch__occupancy_limit_registers",
    "occupancy_limit_shared_mem": "launch__occupancy_limit_shared_mem",
    "occupancy_limit_warps": "launch__occupancy_limit_warps",
    "occupancy_limit_blocks": "launch__occupancy_limit_blocks",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _ncu_rows() -> list[dict[str, str]]:
    out = []
    for name in CSVS:
        rows = list(csv.reader((DATA / name).open()))
        start = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
        header = rows[start]
        for r in rows[start + 1 :]:
            if len(r) == len(header) and r[0].isdigit():
                out.append({**dict(zip(header, r, strict=True)), "_file": name})
    return out


def _launch(row: dict[str, str]) -> Launch:
    shared = _number(row["launch__shared_mem_per_block_static"]) + _number(
        row["launch__shared_mem_per_block_dynamic"]
    )
    return Launch(
        row["Kernel Name"],
        (int(_number(row["launch__grid_size"])), 1, 1),
        int(_number(row["launch__block_size"])) // 32,
        int(_number(row["launch__registers_per_thread"])),
        int(shared),
    )


NCU_ROWS = _ncu_rows()


def test_recorded_rows_cover_every_limiter_kind():
    # register-bound, shared-memory-bound and warp-bound kernels are all in the data
    assert len(NCU_ROWS) >= 10
    limiters = set()
    for row in NCU_ROWS:
        values = {k: _number(row[v]) for k, v in LIMITS.items() if k.startswith("occ")}
        limiters.add(min(values, key=values.__getitem__))
    assert {"occupancy_limit_registers", "occupancy_limit_warps"} <= limiters


@pytest.mark.parametrize("row", NCU_ROWS, ids=lambda r: f"{r['_file']}:{r['ID']}")
def test_occupancy_matches_nsight_compute(row):
    got = occupancy(_launch(row), SM90)
    for ours, theirs in LIMITS.items():
        assert got[ours] == pytest.approx(_number(row[theirs]), abs=0.01), ours


@pytest.mark.parametrize("row", NCU_ROWS, ids=lambda r: f"{r['_file']}:{r['ID']}")
def test_waves_match_nsight_compute(row):
    sms = int(_number(row["device__attribute_multiprocessor_count"]))
    got = launch_metrics([_launch(row)], sms, SM90)
    assert got["waves_per_sm"] == pytest.approx(
        _number(row["launch__waves_per_multiprocessor"]), abs=0.01
    )
    assert got["ctas_per_sm"] == pytest.approx(_number(row["launch__grid_size"]) / sms)


def test_the_launch_that_carries_the_call_gives_the_metrics():
    # an MLA split kernel and its combine: the combine has more CTAs and warps in flight
    split = Launch("split", (32, 1, 16), 8, 128, 65536)
    combine = Launch("combine", (32, 128, 1), 4, 32, 0)
    untimed = launch_metrics([split, combine], 132, SM90)
    assert untimed["grid_size"] == 512 and untimed["block_size"] == 256  # the first
    timed = [
        dataclasses.replace(combine, duration_us=3.0),
        dataclasses.replace(split, duration_us=80.0),
    ]
    got = launch_metrics(timed, 132, SM90)
    assert got["grid_size"] == 512 and got["registers_per_thread"] == 128  # the longest
    assert launch_metrics([], 132, SM90) == {}


def test_event_timer_pairs_enters_and_exits():
    clock = iter(range(100))

    class Event:
        def record(self):
            self.t = next(clock)

        def elapsed_time(self, end):  # milliseconds
            return end.t - self.t

    timer = launch_stats._EventTimer(Event, lambda: None)
    for _ in range(2):
        timer.enter(None)
        timer.exit(None)
    assert timer.durations_us() == [1000.0, 1000.0]
    timer.enter(None)  # an enter without its exit: the timings are not trusted
    assert timer.durations_us() == []


def test_no_sm_count_no_waves():
    got = launch_metrics([Launch("k", (8, 1, 1), 4, 32, 0)], None, SM90)
    assert "ctas_per_sm" not in got and "waves_per_sm" not in got


def test_device_limits_read_torch_properties():
    props = SimpleNamespace(
        regs_per_multiprocessor=32768,
        shared_memory_per_multiprocessor=102400,
        max_threads_per_multi_processor=1536,
    )
    limits = launch_stats.device_limits(props)
    assert limits["regs_per_sm"] == 32768
    assert limits["smem_per_sm"] == 102400
    assert limits["max_warps_per_sm"] == 48
    assert launch_stats.device_limits(None) == SM90


def test_capture_sees_launches_through_triton_launcher():
    compiler = pytest.importorskip("triton.compiler.compiler")
    kernel = SimpleNamespace(
        name="k", function=None, src=None, metadata=SimpleNamespace(num_warps=4, shared=2048)
    )
    # Triton knows the registers only once the kernel is loaded, inside launch_metadata
    kernel._init_handles = lambda: setattr(kernel, "n_regs", 40)
    with launch_stats.capture() as seen:
        compiler.CompiledKernel.launch_metadata(kernel, (10, 2), None)
    assert seen == [Launch("k", (10, 2, 1), 4, 40, 2048)]
    # the launcher is restored: no recording outside the block
    compiler.CompiledKernel.launch_metadata(kernel, (1,), None)
    assert len(seen) == 1


def test_capture_never_breaks_a_launch():
    compiler = pytest.importorskip("triton.compiler.compiler")
    with launch_stats.capture() as seen:
        # a kernel object without the expected metadata is skipped, the call still runs
        odd = SimpleNamespace(name="k", function=None, src=None, metadata=None)
        odd._init_handles = lambda: None
        compiler.CompiledKernel.launch_metadata(odd, (1,), None)
    assert seen == []


def test_summary_rows_come_back_as_the_same_launches():
    launches = [
        Launch("split", (32, 1, 16), 8, 128, 65536, 80.125),
        Launch("combine", (32, 128, 1), 4, 32, 0),
    ]
    assert launch_stats.from_summary(launch_stats.summary(launches)) == launches
    assert launch_stats.from_summary(None) == []


def test_spilled_registers_come_from_the_loaded_kernel():
    compiler = pytest.importorskip("triton.compiler.compiler")
    kernel = SimpleNamespace(
        name="k", function=None, src=None, metadata=SimpleNamespace(num_warps=4, shared=0)
    )

    def load() -> None:  # Triton's n_spills is the local memory per thread / 4
        kernel.n_regs, kernel.n_spills = 32, 512

    kernel._init_handles = load
    with launch_stats.capture() as seen:
        compiler.CompiledKernel.launch_metadata(kernel, (256,), None)
    assert seen[0].spill_bytes == 2048
    assert launch_metrics(seen, 132, SM90)["spill_bytes_per_thread"] == 2048
    assert launch_stats.from_summary(launch_stats.summary(seen)) == seen
    clean = launch_metrics([Launch("k", (8, 1, 1), 4, 40, 0)], 132, SM90)
    assert clean["spill_bytes_per_thread"] == 0  # a measured zero, once registers are known


def test_the_pipeline_depth_comes_from_the_compiled_kernel():
    # SGLang's prefill attention is compiled with num_stages=1: its tiles are not pipelined,
    # and the profile says so through `pipeline_stages`.
    compiler = pytest.importorskip("triton.compiler.compiler")
    meta = SimpleNamespace(num_warps=8, shared=65536, num_stages=1)
    kernel = SimpleNamespace(name="_fwd_kernel", function=None, src=None, metadata=meta)
    kernel._init_handles = lambda: setattr(kernel, "n_regs", 255)
    with launch_stats.capture() as seen:
        compiler.CompiledKernel.launch_metadata(kernel, (32, 32, 1), None)
    assert seen[0].num_stages == 1
    assert launch_metrics(seen, 132, SM90)["pipeline_stages"] == 1
    assert launch_stats.from_summary(launch_stats.summary(seen)) == seen
    # a kernel whose metadata does not say: the metric is absent, never guessed
    assert "pipeline_stages" not in launch_metrics([Launch("k", (8, 1, 1), 4, 40, 0)], 132, SM90)


def test_the_pipeline_depth_is_read_from_a_real_compiled_kernel() -> None:
    # Compiled for sm_90 on the CPU (no GPU needed): the metadata Triton 3.6 hands the
    # launcher carries num_stages, which is what `pipeline_stages` reports.  In a process
    # of its own: once Triton's interpreter has run a kernel (other tests run it, with
    # TRITON_INTERPRET=1), it has patched triton.language for good and nothing compiles.
    pytest.importorskip("triton")
    script = """
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from kbopt.bench import launch_stats

@triton.jit
def row_sum(x, y, n, B: tl.constexpr):
    acc = tl.zeros([B], tl.float32)
    for i in range(0, n, B):
        acc += tl.load(x + i + tl.arange(0, B))
    tl.store(y + tl.arange(0, B), acc)

src = ASTSource(
    fn=row_sum,
    signature={"x": "*fp32", "y": "*fp32", "n": "i32", "B": "constexpr"},
    constexprs={"B": 128},
)
compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_stages": 1, "num_warps": 4})
launch = launch_stats._launch(compiled, (64,))
print(launch.num_stages, launch.num_warps)
"""
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "compile_row_sum.py"  # Triton compiles only functions in files
        path.write_text(script)
        done = subprocess.run(
            [sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1", "4"]


def test_libdevice_math_counts_the_slow_routines_a_ptx_inlines() -> None:
    ptx = """
$L__BB0_2:                              // %__nv_logf.exit
$L__BB0_3:                              // %__nv_fmaf_rn.exit.i.i
$L__BB0_4:                              // %__nv_logf.exit2
$L__BB0_5:                              // %__nv_sqrtf.exit
$L__BB0_6:                              // %__nv_tanhf.exit
"""
    # logf twice is one routine; fmaf_rn (a helper inside it) and sqrtf (sqrt.approx) are cheap
    assert launch_stats.libdevice_math_calls(ptx) == 2
    assert launch_stats.libdevice_math_calls("ex2.approx.f32 %f2, %f1;") == 0
    no_ptx = SimpleNamespace(asm={"ttir": ""})
    assert launch_stats._libdevice_math(no_ptx) is None
    assert "libdevice_math_calls" not in launch_metrics(
        [Launch("k", (8, 1, 1), 4, 40, 0)], 132, SM90
    )
    with_log = Launch("k", (8, 1, 1), 4, 40, 0, libdevice_math=1)
    assert launch_metrics([with_log], 132, SM90)["libdevice_math_calls"] == 1
    assert launch_stats.from_summary(launch_stats.summary([with_log])) == [with_log]


def test_libdevice_math_is_read_from_real_compiled_kernels() -> None:
    # Compiled for sm_90 on the CPU, in a process of its own (see the test above): fp32
    # tl.log inlines libdevice's __nv_logf, tl.exp is one ex2.approx and counts nothing.
    pytest.importorskip("triton")
    script = """
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from kbopt.bench import launch_stats

@triton.jit
def f(x, y, LOG: tl.constexpr):
    v = tl.load(x + tl.arange(0, 128))
    tl.store(y + tl.arange(0, 128), tl.log(v) if LOG else tl.exp(v))

for log in (1, 0):
    src = ASTSource(
        fn=f, signature={"x": "*fp32", "y": "*fp32", "LOG": "constexpr"}, constexprs={"LOG": log}
    )
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    print(launch_stats._launch(compiled, (1,)).libdevice_math)
"""
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "compile_log_exp.py"
        path.write_text(script)
        done = subprocess.run(
            [sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1", "0"]


def test_local_arrays_of_a_sine_are_not_spills(tmp_path):
    """`tl.sin` compiled for sm_90 declares a 28-byte local array (libdevice's argument
    reduction) and ptxas reserves a 32-byte frame with nothing spilled: the reservation
    Triton reports as n_spills is the array's, so no spill is reported."""
    triton = pytest.importorskip("triton")
    import shutil

    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def sine(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n)
        tl.store(y + offs, tl.sin(v), mask=offs < n)

    src = ASTSource(
        fn=sine, signature={"x": "*fp32", "y": "*fp32", "n": "i32"}, constexprs={"BLOCK": 256}
    )
    try:
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    except Exception as exc:  # no CUDA toolchain in this Triton build
        pytest.skip(f"cannot compile for sm_90 here: {exc}")
    ptx = compiled.asm["ptx"]
    arrays = launch_stats.local_array_bytes(ptx)
    assert arrays == 28
    assert launch_stats.libdevice_math_calls(ptx) == 1
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    if ptxas.is_file() and shutil.which(str(ptxas)):
        (tmp_path / "k.ptx").write_text(ptx)
        out = subprocess.run(
            [str(ptxas), "-v", "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k")],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        frame = int(re.search(r"(\d+) bytes stack frame", out).group(1))
        assert "0 bytes spill stores" in out
        reserved = frame  # what CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES reports for this kernel
    else:
        reserved = 32  # measured on an H100: the profile of vLLM's ViT M-RoPE set-up
    launch = Launch("sine", (8, 1, 1), 4, 22, 0, spill_bytes=reserved, local_array_bytes=arrays)
    assert launch.spilled_bytes == 0
    metrics = launch_metrics([launch], 132, SM90)
    assert metrics["spill_bytes_per_thread"] == 0
    assert metrics["local_array_bytes_per_thread"] == 28
    # a real spill on top of the arrays still shows
    assert dataclasses.replace(launch, spill_bytes=reserved + 64).spilled_bytes == 64
    assert launch_stats.from_summary(launch_stats.summary([launch])) == [launch]
