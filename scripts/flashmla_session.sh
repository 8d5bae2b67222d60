#!/bin/bash
# One GPU call: build FlashMLA's dense sm90 decode and time it side by side with plain torch,
# SGLang's Triton kernel and our best MLA decode versions, in one `kbopt bench mla_decode` run
# (one results file, one set of measured ceilings) at decode, speculative and FlashMLA's own
# headline shape b=128, s=2, t=4096 (given as dims: it is not one of the spec's trials).
#
# Run from the repository root on the GPU machine (the device `run` tool), carrying:
#   .whl             kbopt's pure-Python dependencies (pydantic, whoosh...: scripts/device_wheels.sh)
#   .whl-cutlass-xz  nvidia-cutlass-dsl 4.3.5 repacked by scripts/pack_wheel_xz.sh (~40 MB;
#                    the 56 MiB wheel in .whl-cutlass/ is used instead when no .tar.xz is there)
#   third_party      flashmla-src.tgz (scripts/fetch_third_party.py flashmla) and the SGLang copy
# The call's working tree is limited to 64 MiB with what it carries, and the wheel takes 39: with
# the committed results grown past ~17 MiB the call is refused before it starts.  This script
# reads nothing under results/ablation or results/profiles (about 13 MiB on 2026-12-06), so move
# them out of the checkout for the call (mv results/ablation results/profiles /tmp/aside/) and
# back after it; `git status` then shows them deleted until they are back.
# What comes back in $OUT (2 files):
#   flashmla-session.log   everything printed (the bench's table last)
#   flashmla-session.tgz   mla_decode/<stamp>-<device>.json (the results rows: copy it to
#                          kernels/mla_decode/results/), flashmla-build.log (nvcc's output)
#   with CHECK:            gpu-check.log (the GPU tests' output)
#   with PROFILE:          ncu.csv, launches.json, ncu.meta.json (kbopt's counter set, as
#                          kernels/mla_decode/h200_cute.sh writes them)
#   with MIX:              ncu-mix.csv, mix-launches.json (instructions per opcode)
#   with SOURCE:           source-<version>.ncu-rep and .csv (warp-stall samples per SASS line)
# Variables: VERSIONS (ours and torch; flashmla and sglang are added when present), REP_MS
# (200), CONFIGS (the bench's configurations, default "decode speculative b=128,s=2,t=4096"),
# SESSION_S (460: the whole script's budget, so the call's 480 s limit is never hit),
# BUILD_S (180: FlashMLA's build, both attempts).
# Optional steps: CHECK, a pytest -k expression: the GPU tests of
# tests/kernels/test_mla_decode_cute.py that match it run first (at most CHECK_S, 150 s); a
# version named in NEW (a version under test) is dropped from the bench and the profile if
# those tests hang (time out), so the rest of the session still measures the others.
# PROFILE, versions for one ncu pass at decode and speculative after the bench, which leaves
# it PROFILE_S (90 s). MIX, versions whose executed instructions per SASS opcode ncu counts
# at speculative (ncu-mix.csv in the archive, MIX_S: 60 s), e.g. flashmla,cute_v15,cute_v16;
# keep it in results/ as instruction-mix-<stamp>-<device>.csv (read it with
# scripts/instruction_mix.py), not ncu-* (the devlog reads
# ncu-*.csv as counter sessions).
# SOURCE, versions whose warp-stall samples ncu collects per SASS instruction at speculative
# (SourceCounters and WarpStateStats sections; source-<version>.ncu-rep and the source page as
# source-<version>.csv in the archive, read with scripts/stall_ledger.py; keep the CSV in
# results/ gzipped, as stall-source-<stamp>-<device>-<version>.csv.gz; SOURCE_S, 120 s, is kept
# for it before the bench).  SOURCE_CONFIG (speculative) is the configuration they are taken
# at; another one (decode) names the files source-<version>-<config>.* and the kept CSV
# stall-source-<stamp>-<device>-<version>-<config>.csv.gz.
# NEW may name several versions, separated by commas.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
REPO=$PWD
VERSIONS=${VERSIONS:-torch,triton_v7,cute_v7,cute_v8,cute_v9}
REP_MS=${REP_MS:-200}
CONFIGS=${CONFIGS:-decode speculative b=128,s=2,t=4096}
CHECK=${CHECK:-}
NEW=${NEW:-}
PROFILE=${PROFILE:-}
PROFILE_S=${PROFILE_S:-90}
MIX=${MIX:-}
MIX_S=${MIX_S:-60}
SOURCE=${SOURCE:-}
SOURCE_CONFIG=${SOURCE_CONFIG:-speculative}
DEADLINE=$(($(date +%s) + ${SESSION_S:-460}))
WORK=/tmp/flashmla-session
rm -rf "$WORK" && mkdir -p "$WORK/mla_decode"
step() { echo "=== $1 ($(date -u +%H:%M:%S), $((DEADLINE - $(date +%s)))s left)"; }

