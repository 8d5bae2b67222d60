"""The profiler measures what triggers read: closure, derived counters, the two-pass ncu
runner, readable Stages, the guided-analysis rules, and ranking that uses the spec."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from kbopt.bench.backend import Measurement
from kbopt.bench.classify import classify, dominant_stall, occupancy_limiter
from kbopt.bench.ncu import (
    HEAVY_MAX,
    KernelCounters,
    NcuOutcome,
    aggregate,
    distinct_names,
    function_name,
    heavy_launches,
    parse_csv,
    profile_launches,
    readable_name,
    tail_wave_pct,
)
from kbopt.bench.trials import TrialConfig
from kbopt.cli import main
from kbopt.contracts.profile import Profile
from kbopt.metric_sources import produced_by, trigger_metrics_in_catalog, unproduced
from kbopt.store import Store
from kbopt.vocab import METRICS, Bottleneck
from kbopt.workflow.profiler import build_profile

REPO = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------- closure


def _measured(
    duration_us: float, kernel: str = "k", version: str = "v1", **extra: object
) -> Measurement:
    """A correct measurement at a small configuration (the profile builder's input)."""
    return Measurement(
        kernel=kernel,
        version=version,
        config=TrialConfig.of("x", {"rows": 8}),
        duration_us=duration_us,
        correct=True,
        **extra,  # type: ignore[arg-type]
    )


def test_every_metric_has_a_producer_and_vocab_json_says_which(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert unproduced() == []
    assert main(["--root", str(REPO), "vocab", "--json"]) == 0
    vocab = json.loads(capsys.readouterr().out)
    rows = {m["name"]: m for m in vocab["metric"]}
    assert set(rows) == set(METRICS)
    used = trigger_metrics_in_catalog(Store(REPO))
    assert used, "the bundled catalog has triggers"
    for metric in used:
        assert rows[metric]["produced_by"], metric
    assert rows["stall_long_scoreboard_pct"]["produced_by"][0].startswith(
        "smsp__average_warps_issue_stalled_long_scoreboard"
    )
    assert "spec" in rows["heads_per_program"]["produced_by"]
    assert "timing" in rows["launch_overhead_pct"]["produced_by"]


def test_lint_rejects_a_trigger_on_a_metric_nothing_produces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_search_fixtures import small_kb

    import kbopt.lint

    root = small_kb(tmp_path)
    store = Store(root)
    used = sorted(trigger_metrics_in_catalog(store))
    planted = used[0]
    sources = dict(produced_by())
    sources[planted] = ()
    monkeypatch.setattr(kbopt.lint, "produced_by", lambda: sources)
    problems = kbopt.lint.lint(store)
    hits = [p for p in problems if planted in str(p) and "nothing measures" in str(p)]
    assert hits, problems
    assert ":" in str(hits[0])  # path:line: message


# ----------------------------------------------------------------- counters


def _raw_csv(rows: list[dict[str, str]], units: dict[str, str]) -> str:
    header = ["ID", "Process ID", "Kernel Name", *units]
    lines = [",".join(f'"{h}"' for h in header)]
    lines.append(",".join(['""', '""', '""', *[f'"{u}"' for u in units.values()]]))
    for i, row in enumerate(rows):
        cells = [str(i), "1", row["Kernel Name"], *[row.get(k, "n/a") for k in units]]
        lines.append(",".join(f'"{c}"' for c in cells))
    return "\n".join(lines) + "\n"


STALLS = {
    "smsp__average_warps_active_per_issue_active.ratio": "",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio": "",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "sector",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "",
    "launch__waves_per_multiprocessor": "",
    "launch__grid_size": "",
    "device__attribute_multiprocessor_count": "",
    "dram__bytes_read.sum": "byte",
    "dram__bytes_write.sum": "byte",
    "gpu__time_duration.sum": "nsecond",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "",
    "launch__occupancy_limit_registers": "block",
    "launch__occupancy_limit_shared_mem": "block",
    "launch__occupancy_limit_warps": "block",
    "launch__occupancy_limit_blocks": "block",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": "%",
}


def test_derived_counters_from_one_launch() -> None:
    row = {
        "Kernel Name": "k",
        "smsp__average_warps_active_per_issue_active.ratio": "20",
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "9",
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "2",
        "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio": "1",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "4,096",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "128",
        "launch__waves_per_multiprocessor": "2.25",
        "launch__grid_size": "66",
        "device__attribute_multiprocessor_count": "132",
        "dram__bytes_read.sum": "1,000",
        "dram__bytes_write.sum": "500",
        "gpu__time_duration.sum": "10,000",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "30",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "12",
        "launch__occupancy_limit_registers": "2",
        "launch__occupancy_limit_shared_mem": "1",
        "launch__occupancy_limit_warps": "8",
        "launch__occupancy_limit_blocks": "32",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": "25.5",
    }
    (k,) = parse_csv(_raw_csv([row], STALLS))
    m = k.metrics
    assert m["stall_long_scoreboard_pct"] == pytest.approx(45.0)
    assert m["stall_barrier_pct"] == pytest.approx(10.0)
    assert m["sectors_per_request"] == pytest.approx(32.0)
    assert m["global_load_efficiency_pct"] == pytest.approx(25.5)
    assert m["tail_wave_pct"] == pytest.approx(75.0)
    assert m["ctas_per_sm"] == pytest.approx(0.5)
    assert m["dram_bytes"] == pytest.approx(1500.0)
    assert m["shared_bank_conflicts"] == 42
    assert m["duration_us"] == pytest.approx(10.0)
    assert dominant_stall(m) == ("long_scoreboard", pytest.approx(45.0))
    assert occupancy_limiter(m) == ("shared memory per CTA", 1.0)


def test_tail_wave() -> None:
    assert tail_wave_pct(2.0) == 0.0
    assert tail_wave_pct(1.5) == pytest.approx(50.0)
    assert tail_wave_pct(0.25) == pytest.approx(75.0)


def test_readable_kernel_names() -> None:
    torch_fill = (
        "void at::native::(anonymous namespace)::elementwise_kernel<128, 4, "
        "at::native::FillFunctor<float> >(int, at::native::FillFunctor<float>)"
    )
    assert function_name(torch_fill) == "elementwise_kernel"
    assert readable_name(torch_fill) == "elementwise_kernel<FillFunctor>"
    assert function_name("_fwd_grouped_kernel_stage1") == "_fwd_grouped_kernel_stage1"
    assert not readable_name(torch_fill).startswith("void")
    assert len(readable_name("x" * 200)) <= 48


def test_heavy_launches_cover_the_time_with_few_kernels() -> None:
    launches = [("tiny", 0.5)] * 70 + [("main", 500.0), ("combine", 40.0)]
    assert heavy_launches(launches) == ["main", "combine"]
    many = [(f"k{i}", 10.0) for i in range(10)]
    assert len(heavy_launches(many)) == HEAVY_MAX


def _fake_ncu(tmp_path: Path, timing_csv: str, full_csv: str) -> str:
    (tmp_path / "timing.csv").write_text(timing_csv)
    (tmp_path / "full.csv").write_text(full_csv)
    script = tmp_path / "ncu"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in *--query-metrics*) exit 0;; esac\n'
        f'echo "$*" >> "{tmp_path}/calls.txt"\n'
        'case "$*" in *"--metrics gpu__time_duration.sum "*) '
        f'cat "{tmp_path}/timing.csv";; *) cat "{tmp_path}/full.csv";; esac\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def _many_launches() -> tuple[str, str]:
    units = {"gpu__time_duration.sum": "nsecond"}
    tiny = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int> >(int)"
    rows = [{"Kernel Name": tiny, "gpu__time_duration.sum": "2,000"} for _ in range(73)]
    rows.insert(
        40, {"Kernel Name": "_fwd_grouped_kernel_stage1", "gpu__time_duration.sum": "300,000"}
    )
    rows.insert(41, {"Kernel Name": "_fwd_kernel_stage2", "gpu__time_duration.sum": "20,000"})
    full_units = {
        "gpu__time_duration.sum": "nsecond",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": "%",
        "launch__grid_size": "",
    }
    full = [
        {
            "Kernel Name": "_fwd_grouped_kernel_stage1",
            "gpu__time_duration.sum": "300,000",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed": "40",
            "launch__grid_size": "512",
        },
        {
            "Kernel Name": "_fwd_kernel_stage2",
            "gpu__time_duration.sum": "20,000",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed": "10",
            "launch__grid_size": "4096",
        },
    ]
    return _raw_csv(rows, units), _raw_csv(full, full_units)


def test_two_pass_profiling_reads_counters_of_the_kernels_that_matter(tmp_path: Path) -> None:
    exe = _fake_ncu(tmp_path, *_many_launches())
    said: list[str] = []
    out = profile_launches(["python", "x.py"], ncu=exe, budget_s=60, progress=said.append)
    assert out.available, out.unavailable
    assert len(out.launches) == 75
    assert [k.name for k in out.kernels] == ["_fwd_grouped_kernel_stage1", "_fwd_kernel_stage2"]
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert len(calls) == 2
    assert "--kernel-name" in calls[1] and "_fwd_grouped_kernel_stage1" in calls[1]
    assert "--launch-count" in calls[1]
    assert any("pass 1" in s for s in said) and any("pass 2" in s for s in said)

    m = Measurement(
        kernel="sglang",
        version="v1",
        config=TrialConfig.of("decode", {"b": 32}),
        duration_us=400.0,
        correct=True,
        sm_count=132,
    )
    profile, _ = build_profile(m, out, "")
    names = [s.name for s in profile.stages]
    assert names == [
        "_fwd_grouped_kernel_stage1",
        "_fwd_kernel_stage2",
        "other 73 launches",
        "total",
    ]
    other = profile.stages[2]
    assert other.duration_us == pytest.approx(146.0)
    assert profile.metrics["kernel_count"] == 75
    # 466 us of GPU time in a 400 us call cannot be: the overhead is floored at zero
    assert profile.metrics["launch_overhead_pct"] == 0
    assert "75 kernel launches per call" in profile.notes["Launches"]
    assert Profile.parse(profile.render()).stages == profile.stages


def test_budget_is_honoured(tmp_path: Path) -> None:
    script = tmp_path / "ncu"
    script.write_text('#!/bin/sh\ncase "$*" in *--query-metrics*) exit 0;; esac\nsleep 30\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    import time

    t0 = time.monotonic()
    out = profile_launches(["python", "x.py"], ncu=str(script), budget_s=2)
    assert time.monotonic() - t0 < 10
    assert not out.available and "ran past" in (out.unavailable or "")


def test_without_counters_the_profile_names_the_missing_metrics() -> None:
    m = _measured(10.0, floor_us=5.0)
    profile, _ = build_profile(m, NcuOutcome([], [], unavailable="ncu is not on PATH"), "no ncu")
    missing = profile.notes["Missing Metrics"]
    assert "stall_long_scoreboard_pct" in missing and "dram_bytes_ratio" in missing
    assert "kv_len" not in missing  # a spec value, not a measurement a norm could miss


# ----------------------------------------------------------------- classification

RULES = [
    # (metrics, class, lead rule, key issue substring)
    ({"dram_throughput_pct": 85, "tensor_core_util_pct": 5}, Bottleneck.MEMORY, "M1", "bandwidth"),
    (
        {"dram_throughput_pct": 80, "dram_bytes_ratio": 3.0},
        Bottleneck.MEMORY,
        "P1",
        "re-reads",
    ),
    (
        {"dram_throughput_pct": 80, "sectors_per_request": 30.0},
        Bottleneck.MEMORY,
        "P2",
        "uncoalesced",
    ),
    (  # as many sectors per request as vectorized loads, but a quarter of each used
        {"dram_throughput_pct": 80, "sectors_per_request": 16.0, "global_load_efficiency_pct": 25},
        Bottleneck.MEMORY,
        "P2",
        "uncoalesced",
    ),
    (  # coalesced loads, but stores a row apart (a transpose into a column-major buffer)
        {
            "dram_throughput_pct": 80,
            "sectors_per_request": 4.0,
            "global_load_efficiency_pct": 100,
            "global_store_efficiency_pct": 12.5,
        },
        Bottleneck.MEMORY,
        "P2s",
        "uncoalesced stores",
    ),
    ({"tensor_core_util_pct": 75, "dram_throughput_pct": 20}, Bottleneck.COMPUTE, "C1", "math"),
    (
        {"dram_throughput_pct": 20, "launch_overhead_pct": 55},
        Bottleneck.LATENCY,
        "X1",
        "launch",
    ),
    ({"dram_throughput_pct": 30, "local_memory_bytes": 4096}, Bottleneck.LATENCY, "X2", "spill"),
    ({"dram_throughput_pct": 30, "ctas_per_sm": 0.25}, Bottleneck.LATENCY, "X3", "grid"),
    (
        {"dram_throughput_pct": 30, "waves_per_sm": 1.1, "tail_wave_pct": 90},
        Bottleneck.LATENCY,
        "X4",
        "last wave",
    ),
    (
        {"dram_throughput_pct": 30, "stall_barrier_pct": 45, "issue_slot_util_pct": 20},
        Bottleneck.LATENCY,
        "X5",
        "barrier",
    ),
    (
        {
            "dram_throughput_pct": 30,
            "achieved_occupancy_pct": 12,
            "occupancy_limit_registers": 1,
            "occupancy_limit_shared_mem": 4,
        },
        Bottleneck.LATENCY,
        "X6",
        "registers",
    ),
    (  # the resources would let 28 CTAs in, the grid brings 3.9: the grid is the limit
        {
            "dram_throughput_pct": 27,
            "achieved_occupancy_pct": 6,
            "occupancy_limit_registers": 28,
            "occupancy_limit_shared_mem": 32,
            "ctas_per_sm": 3.9,
        },
        Bottleneck.LATENCY,
        "X6",
        "grid too small",
    ),
    (
        {"dram_throughput_pct": 30, "registers_per_thread": 255},
        Bottleneck.LATENCY,
        "X7",
        "register",
    ),
    (
        {
            "dram_throughput_pct": 9,
            "pipeline_stages": 1,
            "arithmetic_intensity": 111,
            "stall_long_scoreboard_pct": 41,
            "issue_slot_util_pct": 21,
            "achieved_occupancy_pct": 12,
        },
        Bottleneck.LATENCY,
        "X8",
        "pipeline stage",
    ),
    (  # one stage where nothing is reused (a quantisation pass): the stalls speak
        {
            "dram_throughput_pct": 30,
            "pipeline_stages": 1,
            "arithmetic_intensity": 3.5,
            "stall_long_scoreboard_pct": 50,
            "issue_slot_util_pct": 20,
        },
        Bottleneck.LATENCY,
        "X5",
        "long scoreboard",
    ),
    ({"dram_throughput_pct": 30}, Bottleneck.LATENCY, "L1", "stalls"),
]


@pytest.mark.parametrize(("metrics", "cls", "rule", "key"), RULES)
def test_guided_analysis_rules(
    metrics: dict[str, float], cls: Bottleneck, rule: str, key: str
) -> None:
    c = classify(metrics, from_counters=True)
    assert c.bottleneck is cls
    lead = c.findings[0].rule if c.findings else c.rule
    if c.bottleneck is Bottleneck.MEMORY and any(f.rule.startswith("P") for f in c.findings):
        lead = next(f.rule for f in c.findings if f.rule.startswith("P"))
    assert lead == rule, c
    assert key in c.key_issue, c.key_issue
    assert c.root_cause.count(".") >= 2


def test_spills_named_without_counters_from_the_compiled_kernel() -> None:
    """A timing-only profile (what an ablation's walks rank) still says the kernel spills:
    the loaded kernel reserves local memory per thread; a counted zero of local traffic
    wins over the reservation."""
    timing = {"dram_throughput_pct": 10, "spill_bytes_per_thread": 1136, "ctas_per_sm": 0.5}
    c = classify(timing, from_counters=False)
    assert c.findings[0].rule == "X2"
    assert "1136 bytes per thread" in c.root_cause
    assert c.key_issue == "register spills"
    counted = classify({**timing, "local_memory_bytes": 0}, from_counters=True)
    assert all(f.rule != "X2" for f in counted.findings)
    assert all(
        f.rule != "X2"
        for f in classify({**timing, "spill_bytes_per_thread": 0}, from_counters=False).findings
    )


def test_local_arrays_are_not_named_as_spills() -> None:
    """Local traffic of a kernel that spills nothing and declares local arrays (libdevice's
    sine keeps its argument reduction in one) is the arrays', not spilled registers."""
    arrays = {
        "dram_throughput_pct": 32,
        "local_memory_bytes": 17920,
        "spill_bytes_per_thread": 0,
        "local_array_bytes_per_thread": 28,
        "ctas_per_sm": 61.8,
    }
    assert all(f.rule != "X2" for f in classify(arrays, from_counters=True).findings)
    spilled = classify({**arrays, "spill_bytes_per_thread": 64}, from_counters=True)
    assert spilled.findings[0].rule == "X2"


def test_a_busy_issue_slot_hides_stalls() -> None:
    c = classify(
        {"dram_throughput_pct": 30, "stall_barrier_pct": 45, "issue_slot_util_pct": 90},
        from_counters=True,
    )
    assert all(f.rule != "X5" for f in c.findings)


def test_rules_on_a_csv_captured_on_the_h200() -> None:
    """The MLA decode ladder's captured ncu rows: the split versions are not memory-bound
    and the spilling v2 is explained by its spills."""
    kernels = parse_csv((Path(__file__).parent / "data" / "ncu_h200_raw_captured.csv").read_text())
    first = classify(kernels[0].metrics, from_counters=True)
    assert first.bottleneck is Bottleneck.LATENCY
    assert first.key_issue == "register spills"


def test_new_counters_on_csvs_captured_on_the_h200() -> None:
    """ncu's output for kbopt's own two-pass command line on the H200 (2026-12-03):
    add_rmsnorm triton_v1 at rows=8192, hidden=4096 (a two-pass loop with 4-byte loads)
    and triton_v3 at rows=32 (32 programs on 132 SMs)."""
    data = Path(__file__).parent / "data"
    (v1,) = parse_csv((data / "ncu_h200_add_rmsnorm_v1_large.csv").read_text())
    m = v1.metrics
    for metric in (
        "stall_long_scoreboard_pct",
        "stall_barrier_pct",
        "issue_slot_util_pct",
        "sectors_per_request",
        "shared_bank_conflicts",
        "dram_bytes",
        "tail_wave_pct",
        "ctas_per_sm",
        "occupancy_limit_registers",
    ):
        assert metric in m, metric
    assert m["sectors_per_request"] == pytest.approx(4.0)  # 4 bytes per thread per load
    assert m["stall_long_scoreboard_pct"] > 50
    c = classify(m, from_counters=True)
    assert c.bottleneck is Bottleneck.MEMORY
    assert "X5" in [f.rule for f in c.findings]

    (v3,) = parse_csv((data / "ncu_h200_add_rmsnorm_v3_decode.csv").read_text())
    assert v3.metrics["ctas_per_sm"] == pytest.approx(32 / 132, abs=0.01)
    c3 = classify(v3.metrics, from_counters=True)
    assert c3.bottleneck is Bottleneck.LATENCY
    assert c3.key_issue == "grid smaller than the GPU"
    timing = parse_csv((data / "ncu_h200_add_rmsnorm_v3_decode_timing.csv").read_text())
    assert [k.metrics.keys() >= {"duration_us"} for k in timing] == [True]


def test_an_imported_helper_named_prepare_is_not_the_set_up_hook() -> None:
    import types

    from kbopt.kernel import _own_function

    helper = types.ModuleType("helpers")
    exec("def prepare(q, kv, lens):\n    return q", helper.__dict__)
    version = types.ModuleType("kernels.k.triton_v1")
    version.prepare = helper.prepare  # type: ignore[attr-defined]
    assert _own_function(version, "prepare") is None
    exec("def prepare(a, b):\n    return lambda: a", version.__dict__)
    assert _own_function(version, "prepare") is version.prepare  # type: ignore[attr-defined]


def test_a_version_that_raises_fails_its_check_instead_of_crashing() -> None:
    from kbopt.bench import harness
    from kbopt.kernel import Version, load_spec

    spec = load_spec("add_rmsnorm", REPO)

    def broken(*_args: object) -> None:
        raise TypeError("prepare() takes 3 positional arguments but 4 were given")

    err, problem = harness.check(
        spec, Version("v", "triton", "", broken), {"rows": 2, "hidden": 64}, "float32", "cpu"
    )
    assert err == float("inf")
    assert problem is not None and "raised TypeError" in problem


def test_a_knob_left_at_its_default_is_read_from_the_spec() -> None:
    from kbopt.kernel import Knob, load_spec

    spec = load_spec("add_rmsnorm", REPO)
    values = spec.knob_values("triton_v1")  # its CONFIG sets block and num_warps only
    assert values["block"] == 256 and values["num_warps"] == 4
    assert values["vectors_per_thread"] == 4 and values["num_stages"] == 1
    assert not Knob("x", "int", (1, 2)).has_default
    assert Knob("x", "int", (1, 2), default=None).has_default


def test_spec_contexts_keep_other_kernels_entries_off_a_real_norm_profile() -> None:
    """add_rmsnorm at rows=32 on the H200 (a real profile): call-level entries (CUDA graphs)
    apply to any kernel, attention entries tagged memory-bound do not apply to a norm."""
    from kbopt.strategy import recommend

    text = (REPO / "benchmarks/real_profiles/add_rmsnorm--triton_v3--decode.md").read_text()
    result = recommend(text, language="triton", store=Store(REPO))
    ids = [o.id for o in result.opportunities]
    assert "cuda-graph-capture-decode-step" in ids[:3]
    for attention_only in ("flash-attention-online-softmax-tiling", "split-kv-decode"):
        assert attention_only not in ids
    assert all("mla" not in w.id for w in result.warnings)


def test_names_in_an_anonymous_namespace_keep_their_function() -> None:
    # As ncu's CSV gave torch.sort's segmented radix sort on the H200 (2026-12-03): the
    # `<unnamed>` namespaces lost their `<`, which unbalanced the template brackets.
    cub_sort = (
        "void at_cuda_detail::DeviceSegmentedRadixSortKernel<at_cuda_detail::policy_hub<float,"
        " long, int>::Policy1000, 1, 1, float, long, unnamed>::offset_t, unnamed>::offset_t,"
        " int, at_cuda_detail::identity_decomposer_t>(const T4 *, T4 *, const T5 *, T5 *, T6,"
        " T7, int, int, int, T9)"
    )
    assert function_name(cub_sort) == "DeviceSegmentedRadixSortKernel"
    assert readable_name(cub_sort) == "DeviceSegmentedRadixSortKernel<policy_hub>"
    fill = "unnamed>::fill_reverse_indices_kernel(long *, int, cuda::IntDivider<unsigned int>)"
    assert readable_name(fill) == "fill_reverse_indices_kernel"  # not <int>, a parameter's
    assert function_name("void <unnamed>::k<float>(float *)") == "k"


def test_repeated_short_names_are_numbered() -> None:
    assert distinct_names(["a", "b", "a", "a"]) == ["a", "b", "a #2", "a #3"]


def test_a_kernel_launched_several_times_gives_a_profile_that_parses() -> None:
    # torch.sort's radix sort: six launches of one kernel, as in Liger's sparsemax
    sort = "void ns::SortKernel<ns::policy<float>, 1>(float *)"
    out = NcuOutcome(
        kernels=[
            KernelCounters(i, sort, {"duration_us": 300.0 - i, "grid_size": 1024.0})
            for i in range(3)
        ],
        command=[],
    )
    m = _measured(1000.0, sm_count=132)
    profile, _ = build_profile(m, out, "")
    names = [s.name for s in profile.stages]
    assert names[:3] == ["SortKernel<policy>", "SortKernel<policy> #2", "SortKernel<policy> #3"]
    assert Profile.parse(profile.render()).stages == profile.stages


def test_an_input_cache_makes_a_shape_s_inputs_once_and_hands_out_copies() -> None:
    """A search measures one shape many times: the check's inputs and reference output are
    made once, each version gets copies (one that writes into its inputs cannot change what
    the next one sees), and another shape replaces them."""
    import dataclasses

    import torch

    from kbopt.bench import harness
    from kbopt.kernel import Version, load_spec

    spec = load_spec("add_rmsnorm", REPO)
    made: list[dict] = []

    def make(dims: dict, **kw: object) -> tuple:
        made.append(dict(dims))
        return spec.make_inputs(dims, **kw)

    references: list[int] = []

    def reference(*inputs: object) -> object:
        references.append(1)
        return spec.reference(*inputs)

    counted = dataclasses.replace(
        spec, make_inputs=make, make_check_inputs=None, reference=reference
    )

    def in_place(*inputs: object) -> object:
        out = spec.reference(*inputs)  # right, then scribbles over its first input
        first = inputs[0]
        assert isinstance(first, torch.Tensor)
        first.fill_(float("nan"))
        return out

    cache = harness.InputCache()
    small = {"rows": 2, "hidden": 64}
    for _ in range(3):
        _, problem = harness.check(
            counted, Version("v", "triton", "", in_place), small, "float32", "cpu", cache=cache
        )
        assert problem is None, problem  # the NaN the last call wrote never reaches the next
    assert made == [small] and len(references) == 1
    other = {"rows": 4, "hidden": 64}
    harness.check(
        counted, Version("v", "triton", "", in_place), other, "float32", "cpu", cache=cache
    )
    assert made == [small, other] and len(references) == 2
    cache.clear()
    assert cache.checked is None and cache.sets is None


STORES = {
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "sector",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": "%",
    "dram__bytes_read.sum": "byte",
    "dram__bytes_write.sum": "byte",
}


@pytest.mark.parametrize(
    ("sectors", "dram_read", "dram_write", "kept"),
    [
        # a transpose of 4-byte scales into a column-major buffer: a sector per 4-byte
        # store, the sectors' bytes eight times what the L2 finally writes to DRAM
        ("1,048,576", "4,194,304", "4,194,304", True),
        # an argmax: one 8-byte value a row among megabytes of coalesced reads
        ("2,048", "536,870,912", "16,384", False),
        # no stores at all (ncu reads 0% efficiency)
        ("0", "1,000,000", "0", False),
    ],
)
def test_store_efficiency_counts_only_where_the_stores_carry_traffic(
    sectors: str, dram_read: str, dram_write: str, kept: bool
) -> None:
    row = {
        "Kernel Name": "k",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": sectors,
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": "12.5",
        "dram__bytes_read.sum": dram_read,
        "dram__bytes_write.sum": dram_write,
    }
    (k,) = parse_csv(_raw_csv([row], STORES))
    if kept:
        assert k.metrics["global_store_efficiency_pct"] == pytest.approx(12.5)
    else:
        assert "global_store_efficiency_pct" not in k.metrics


def test_store_efficiency_without_the_store_sector_counter_is_not_guessed() -> None:
    """A CSV from before the store counters were requested: the efficiency alone cannot
    say whether the stores matter, so it is left out rather than trusted."""
    units = {"smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": "%"}
    row = {
        "Kernel Name": "k",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": "12.5",
    }
    (k,) = parse_csv(_raw_csv([row], units))
    assert "global_store_efficiency_pct" not in k.metrics


def test_a_transposing_store_reads_as_uncoalesced_stores() -> None:
    """SGLang's TMA alignment of fp32 group scales on an H100 (2026-12-07, kbopt's counter
    pass at 4,096 rows): its loads are whole sectors, and each warp's store of a
    transposed row fills 32 sectors with 4 bytes each, 12.5%, which only the store
    counter shows."""
    data = Path(__file__).parent / "data"
    kernels = parse_csv((data / "ncu_h100_sglang_tma_align_scale_4096.csv").read_text())
    assert len(kernels) == 2
    for kernel in kernels:
        assert kernel.metrics["global_load_efficiency_pct"] == pytest.approx(100.0)
        assert kernel.metrics["global_store_efficiency_pct"] == pytest.approx(12.5)
    assert aggregate(kernels)["global_store_efficiency_pct"] == pytest.approx(12.5)
    found = classify(aggregate(kernels), from_counters=True).findings
    assert any(f.rule == "P2s" for f in found)


def test_a_small_kernels_stores_do_not_set_the_calls_store_efficiency() -> None:
    """FlagGems' count_nonzero over 8,192 x 11,008 on an H100 (2026-12-07): the main
    kernel reads 183 MB and stores too little to measure; the combine kernel after it
    stores at 25% efficiency for 11% of the time.  The call counts the first as wasting
    nothing, so it does not read as strided stores."""
    data = Path(__file__).parent / "data"
    main_kernel, combine = parse_csv(
        (data / "ncu_h100_flaggems_count_nonzero_8192.csv").read_text()
    )
    assert "global_store_efficiency_pct" not in main_kernel.metrics
    assert combine.metrics["global_store_efficiency_pct"] == pytest.approx(25.0)
    call = aggregate([main_kernel, combine])["global_store_efficiency_pct"]
    assert 85.0 < call < 95.0


def test_a_kernel_without_global_loads_has_no_load_efficiency() -> None:
    """FlagGems' embedding backward on the H200 (2026-12-04, kbopt's counter pass): a
    zero-fill that loads nothing (ncu reports 0% efficiency), the scatter and the cast.
    The fill must not count as wasted loads in the operation's figure."""
    data = Path(__file__).parent / "data"
    kernels = parse_csv((data / "ncu_h200_flaggems_embedding_backward_2048.csv").read_text())
    fill, scatter, cast = kernels
    assert "Fill" in fill.name and "global_load_efficiency_pct" not in fill.metrics
    assert scatter.metrics["global_load_efficiency_pct"] == pytest.approx(75.0)
    assert cast.metrics["global_load_efficiency_pct"] == pytest.approx(50.0)
    merged = aggregate(kernels)["global_load_efficiency_pct"]
    assert 50.0 < merged < 75.0  # the two kernels that load, by duration


def test_loads_that_are_all_async_copies_have_no_load_efficiency() -> None:
    """vLLM's persistent batch-invariant matmul on an H100 (2026-12-06, blind set 52): its
    loads are Triton's pipelined cp.async copies, whose sectors the LSU counts while the
    efficiency counter, which counts LDG bytes only, reads 0%.  Not wasted loads."""
    data = Path(__file__).parent / "data"
    (kernel,) = parse_csv((data / "ncu_h100_vllm_bi_matmul_2048.csv").read_text())
    assert kernel.raw["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"][0] == "0"
    assert "global_load_efficiency_pct" not in kernel.metrics
    assert kernel.metrics["sectors_per_request"] == pytest.approx(16.0)


def test_a_side_stream_of_loads_beside_tma_reads_is_not_the_kernels_efficiency() -> None:
    """FlagGems' TMA grouped GEMM on an H100 (2026-12-06, blind set 52): 135,168 sectors of
    4-byte group-offset loads (12.5% efficient) beside 954 MB read from DRAM by TMA.  The
    efficiency and sectors per request of those few loads are left out."""
    data = Path(__file__).parent / "data"
    (kernel,) = parse_csv((data / "ncu_h100_flaggems_grouped_mm_4096.csv").read_text())
    raw = kernel.raw
    assert raw["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"][0] == "12.50"
    assert "global_load_efficiency_pct" not in kernel.metrics
    assert "sectors_per_request" not in kernel.metrics
    assert kernel.metrics["dram_bytes"] > 9e8


def test_an_impossible_counter_value_is_left_out_and_said() -> None:
    """FlagGems' repeat_interleave at a 64-token decode step on the H200 (2026-12-04,
    kbopt's counter pass): ncu read the L2 hit rate of a 2-launch call as 142%.  Before,
    the profile's validation refused it and no profile was written."""
    data = Path(__file__).parent / "data"
    (kernel,) = parse_csv((data / "ncu_h200_flaggems_repeat_interleave_64.csv").read_text())
    assert kernel.rejected == {"l2_hit_rate_pct": pytest.approx(142.0)}
    assert "l2_hit_rate_pct" not in kernel.metrics
    assert "l1_hit_rate_pct" in kernel.metrics and "duration_us" in kernel.metrics
    m = _measured(12.0, "flaggems_repeat_interleave", "triton_v1", sm_count=132)
    profile, _ = build_profile(m, NcuOutcome([kernel], []), "")
    assert "l2_hit_rate_pct" not in profile.metrics
    note = profile.notes["Counters left out"]
    assert "l2_hit_rate_pct: 142 is outside 0..100 %" in note and "repeat_interleave" in note
    assert Profile.parse(profile.render()).notes == profile.notes


def test_the_row_over_the_threads_of_its_program_is_derived() -> None:
    from kbopt.workflow.profiler import derived_metrics

    m = _measured(10.0)
    out = derived_metrics(None, m, None, {"row_len": 128.0, "block_size": 128.0})
    assert out["row_elements_per_thread"] == 1.0
    assert "row_elements_per_thread" not in derived_metrics(None, m, None, {"row_len": 128.0})
    assert produced_by()["row_elements_per_thread"]


def test_torch_element_wise_launches_of_the_call_are_counted() -> None:
    from kbopt.workflow.profiler import derived_metrics

    fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
    counters = NcuOutcome(
        [KernelCounters(1, "scatter_add_kernel_1", {"duration_us": 2.2})],
        [],
        launches=[(fill, 1.8), ("scatter_add_kernel_1", 2.2)],
    )
    out = derived_metrics(None, _measured(6.0), counters, {})
    assert out["elementwise_launches"] == 1.0 and out["kernel_count"] == 2.0
    assert produced_by()["elementwise_launches"]
