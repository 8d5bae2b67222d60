"""Benchmark every MLA decode version on the GPU: correctness first, then timing.

    python -m kernels.mla_decode.bench                       # default trial matrix, all versions
    python -m kernels.mla_decode.bench --config decode --versions triton_v5,torch
    python -m kernels.mla_decode.bench --b 8 --s 1 --t 8192 --out /tmp/res
    python -m kernels.mla_decode.bench --sweep               # + tiled-kernel parameter sweep

One run measures the two ceilings (device-to-device copy bandwidth, bf16 8192^3 matmul
rate), then per configuration: draws fresh random bf16 inputs (halving b on out-of-memory),
checks every version against the fp32 reference with a poisoned output pool, and times
each with ``triton.testing.do_bench`` (median; L2 flushed before every run, and the inputs
rotated over several sets whose KV caches together exceed the L2). Each result is a JSON
row with the device, software versions, date and this command; the table is printed last.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import shlex
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from kernels.mla_decode import reference as ref
from kernels.mla_decode import registry, sglang_baseline

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REL_TOL = 2e-2  # bf16 operands and a bf16 P matrix: errors land between 1e-3 and 1e-2
KERNEL = "mla_decode"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def software() -> dict[str, str]:
    import triton

    return {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": str(torch.version.cuda),
        "python": platform.python_version(),
    }


def _bench_ms(fn: Callable[[], object], rep_ms: int) -> tuple[float, float, float]:
    """(median, p20, p80) in ms; do_bench flushes the L2 before each timed call."""
    from triton.testing import do_bench

    med, p20, p80 = do_bench(fn, warmup=25, rep=rep_ms, quantiles=[0.5, 0.2, 0.8])
    return float(med), float(p20), float(p80)


def _copy_gbps(rep_ms: int) -> float:
    n = 1 << 30  # 2 GiB of bf16 per buffer: far beyond the 60 MB L2
    src = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    ms, _, _ = _bench_ms(lambda: dst.copy_(src), rep_ms)
    return 2 * n * 2 / (ms * 1e-3) / 1e9  # bytes read + written


def _matmul_tflops(rep_ms: int) -> float:
    m = 8192
    a = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    bm = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    ms, _, _ = _bench_ms(lambda: a @ bm, rep_ms)
    return 2 * m**3 / (ms * 1e-3) / 1e12


def measure_ceilings(rep_ms: int) -> dict[str, float]:
    """Copy bandwidth (bytes read + written) and the bf16 matmul rate, on random data."""
    bw = _copy_gbps(rep_ms)
    mm = _matmul_tflops(rep_ms)
    torch.cuda.empty_cache()
    return {"copy_bw_gbps": bw, "matmul_tflops": mm}


def _poison_pool(nbytes: int) -> None:
    """Fill freed allocator memory with NaN so an unwritten output element shows up."""
    junk = torch.full((nbytes // 4 + 1,), float("nan"), device="cuda", dtype=torch.float32)
    del junk


def _alloc_sets(cfg: ref.Config, n_sets: int) -> tuple[int, list[tuple[Any, ...]]]:
    """Input sets for cfg, halving b on out-of-memory. Returns (b used, sets)."""
    b = cfg.b
    while b >= 1:
        try:
            sets = [
                ref.make_inputs(b, cfg.s, cfg.t, cfg.h, dtype=torch.bfloat16, device="cuda")
                for _ in range(n_sets)
            ]
            return b, sets
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            print(f"[bench] out of memory at b={b}; halving", file=sys.stderr)
            b //= 2
    raise RuntimeError(f"cannot allocate inputs for {cfg}")


def _rotating(fn: Callable[..., Any], sets: list[tuple[Any, ...]]) -> Callable[[], Any]:
    state = {"i": 0}

    def call() -> Any:
        args = sets[state["i"] % len(sets)]
        state["i"] += 1
        return fn(*args)

    return call


def _candidates(
    names: list[str] | None, sweep: str | None
) -> dict[str, tuple[str, Callable[..., Any]]]:
    """name -> (family, fn with the contract signature or a 'prepare' for sglang)."""
    out: dict[str, tuple[str, Callable[..., Any]]] = {}
    for name, v in registry.versions().items():
        out[name] = (v.family, v.fn)
    ok, why = sglang_baseline.available()
    if ok:
        out["sglang"] = ("sglang", sglang_baseline.prepare)
    else:
        print(f"[bench] SKIP sglang baseline: {why}", file=sys.stderr)
    for mod, err in registry.import_errors().items():
        print(f"[bench] SKIP {mod}: import failed: {err}", file=sys.stderr)
    if names:
        missing = [n for n in names if n not in out]
        if missing:
            raise SystemExit(f"unknown versions: {', '.join(missing)}; known: {', '.join(out)}")
        out = {n: out[n] for n in names}
    if sweep:
        out.update(_sweep_candidates(sweep))
    return out


def _sweep_candidates(specs: str) -> dict[str, tuple[str, Callable[..., Any]]]:
    """Tiled-kernel variants, e.g. 'bm64-bn64-st2-tma,bm128-w16-bn32-st2' (TiledConfig.parse)."""
    from kernels.mla_decode import triton_tiled

    out: dict[str, tuple[str, Callable[..., Any]]] = {}
    for spec in specs.split(","):
        cfg = triton_tiled.TiledConfig.parse(spec.strip())

        def fn(q: Any, kv: Any, lens: Any, sc: float, _c: Any = cfg) -> torch.Tensor:
            return triton_tiled.run_tiled(_c, q, kv, lens, sc)

        out[f"sweep:{cfg.tag()}"] = ("sweep", fn)
    return out


def _check(
    family: str, fn: Callable[..., Any], cfg: ref.Config, b: int
) -> tuple[float, str | None]:
    """Fresh random (ragged) inputs, poisoned pool, compare with the fp32 reference."""
    q, kv, lens, sc = ref.make_inputs(
        b, cfg.s, cfg.t, cfg.h, dtype=torch.bfloat16, device="cuda", ragged=True
    )
    _poison_pool(b * cfg.s * cfg.h * ref.D_V * 4 * 8)
    out = fn(q, kv, lens, sc)() if family == "sglang" else fn(q, kv, lens, sc)
    torch.cuda.synchronize()
    expect = ref.reference(q, kv, lens, sc)
    err = ref.rel_error(out, expect)
    if not torch.isfinite(out.float()).all():
        return err, "output has NaN/inf (unwritten or overflowed elements)"
    if err > REL_TOL:
        return err, f"relative error {err:.3g} > {REL_TOL}"
    return err, None


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    if not torch.cuda.is_available():
        raise SystemExit("bench needs a CUDA GPU (run it on the H200 device machine)")
    torch.manual_seed(args.seed)
    device = torch.cuda.get_device_name(0)
    sw = software()
    command = "python -m kernels.mla_decode.bench " + " ".join(shlex.quote(a) for a in args.argv)
    date = _now()
    ceil = measure_ceilings(args.rep_ms)
    print(
        f"[bench] {device}: copy {ceil['copy_bw_gbps']:.0f} GB/s, "
        f"bf16 matmul {ceil['matmul_tflops']:.0f} TFLOP/s",
        file=sys.stderr,
    )
    cands = _candidates(args.versions.split(",") if args.versions else None, args.sweep)

    if args.b is not None:
        cfgs = [ref.Config("custom", b=args.b, s=args.s, t=args.t)]
    else:
        cfgs = [c for c in ref.DEFAULT_CONFIGS if args.config in ("all", c.name)]

    rows: list[dict[str, Any]] = []
    for cfg in cfgs:
        kv_bytes = cfg.b * cfg.t * ref.D_QK * 2
        n_sets = max(2, min(8, -(-4 * 60_000_000 // kv_bytes)))  # sets' KV >= 4x the L2
        b, sets = _alloc_sets(cfg, n_sets)
        nbytes = ref.bytes_moved(b, cfg.s, cfg.t, cfg.h)
        nflops = ref.flops(b, cfg.s, cfg.t, cfg.h)
        t_bw = nbytes / (ceil["copy_bw_gbps"] * 1e9) * 1e6
        t_mm = nflops / (ceil["matmul_tflops"] * 1e12) * 1e6
        floor_us = max(t_bw, t_mm)
        cfg_rows: list[dict[str, Any]] = []
        for name, (family, fn) in cands.items():
            row: dict[str, Any] = {
                "kernel": KERNEL,
                "version": name,
                "family": family,
                "config": cfg.name,
                "b": b,
                "s": cfg.s,
                "t": cfg.t,
                "h": cfg.h,
                "device": device,
                **sw,
                "date": date,
                "command": command,
                "bytes": nbytes,
                "flops": nflops,
                "floor_us": round(floor_us, 3),
                "floor_bound": "memory" if t_bw >= t_mm else "compute",
                "copy_bw_gbps": round(ceil["copy_bw_gbps"], 1),
                "matmul_tflops": round(ceil["matmul_tflops"], 1),
            }
            try:
                err, problem = _check(family, fn, cfg, b)
                row["rel_err"] = err
                if problem:
                    row["status"] = "wrong"
                    row["error"] = problem
                    cfg_rows.append(row)
                    continue
                if family == "sglang":
                    launches = [fn(*st) for st in sets]
                    state = {"i": 0}

                    def call(launches: list[Any] = launches, state: dict[str, int] = state) -> Any:
                        state["i"] += 1
                        return launches[state["i"] % len(launches)]()
                else:
                    call = _rotating(fn, sets)
                if family in ("triton", "sweep"):
                    from kernels.mla_decode import triton_tiled

                    triton_tiled.LAST_INFO.clear()
                    call()
                    row.update({f"kernel_{k}": v for k, v in triton_tiled.LAST_INFO.items()})
                rep = args.rep_ms if not name.startswith("triton_v1") else max(50, args.rep_ms // 4)
                med, p20, p80 = _bench_ms(call, rep)
                med2, _, _ = _bench_ms(call, rep) if args.repeat else (float("nan"), 0, 0)
                us = med * 1e3
                row.update(
                    status="ok",
                    time_us=round(us, 3),
                    p20_us=round(p20 * 1e3, 3),
                    p80_us=round(p80 * 1e3, 3),
                    time_us_repeat=round(med2 * 1e3, 3) if args.repeat else None,
                    gbps=round(nbytes / (us * 1e-6) / 1e9, 1),
                    tflops=round(nflops / (us * 1e-6) / 1e12, 1),
                    pct_of_floor=round(100.0 * floor_us / us, 1),
                )
            except Exception as exc:  # one broken version must not stop the matrix
                row["status"] = "error"
                row["error"] = f"{type(exc).__name__}: {exc}"[:500]
                traceback.print_exc()
                torch.cuda.empty_cache()
            cfg_rows.append(row)
        base = {r["version"]: r.get("time_us") for r in cfg_rows if r.get("status") == "ok"}
        for r in cfg_rows:
            if r.get("status") != "ok":
                continue
            for ref_name in ("torch", "sglang"):
                if base.get(ref_name):
                    r[f"speedup_vs_{ref_name}"] = round(base[ref_name] / r["time_us"], 2)
        rows.extend(cfg_rows)
        del sets
        torch.cuda.empty_cache()
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    hdr = (
        f"{'config':<12}{'version':<34}{'time_us':>10}{'GB/s':>8}{'TFLOP/s':>9}{'%floor':>8}"
        f"{'xtorch':>8}{'xsgl':>7}{'err':>9}"
    )
    print(hdr)
    for r in rows:
        if r.get("status") != "ok":
            print(
                f"{r['config']:<12}{r['version']:<34}  {r.get('status')}: {r.get('error', '')[:60]}"
            )
            continue
        print(
            f"{r['config']:<12}{r['version']:<34}{r['time_us']:>10.1f}{r['gbps']:>8.0f}"
            f"{r['tflops']:>9.1f}{r['pct_of_floor']:>8.1f}"
            f"{r.get('speedup_vs_torch', float('nan')):>8.2f}"
            f"{r.get('speedup_vs_sglang', float('nan')):>7.2f}{r['rel_err']:>9.1e}"
            f"  regs={r.get('kernel_n_regs', '-')} spills={r.get('kernel_n_spills', '-')}"
            f" smem={r.get('kernel_shared', '-')} splits={r.get('kernel_splits', '-')}"
        )
    floors = {(r["config"], r["b"]): (r["floor_us"], r["floor_bound"]) for r in rows}
    for (c, b), (f, kind) in floors.items():
        print(f"floor {c} (b={b}): {f:.1f} us ({kind}-bound)")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="python -m kernels.mla_decode.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", default="all", choices=["all", "decode", "speculative"])
    p.add_argument("--b", type=int, help="custom configuration instead of the default matrix")
    p.add_argument("--s", type=int, default=1)
    p.add_argument("--t", type=int, default=4096)
    p.add_argument("--versions", help="comma-separated names (default: all + sglang)")
    p.add_argument(
        "--sweep", metavar="SPECS", help="also time tiled-kernel variants, e.g. bm64-bn64-st2-tma"
    )
    p.add_argument("--rep-ms", type=int, default=200, help="do_bench repetition time per run")
    p.add_argument("--repeat", action="store_true", help="time every version twice (spread)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="folder for the JSON rows (default: results/)")
    args = p.parse_args(argv)
    args.argv = argv
    rows = run(args)
    out_dir = args.out or RESULTS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    dev = rows[0]["device"].replace(" ", "-") if rows else "nodevice"
    path = out_dir / f"{_dt.datetime.now(_dt.UTC).strftime('%Y%m%dT%H%M%SZ')}-{dev}.json"
    path.write_text(json.dumps(rows, indent=1) + "\n")
    print(f"[bench] wrote {len(rows)} rows to {path}", file=sys.stderr)
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
