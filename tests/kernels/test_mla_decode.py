"""MLA decode: every Triton version against the fp32 reference.

On the CPU (CI) the Triton versions run under TRITON_INTERPRET=1 (set by conftest.py) on
small fp16/fp32 shapes, ragged lengths and odd sizes. Tests marked ``gpu`` check bf16 on the
GPU with fresh random inputs and a NaN-poisoned allocator pool (every element written).
"""

from __future__ import annotations

import pytest
import torch

from kernels.mla_decode import reference as ref
from kernels.mla_decode import registry, sglang_baseline
from kernels.mla_decode.triton_tiled import auto_splits

TRITON_VERSIONS = [n for n, v in registry.versions().items() if v.family == "triton"]

# (b, s, t, h, dtype, ragged): odd head counts, lengths that are not tile multiples, several
# speculative positions, empty splits (v3's 8 splits over lengths < 8*32).
CPU_CASES = [
    (2, 1, 37, 16, torch.float32, False),
    (3, 2, 100, 8, torch.float16, True),
    (2, 3, 70, 12, torch.float32, True),
]


def test_triton_ladder_is_discovered() -> None:
    assert {"triton_v1", "triton_v2", "triton_v3", "triton_v4"} <= set(TRITON_VERSIONS)
    assert registry.import_errors() == {} or all(
        k.startswith("cute_v") for k in registry.import_errors()
    )


def test_reference_matches_float64_loop() -> None:
    q, kv, lens, sc = ref.make_inputs(2, 2, 9, h=3, dtype=torch.float32, ragged=True, seed=3)
    out = ref.reference(q, kv, lens, sc)
    for i in range(2):
        n = int(lens[i])
        k = kv[i, :n].double()
        for j in range(2):
            for hh in range(3):
                w = torch.softmax((k @ q[i, j, hh].double()) * sc, 0)
                expect = w @ k[:, : ref.D_V]
                assert torch.allclose(out[i, j, hh].double(), expect, atol=1e-5)


def test_torch_baseline_matches_reference_on_ragged() -> None:
    q, kv, lens, sc = ref.make_inputs(3, 2, 50, h=4, dtype=torch.float32, ragged=True)
    expect = ref.reference(q, kv, lens, sc)
    assert ref.rel_error(ref.torch_batched(q, kv, lens, sc), expect) < 1e-5
    assert ref.rel_error(ref.torch_fp32_softmax(q, kv, lens, sc), expect) < 1e-5


def test_bad_inputs_are_rejected_clearly() -> None:
    q, kv, lens, sc = ref.make_inputs(2, 1, 8, h=2, dtype=torch.float32)
    with pytest.raises(ValueError, match="q must be"):
        ref.reference(q[..., :500], kv, lens, sc)
    with pytest.raises(ValueError, match="cache_seqlens"):
        ref.reference(q, kv, lens[:1], sc)


def test_flop_and_byte_formulas() -> None:
    assert ref.flops(32, 16, 4096) == 2 * 32 * 16 * 128 * 4096 * (576 + 512)
    kv = 32 * 4096 * 576 * 2
    assert ref.bytes_moved(32, 1, 4096) == kv + 32 * 128 * (576 + 512) * 2


def test_auto_splits_fills_the_sms_once() -> None:
    assert auto_splits(b=32, row_tiles=2, t=4096, n_sm=132, min_rows=256) == 2
    assert auto_splits(b=32, row_tiles=32, t=4096, n_sm=132, min_rows=256) == 1
    assert auto_splits(b=1, row_tiles=2, t=4096, n_sm=132, min_rows=256) == 16
    assert auto_splits(b=1, row_tiles=2, t=100, n_sm=132, min_rows=256) == 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU interpreter test")
@pytest.mark.parametrize("version", TRITON_VERSIONS)
@pytest.mark.parametrize("case", CPU_CASES, ids=lambda c: f"b{c[0]}s{c[1]}t{c[2]}h{c[3]}")
def test_triton_version_matches_reference_interpreted(version: str, case: tuple) -> None:
    b, s, t, h, dtype, ragged = case
    q, kv, lens, sc = ref.make_inputs(b, s, t, h=h, dtype=dtype, ragged=ragged)
    out = registry.get(version).fn(q, kv, lens, sc)
    assert out.shape == (b, s, h, ref.D_V) and out.dtype == dtype
    err = ref.rel_error(out, ref.reference(q.float(), kv.float(), lens, sc))
    assert err < (2e-3 if dtype == torch.float16 else 1e-4), err


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU interpreter test")
def test_a_wrong_kernel_would_fail() -> None:
    """Guard against a tautological comparison: a shifted length must be caught."""
    q, kv, lens, sc = ref.make_inputs(2, 1, 40, h=16, dtype=torch.float32, ragged=True)
    out = registry.get("triton_v2").fn(q, kv, lens, sc)
    wrong = ref.reference(q, kv, torch.clamp(lens - 1, min=1), sc)
    assert ref.rel_error(out, wrong) > 1e-3


