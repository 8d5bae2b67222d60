#!/bin/bash
# One H200 session for the CuTe DSL versions, as sent to the device (`run` tool): install the
# carried nvidia-cutlass-dsl wheel, check the versions on the GPU, time them side by side with
# the baselines, and read Nsight Compute counters. Everything lands in $OUT:
#   pytest-gpu.log, cute_<stamp>.json (cute_bench), ncu.csv + launches.json + ncu.meta.json
#   (the devlog's counter set: copy them to results/ as ncu-<stamp>-<device>.{csv,launches.json,
#   meta.json} and run `kbopt devlog mla_decode`), ncu-details.txt (stall reasons and memory
#   sections, for reading). The profiled program is kbopt's ncu target (kbopt.bench.ncu_target).
# Variables: CHECK (pytest -k expression), VERSIONS (cute_bench), PROFILE_DECODE and
# PROFILE_SPEC (versions for ncu), DETAILS and DETAILS_CONFIG (the detailed sections).
set -u
CHECK=${CHECK:-cute_v7 or cute_v8 or cute_v9 or in_kernel_merge}
VERSIONS=${VERSIONS:-torch,sglang,triton_v7,cute_v5,cute_v6,cute_v7,cute_v8,cute_v9}
PROFILE_DECODE=${PROFILE_DECODE:-cute_v7,cute_v8}
PROFILE_SPEC=${PROFILE_SPEC:-cute_v7,cute_v8}
DETAILS=${DETAILS:-cute_v8}
# .whl/: the CuTe DSL and kbopt's pure-Python dependencies (pydantic...), so kbopt imports
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/python_packages:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }

if [ -d kernels/mla_decode/build/cutile_probe ]; then
    # cuTile probe: vector-add images compiled ahead of time on a CPU machine (cutile_build.py)
    step "cuTile probe"
    for img in vecadd_sm90.cubin vecadd_sm90_ptxas130.cubin vecadd_sm90_v90.ptx; do
        echo "## $img"
        (cd kernels/mla_decode/build/cutile_probe && timeout 60 python3 run_cubin.py "$img" 2>&1 | tail -6)
    done 2>&1 | tee "$OUT/cutile-probe.log"
fi

step "GPU correctness: $CHECK"
timeout 240 python3 -m pytest -v -m gpu -p no:cacheprovider tests/kernels/test_mla_decode_cute.py \
    -k "$CHECK" 2>&1 | tee "$OUT/pytest-gpu.log" | tail -5

step "timing: $VERSIONS"
timeout 300 python3 -m kernels.mla_decode.cute_bench --versions "$VERSIONS" --out "$OUT"

# kbopt's counter set (the metrics the devlog's profiles read)
METRICS=$(python3 -c 'from kbopt.bench.ncu import requested_metric_names as m; print(",".join(m()))') \
    || exit 1
RUNS=()
[ -n "$PROFILE_DECODE" ] && RUNS+=(--run "decode:$PROFILE_DECODE")
[ -n "$PROFILE_SPEC" ] && RUNS+=(--run "speculative:$PROFILE_SPEC")
if [ ${#RUNS[@]} -gt 0 ]; then
    step "ncu counters: ${RUNS[*]}"
    CMD="ncu --csv --page raw --print-units base --clock-control none --profile-from-start off \
--metrics $METRICS --log-file \$OUT/ncu.csv python3 -m kbopt.bench.ncu_target mla_decode \
--out \$OUT/launches.json ${RUNS[*]}"
    timeout 240 ncu --csv --page raw --print-units base --clock-control none \
        --profile-from-start off --metrics "$METRICS" --log-file "$OUT/ncu.csv" \
        python3 -m kbopt.bench.ncu_target mla_decode --out "$OUT/launches.json" "${RUNS[@]}" \
        | tail -2
    python3 - "$OUT/ncu.meta.json" "$CMD" <<'PY'
import json, sys, datetime, torch, triton, subprocess
name = torch.cuda.get_device_name(0)
json.dump({"device": name,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
           "torch": torch.__version__, "triton": triton.__version__,
           "cutlass_dsl": subprocess.run(["python3", "-c", "import importlib.metadata as m; print(m.version('nvidia-cutlass-dsl'))"], capture_output=True, text=True).stdout.strip(),
           "command": sys.argv[2],
           "note": "ncu on the H200 machine, clocks left alone (--clock-control none); one launch per version after a warm-up call"},
          open(sys.argv[1], "w"), indent=1)
PY
fi
if [ -n "$DETAILS" ]; then
    step "ncu sections (${DETAILS_CONFIG:-speculative}): $DETAILS"
    timeout 180 ncu --page details --clock-control none --profile-from-start off \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
        --section ComputeWorkloadAnalysis --log-file "$OUT/ncu-details.txt" \
        python3 -m kbopt.bench.ncu_target mla_decode --out /tmp/details-launches.json \
        --run "${DETAILS_CONFIG:-speculative}:$DETAILS" | tail -1
    grep -E "^  [a-z_0-9]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Stall|Warp Cycles Per Issued|Issue Slots Busy|Shared Memory" \
        "$OUT/ncu-details.txt" | head -80
fi
step done
