"""The program Nsight Compute profiles: one call of each chosen version, counters only there.

    ncu --csv --page raw --print-units base --clock-control none --profile-from-start off \
        --metrics <kbopt.bench.ncu.requested_metric_names()> --log-file ncu.csv \
        python -m kernels.mla_decode.profile_target --out launches.json \
        --run decode:triton_v5,triton_v7 --run speculative:triton_v7

Every version is first run once outside the profiled range (JIT compilation, autotuning-free
warm-up); then, inside ``cudaProfilerStart/Stop``, each is called once on fresh inputs. The
sidecar JSON lists, in launch order, which version and configuration each profiled kernel
launch belongs to, so :mod:`kernels.mla_decode.devlog` can attribute ncu's rows.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from kernels.mla_decode import reference as ref
from kernels.mla_decode import registry, triton_tiled


def _launch_info(family: str) -> dict[str, int]:
    """Where a version family records its last launch shape (split count)."""
    if family == "cute":
        from kernels.mla_decode import cute_common

        return cute_common.LAST_INFO
    return triton_tiled.LAST_INFO


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kernels.mla_decode.profile_target")
    p.add_argument("--run", action="append", required=True, help="CONFIG:v1,v2,...")
    p.add_argument("--out", type=Path, required=True, help="sidecar JSON (launch order)")
    args = p.parse_args(argv)
    configs = {c.name: c for c in ref.DEFAULT_CONFIGS}
    plan = []
    for item in args.run:
        cname, _, names = item.partition(":")
        if cname not in configs:
            raise SystemExit(f"unknown config {cname!r}; known: {', '.join(configs)}")
        plan += [(configs[cname], n) for n in names.split(",") if n]
    versions = registry.versions()
    launches = []
    for cfg, name in plan:
        fn = versions[name].fn
        q, kv, lens, sc = ref.make_inputs(cfg.b, cfg.s, cfg.t, cfg.h, device="cuda")
        fn(q, kv, lens, sc)  # compile + warm up, outside the profiled range
        torch.cuda.synchronize()
        info = _launch_info(versions[name].family)
        info.clear()
        torch.cuda.profiler.start()
        fn(q, kv, lens, sc)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        splits = info.get("splits", 1)
        n_kernels = info.get("kernels", 2 if splits > 1 else 1)
        kernels = ["main", "combine"][:n_kernels]
        for k in kernels:
            launches.append(
                {
                    "version": name,
                    "config": cfg.name,
                    "b": cfg.b,
                    "s": cfg.s,
                    "t": cfg.t,
                    "kernel": k,
                    "splits": splits,
                }
            )
    args.out.write_text(json.dumps(launches, indent=1) + "\n")
    print(f"profiled {len(launches)} launches: {[(x['version'], x['kernel']) for x in launches]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
