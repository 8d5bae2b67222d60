"""The ncu CSV parser on captured-format samples, aggregation, the runner's fallbacks."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kbopt.bench.ncu import (
    NCU_READS,
    NcuParseError,
    aggregate,
    parse_csv,
    requested_metric_names,
    run_ncu,
)
from kbopt.vocab import METRICS

DATA = Path(__file__).parent / "data"


def test_every_read_metric_is_canonical_and_uses_the_vocab_ncu_name() -> None:
    for read in NCU_READS:
        assert read.metric in METRICS
        vocab_ncu = METRICS[read.metric].ncu
        if vocab_ncu and read.metric != "shared_mem_per_block_kb":
            assert vocab_ncu in read.ncu_names, read.metric


def test_raw_page_two_kernels() -> None:
    kernels = parse_csv((DATA / "ncu_raw_split_kv.csv").read_text())
    assert [k.name for k in kernels] == ["_tiled_kernel", "_combine_kernel"]
    tiled, comb = kernels
    assert tiled.metrics["duration_us"] == pytest.approx(98.304)
    assert tiled.metrics["shared_mem_per_block_kb"] == pytest.approx(112.0)
    assert tiled.metrics["registers_per_thread"] == 168
    assert tiled.metrics["tensor_core_util_pct"] == pytest.approx(18.2)
    assert tiled.metrics["grid_size"] == 512
    assert comb.metrics["local_memory_bytes"] == 3072  # loads + stores
    assert "tensor_core_util_pct" not in comb.metrics  # n/a is skipped, not zero
    assert comb.metrics["grid_size"] == 4096  # thousands separator


def test_aggregate_weights_by_duration() -> None:
    agg = aggregate(parse_csv((DATA / "ncu_raw_split_kv.csv").read_text()))
    assert agg["kernel_count"] == 2
    assert agg["duration_us"] == pytest.approx(98.304 + 12.16)
    want = (41.27 * 98.304 + 55.3 * 12.16) / (98.304 + 12.16)
    assert agg["dram_throughput_pct"] == pytest.approx(want)
    assert agg["registers_per_thread"] == 168
    assert agg["grid_size"] == 512  # from the longest kernel
    assert agg["local_memory_bytes"] == 3072


def test_details_page_display_names() -> None:
    (k,) = parse_csv((DATA / "ncu_details_naive.csv").read_text())
    assert k.metrics["duration_us"] == pytest.approx(2104.61)
    assert k.metrics["dram_throughput_pct"] == pytest.approx(6.84)
    assert k.metrics["sm_throughput_pct"] == pytest.approx(35.02)
    assert k.metrics["achieved_occupancy_pct"] == pytest.approx(78.4)
    assert k.metrics["shared_mem_per_block_kb"] == pytest.approx(1020 / 1024)
    assert k.metrics["l2_hit_rate_pct"] == pytest.approx(97.1)


def test_not_ncu_output() -> None:
    with pytest.raises(NcuParseError):
        parse_csv("hello\nworld\n")


def _fake_ncu(tmp_path: Path, body: str) -> str:
    script = tmp_path / "ncu"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_runner_without_ncu_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("KBOPT_NCU", raising=False)
    out = run_ncu(["true"])
    assert not out.available and "not on PATH" in (out.unavailable or "")


def test_runner_reports_locked_counters(tmp_path: Path) -> None:
    exe = _fake_ncu(tmp_path, 'echo "==ERROR== ERR_NVGPUCTRPERM - no permission" >&2; exit 1\n')
    out = run_ncu(["python", "x.py"], ncu=exe)
    assert not out.available and "ERR_NVGPUCTRPERM" in (out.unavailable or "")


def test_runner_drops_a_missing_metric_and_retries(tmp_path: Path) -> None:
    sample = DATA / "ncu_raw_split_kv.csv"
    missing = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
    exe = _fake_ncu(
        tmp_path,
        f'case "$*" in *{missing}*) echo "==ERROR== Failed to find metric {missing}" >&2; exit 1;; esac\n'
        f'cat "{sample}"\n',
    )
    out = run_ncu(["python", "x.py"], ncu=exe)
    assert out.available, out.unavailable
    assert missing not in ",".join(out.command)
    assert len(out.kernels) == 2
    assert missing in requested_metric_names()
    assert os.path.basename(out.command[0]) == "ncu"


def test_a_csv_captured_on_the_h200() -> None:
    """Real output of `ncu --csv --page raw --print-units base` (kbopt's own command line),
    captured on the H200 for the MLA decode ladder (kernels/mla_decode/results/ncu-*.csv):
    12 launches, split versions giving a tiled kernel then a combine kernel."""
    kernels = parse_csv((DATA / "ncu_h200_raw_captured.csv").read_text())
    assert len(kernels) == 12
    names = [k.short_name for k in kernels]
    assert names[:3] == ["_tiled_kernel", "_tiled_kernel", "combine_kernel"]
    first = kernels[0].metrics
    for metric in (
        "duration_us",
        "dram_throughput_pct",
        "tensor_core_util_pct",
        "achieved_occupancy_pct",
        "registers_per_thread",
        "local_memory_bytes",
        "l2_hit_rate_pct",
    ):
        assert metric in first, metric
    assert first["registers_per_thread"] == 255
    assert first["local_memory_bytes"] > 0  # v2 spills: 255 registers and 58 spilled
    split = aggregate(kernels[1:3])  # one split version = tiled + combine
    assert split["kernel_count"] == 2
    assert split["duration_us"] == pytest.approx(
        kernels[1].metrics["duration_us"] + kernels[2].metrics["duration_us"]
    )