{
    step "set-up"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
    mkdir -p /tmp/site
    wheels=(.whl/*.whl)
    packed=(.whl-cutlass-xz/*.tar.xz)
    if [ -f "${packed[0]}" ]; then
        tar -xJf "${packed[0]}" -C /tmp/site || exit 1
        echo "unpacked ${packed[0]} into /tmp/site"
    elif [ -d .whl-cutlass ]; then
        wheels+=(.whl-cutlass/*.whl)
    else
        echo "no CuTe DSL (.whl-cutlass-xz or .whl-cutlass): the cute versions will fail to import"
    fi
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "${wheels[@]}" || exit 1
    export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/python_packages:$REPO
    export PYTHONUNBUFFERED=1

    if [ -n "$CHECK" ]; then
        step "GPU tests: $CHECK"
        timeout "${CHECK_S:-150}" python3 -m pytest -v -m gpu -p no:cacheprovider \
            tests/kernels/test_mla_decode_cute.py -k "$CHECK" > "$WORK/gpu-check.log" 2>&1
        rc=$?
        grep -E "PASSED|FAILED|ERROR|SKIPPED|Error|assert" "$WORK/gpu-check.log" | tail -40
        tail -3 "$WORK/gpu-check.log"
        if [ "$rc" -eq 124 ] && [ -n "$NEW" ]; then
            echo "the GPU tests timed out (a hang?): $NEW is left out of the bench and the profile"
            for v in ${NEW//,/ }; do
                VERSIONS=$(echo ",$VERSIONS," | sed "s/,$v,/,/; s/^,//; s/,\$//")
                PROFILE=$(echo ",$PROFILE," | sed "s/,$v,/,/; s/^,//; s/,\$//")
                MIX=$(echo ",$MIX," | sed "s/,$v,/,/; s/^,//; s/,\$//")
            done
        fi
    fi

    step "FlashMLA build (scripts/build_flashmla.sh)"
    if FLASHMLA_PATH=$(FLASHMLA_BUILD_TIMEOUT_S=${BUILD_S:-180} \
        FLASHMLA_BUILD_LOG=$WORK/flashmla-build.log scripts/build_flashmla.sh); then
        export KBOPT_FLASHMLA_PATH=$FLASHMLA_PATH
        VERSIONS="flashmla,$VERSIONS"
    fi
    if [ -f third_party/sglang/decode_attention.py ]; then
        # kernels/mla_decode/sglang_baseline.py reads its git-ignored copy from here
        mkdir -p kernels/mla_decode/third_party
        cp third_party/sglang/decode_attention.py kernels/mla_decode/third_party/
        VERSIONS=${VERSIONS/torch/torch,sglang}
    fi
    python3 -m kbopt --root "$REPO" kernel check mla_decode | tail -4
    # keep the versions that import here: one unknown name would stop the whole bench
    VERSIONS=$(python3 - "$VERSIONS" "$REPO" << 'PY'
import sys
from pathlib import Path

from kbopt.kernel import load_spec

versions, errors = load_spec("mla_decode", Path(sys.argv[2])).load_versions()
wanted = sys.argv[1].split(",")
for name in wanted:
    if name not in versions:
        print(f"not benched: {name}: {errors.get(name, 'not loaded here')}", file=sys.stderr)
print(",".join(name for name in wanted if name in versions))
PY
    )

    reserve=10
    [ -n "$PROFILE" ] && reserve=$((reserve + PROFILE_S))
    [ -n "$MIX" ] && reserve=$((reserve + MIX_S))
    [ -n "$SOURCE" ] && reserve=$((reserve + ${SOURCE_S:-120}))
    left=$((DEADLINE - $(date +%s) - reserve))
    config_args=()
    for c in $CONFIGS; do config_args+=(--config "$c"); done
    # about 10 s a version and configuration with --graph at REP_MS 200 (measured: 4 versions
    # x 3 configurations took ~100 s): say so before a limit too short for all of them
    need=$(( $(echo "$VERSIONS" | tr ',' '\n' | wc -l) * $(echo $CONFIGS | wc -w) * 10 ))
    [ "$left" -lt "$need" ] && echo "warning: ${left}s may time only part of the bench (~${need}s);" \
        "a larger SESSION_S or fewer PROFILE/MIX/SOURCE steps leave it more"
    step "kbopt bench mla_decode: $VERSIONS (limit ${left}s)"
    timeout "$left" python3 -m kbopt --root "$REPO" bench mla_decode --versions "$VERSIONS" \
        "${config_args[@]}" --graph --rep-ms "$REP_MS" --out "$WORK/mla_decode"
    rc=$?
    # kbopt bench writes the configurations it finished when `timeout` stops it
    [ "$rc" -eq 124 ] && echo "the bench was stopped at its time limit: only the configurations it finished were written"

    if [ -n "$PROFILE" ]; then
        left=$((DEADLINE - $(date +%s) - 5))
        step "ncu counters: decode and speculative, $PROFILE (limit ${left}s)"
        METRICS=$(python3 -c 'from kbopt.bench.ncu import requested_metric_names as m; print(",".join(m()))')
        RUNS=(--run "decode:$PROFILE" --run "speculative:$PROFILE")
        timeout "$left" ncu --csv --page raw --print-units base --clock-control none \
            --profile-from-start off --metrics "$METRICS" --log-file "$WORK/ncu.csv" \
            python3 -m kbopt.bench.ncu_target mla_decode --out "$WORK/launches.json" "${RUNS[@]}" \
            | tail -2
        python3 - "$WORK/ncu.meta.json" "ncu --csv --page raw --print-units base --clock-control none --profile-from-start off --metrics <kbopt's set> python3 -m kbopt.bench.ncu_target mla_decode ${RUNS[*]}" <<'PY'
import datetime, importlib.metadata, json, sys, torch, triton
try:
    dsl = importlib.metadata.version("nvidia-cutlass-dsl")
except importlib.metadata.PackageNotFoundError:
    dsl = "unknown"
json.dump({"device": torch.cuda.get_device_name(0),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
           "torch": torch.__version__, "triton": triton.__version__,
           "cutlass_dsl": dsl,
           "command": sys.argv[2],
           "note": "ncu on the GPU machine named above, clocks left alone (--clock-control none); one launch per version after a warm-up call"},
          open(sys.argv[1], "w"), indent=1)
PY
    fi
    if [ -n "$MIX" ]; then
        # executed instructions per SASS opcode (one launch per version, speculative): where
        # the instructions a version issues beyond FlashMLA's go at run time
        left=$((DEADLINE - $(date +%s) - 5))
        step "ncu instruction mix: speculative, $MIX (limit ${left}s)"
        timeout "$left" ncu --csv --page raw --print-units base --clock-control none \
            --profile-from-start off --print-metric-instances details \
            --metrics smsp__inst_executed.sum,sass__inst_executed_per_opcode \
            --log-file "$WORK/ncu-mix.csv" \
            python3 -m kbopt.bench.ncu_target mla_decode --out "$WORK/mix-launches.json" \
            --run "speculative:$MIX" | tail -2
    fi
    if [ -n "$SOURCE" ]; then
        # where each warp waits, per SASS instruction (PC sampling, one launch per version at
        # SOURCE_CONFIG): which barrier, mbarrier or wgmma wait holds a warpgroup up
        suffix=""
        [ "$SOURCE_CONFIG" != speculative ] && suffix="-$SOURCE_CONFIG"
        for v in ${SOURCE//,/ }; do
            left=$((DEADLINE - $(date +%s) - 5))
            [ "$left" -lt 30 ] && { echo "no time left for the source profile of $v"; break; }
            name="source-$v$suffix"
            step "ncu source counters: $SOURCE_CONFIG, $v (limit ${left}s)"
            timeout "$left" ncu --section SourceCounters --section WarpStateStats \
                --clock-control none --profile-from-start off --import-source no \
                -o "$WORK/$name" \
                python3 -m kbopt.bench.ncu_target mla_decode --out "$WORK/$name.launches.json" \
                --run "$SOURCE_CONFIG:$v" | tail -1
            ncu -i "$WORK/$name.ncu-rep" --page source --csv --print-source sass \
                > "$WORK/$name.csv" 2> "$WORK/$name.err"
            echo "$name.csv: $(wc -l < "$WORK/$name.csv") lines"
        done
    fi
    step "done (bench exit $rc)"
} 2>&1 | tee "$OUT/flashmla-session.log"
tar -czf "$OUT/flashmla-session.tgz" -C "$WORK" .
ls -l "$OUT"