def _poison(nbytes: int) -> None:
    junk = torch.full((nbytes // 4 + 1,), float("nan"), device="cuda")
    del junk


GPU_CASES = [(4, 1, 1024), (2, 16, 777), (5, 2, 300)]


@pytest.mark.gpu
@pytest.mark.parametrize("version", [*TRITON_VERSIONS, "torch", "torch_fp32_softmax", "sglang"])
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: f"b{c[0]}s{c[1]}t{c[2]}")
def test_bf16_on_gpu_against_reference(version: str, case: tuple) -> None:
    b, s, t = case
    if version == "sglang":
        ok, why = sglang_baseline.available()
        if not ok:
            pytest.skip(why)
        fn = sglang_baseline.mla_decode
    else:
        fn = registry.get(version).fn
    q, kv, lens, sc = ref.make_inputs(b, s, t, dtype=torch.bfloat16, device="cuda", ragged=True)
    _poison(b * s * 128 * ref.D_V * 4 * 8)
    out = fn(q, kv, lens, sc)
    torch.cuda.synchronize()
    assert torch.isfinite(out.float()).all(), "unwritten (NaN-poisoned) or overflowed elements"
    err = ref.rel_error(out, ref.reference(q, kv, lens, sc))
    assert err < 2e-2, err


def _row(version: str, config: str, time_us: float, date: str, **extra: object) -> dict:
    return {
        "kernel": "mla_decode",
        "version": version,
        "family": extra.pop("family", "triton"),
        "config": config,
        "b": 32,
        "s": 1,
        "t": 4096,
        "h": 128,
        "device": "NVIDIA H200",
        "torch": "2.11.0",
        "triton": "3.6.0",
        "cuda": "13.0",
        "date": date,
        "command": "python -m kernels.mla_decode.bench",
        "bytes": 1e8,
        "flops": 3e10,
        "floor_us": 50.0,
        "floor_bound": "compute",
        "copy_bw_gbps": 4000.0,
        "matmul_tflops": 600.0,
        "status": "ok",
        "time_us": time_us,
        "gbps": 1.0,
        "tflops": 1.0,
        "pct_of_floor": 5000.0 / time_us,
        "rel_err": 1e-3,
        **extra,
    }


def _mla_context(tmp_path, files: dict):  # -> kbopt.devlog_results.Context
    """The devlog generator over MLA decode's spec, reading results from tmp_path."""
    import json
    from pathlib import Path

    from kbopt import results as res
    from kbopt.devlog_options import load_options
    from kbopt.devlog_results import Context

    for name, rows in files.items():
        (tmp_path / name).write_text(json.dumps(rows))
    spec = registry.spec()
    return Context(
        spec=spec,
        rows=res.load_rows(Path(tmp_path)),
        results=Path(tmp_path),
        rel="kernels/mla_decode/results",
        options=load_options(spec.folder),
        command="kbopt bench mla_decode",
    )


def _mla_lesson(before: str, after: str, **kw: object) -> tuple:
    from kbopt.learn_lessons import Lesson, Where, load_lessons

    spec = registry.spec()
    lesson = Lesson("x", before, after, "w", **kw)
    where = Where("kernels/mla_decode/results", "docs/kernels/mla_decode.md")
    return lesson, spec, where, load_lessons(spec).commands


def test_devlog_blocks_come_from_the_newest_results(tmp_path) -> None:
    from kbopt.devlog_results import render

    old = [
        _row("triton_v1", "decode", 400.0, "2026-12-01T00:00:00Z"),
        _row("torch", "decode", 300.0, "2026-12-01T00:00:00Z", family="torch"),
    ]
    new = [
        _row("triton_v1", "decode", 200.0, "2026-12-02T00:00:00Z", speedup_vs_torch=1.5),
        _row("triton_v2", "decode", 80.0, "2026-12-02T00:00:00Z", speedup_vs_torch=3.75),
    ]
    # a-new.json sorts first by name, but its rows are newer by date
    ctx = _mla_context(tmp_path, {"b-old.json": old, "a-new.json": new})
    doc = (
        "x\n<!-- GEN:results -->\nstale\n<!-- /GEN:results -->\n"
        "<!-- GEN:measured:triton_v2 -->\n<!-- /GEN:measured:triton_v2 -->\n"
    )
    out = render(doc, ctx)
    assert "stale" not in out
    assert "| triton_v1 | 200.0 |" in out and "| triton_v1 | 400.0 |" not in out
    assert "per-call time: **triton_v2**, 80.0 us = 62.5% of the floor (meets" in out
    assert "80.0 us, 62.5% of floor, +150% speed per call vs triton_v1" in out
    assert "Best GPU time" not in out  # no CUDA-graph rows in these results
    assert render(out, ctx) == out  # a fixed point


def test_devlog_measured_line_gives_the_cuda_graph_change_beside_the_per_call_one(tmp_path):
    from kbopt.devlog_results import render

    # triton_v2's per-call time is stretched by a slow host (host 120 us per call): per call
    # it looks slower than triton_v1, replayed from a CUDA graph it is 2x faster
    rows = [
        _row(
            "triton_v1",
            "decode",
            100.0,
            "2026-12-02T00:00:00Z",
            time_us_graph=100.0,
            pct_of_floor_graph=50.0,
        ),
        _row(
            "triton_v2",
            "decode",
            125.0,
            "2026-12-02T00:00:00Z",
            time_us_graph=50.0,
            pct_of_floor_graph=100.0,
            host_us_per_call=120.0,
        ),
    ]
    ctx = _mla_context(tmp_path, {"run.json": rows})
    doc = "<!-- GEN:measured:triton_v2 -->\n<!-- /GEN:measured:triton_v2 -->\n"
    out = render(doc, ctx)
    assert "-20% speed per call (+100% replayed from a CUDA graph) vs triton_v1;" in out, out


def test_devlog_keeps_each_gpus_rows_apart(tmp_path) -> None:
    """Rows from a second GPU get their own sections, named in the heading; a version's
    change is never measured against a row from another GPU."""
    from kbopt.devlog_results import render

    h200 = [
        _row("triton_v1", "decode", 100.0, "2026-12-01T00:00:00Z"),
        _row("triton_v2", "decode", 80.0, "2026-12-01T00:00:00Z"),
        _row("torch", "decode", 300.0, "2026-12-01T00:00:00Z", family="torch"),
    ]
    h100 = [
        _row("triton_v2", "decode", 95.0, "2026-12-02T00:00:00Z", device="NVIDIA H100"),
        _row("triton_v3", "decode", 90.0, "2026-12-02T00:00:00Z", device="NVIDIA H100"),
    ]
    ctx = _mla_context(tmp_path, {"h200.json": h200, "h100.json": h100})
    doc = (
        "<!-- GEN:results -->\n<!-- /GEN:results -->\n"
        "<!-- GEN:measured:triton_v2 -->\n<!-- /GEN:measured:triton_v2 -->\n"
        "<!-- GEN:measured:triton_v3 -->\n<!-- /GEN:measured:triton_v3 -->\n"
    )
    out = render(doc, ctx)
    usual, other = out.index("### decode: "), out.index("### decode on NVIDIA H100: ")
    assert usual < other  # the GPU with the most rows first, under the plain heading
    assert "| triton_v2 | 80.0 |" in out[usual:other] and "| triton_v2 | 95.0 |" in out[other:]
    assert "per-call time: **triton_v2**, 80.0 us" in out[usual:other]
    assert "per-call time: **triton_v3**, 90.0 us" in out[other:]
    # triton_v2 on each GPU: against triton_v1 on the H200, against nothing on the H100
    assert "- measured, decode (b=32, s=1, t=4096): 80.0 us, 62.5% of floor, +25% speed" in out
    assert "- measured on NVIDIA H100, decode (b=32, s=1, t=4096): 95.0 us, 52.6% of floor (" in out
    # triton_v3 only ran on the H100: compared with that run's triton_v2, not the H200's
    assert "90.0 us, 55.6% of floor, +6% speed per call vs triton_v2;" not in out
    assert "90.0 us, 55.6% of floor, +6% speed per call vs triton_v2 (" in out
    assert render(out, ctx) == out


def test_devlog_reports_graph_times_apart_from_per_call_times(tmp_path) -> None:
    """cute_bench rows carry CUDA-graph replay times: the devlog names the best of each kind
    and says when the per-call time is host-bound."""
    from kbopt.devlog_results import render

    rows = [
        _row("cute_v1", "decode", 120.0, "2026-12-02T00:00:00Z"),
        _row("cute_v2", "decode", 110.0, "2026-12-02T00:00:00Z"),
    ]
    rows[0].update(time_us_graph=100.0, pct_of_floor_graph=50.0, host_us_per_call=60.0)
    rows[1].update(time_us_graph=75.0, pct_of_floor_graph=66.7, host_us_per_call=100.0)
    ctx = _mla_context(tmp_path, {"cute_x.json": rows})
    out = render("<!-- GEN:results -->\n<!-- /GEN:results -->\n", ctx)
    assert "per-call time: **cute_v2**, 110.0 us" in out
    assert "Best GPU time" in out and "**cute_v2**, 75.0 us = 66.7% of the floor (meets" in out
    assert "| cute_v2 | 110.0 | 75.0 | 45.5 | 66.7 | 100.0 |" in out


def test_devlog_shows_the_launched_ptx_fingerprint_short(tmp_path) -> None:
    """cute rows carry kernel_ptx_sha256 (the PTX they launched): the results table shows its
    first 12 hex digits under its own heading."""
    from kbopt.devlog_results import render

    row = _row("cute_v8", "decode", 90.0, "2026-12-02T00:00:00Z")
    row.update(kernel_splits=2, kernel_ptx_sha256="1791c5a98fbe" + "0" * 52)
    ctx = _mla_context(tmp_path, {"cute_x.json": [row]})
    out = render("<!-- GEN:results -->\n<!-- /GEN:results -->\n", ctx)
    assert "| splits | PTX sha256 | results file |" in out
    assert "| 2 | 1791c5a98fbe | cute_x.json |" in out


def test_learning_evidence_is_computed_from_rows() -> None:
    from kbopt.learn_lessons import evidence_block

    rows = [
        dict(_row("triton_v4", "decode", 278.4, "d"), _file="r.json"),
        dict(_row("triton_v5", "decode", 176.1, "d"), _file="r.json"),
    ]
    lesson, spec, where, commands = _mla_lesson("triton_v4", "triton_v5", command="bench")
    block = evidence_block(rows, lesson, spec, where, commands)
    assert block.command == "python -m kernels.mla_decode.bench"  # what the rows record
    unrecorded = [{k: v for k, v in r.items() if k != "command"} for r in rows]
    block = evidence_block(unrecorded, lesson, spec, where, commands)
    assert (
        block.command
        == "python -m kernels.mla_decode.bench --repeat --versions triton_v4,triton_v5"
    )
    assert block.rows[0].before.startswith("278.4 us") and block.rows[0].change == "-36.7% time"
    assert "kernels/mla_decode/results/r.json" in block.source


def test_learning_evidence_from_cute_bench_rows_carries_graph_and_host_times() -> None:
    """cute_bench rows: the table shows CUDA-graph times beside per-call times, a lesson can
    compare one version's per-call and graph times, or the host time per call."""
    from kbopt.errors import KbError
    from kbopt.learn_lessons import evidence_block

    b = dict(_row("cute_v6", "decode", 100.0, "d"), _file="c.json", cutlass_dsl="4.3.5")
    a = dict(_row("cute_v7", "decode", 110.0, "d"), _file="c.json", cutlass_dsl="4.3.5")
    b.pop("command"), a.pop("command")  # older rows record no command: the lesson's is used
    b.update(time_us_graph=98.0, pct_of_floor_graph=51.0, host_us_per_call=90.0)
    a.update(time_us_graph=85.0, pct_of_floor_graph=58.8, host_us_per_call=30.0)
    rows = [b, a]
    both = evidence_block(rows, *_mla_lesson("cute_v6", "cute_v7", command="c"))
    assert both.command == "c" and "nvidia-cutlass-dsl 4.3.5" in both.versions
    assert both.rows[0].change == "+10.0% time per call, -13.3% graph"
    same = evidence_block(rows, *_mla_lesson("cute_v7", "cute_v7", call_vs_graph=True))
    assert same.rows[0].before.startswith("per call 110.0 us")
    assert same.rows[0].after.startswith("graph replay 85.0 us")
    host = evidence_block(rows, *_mla_lesson("cute_v6", "cute_v7", host_time=True))
    assert host.rows[0].change == "-66.7% host time"
    only = _mla_lesson("cute_v6", "cute_v7", configs=("speculative",))
    with pytest.raises(KbError, match="no correct rows of both versions in configurations"):
        evidence_block(rows, *only)  # no measured pair left once filtered
