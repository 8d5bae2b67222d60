#!/bin/bash
# One GPU session for the kernels on their specs, as sent to the H200 from the repository root
# (the device `run` tool). Carried: .whl/ (kbopt's pure-Python dependencies: pydantic,
# pydantic-core, annotated-types, typing-inspection, typing-extensions, whoosh-reloaded,
# cached-property; and liger-kernel; scripts/device_wheels.sh fills it) and, for the CuTe DSL versions,
# .whl-cutlass/ (nvidia-cutlass-dsl 4.3.5).
#
# STEPS (comma-separated, default all but tune): tests, bench, profile, external, mla, tune
#   tests     GPU tests of add_rmsnorm and of the real backend      -> pytest-gpu.log
#   bench     kbopt bench add_rmsnorm (every version + torch, torch.compile, Liger)
#                                                                     -> add_rmsnorm/<stamp>.json
#   profile   kbopt profile add_rmsnorm with ncu counters (PROFILE_VERSIONS at large)
#                                                                     -> profiles.json
#   external  a kernel outside the repository (kbopt init + kbopt kernel new in /tmp/userrepo),
#             named by the path of its spec, profiled with ncu from another folder
#                                                                     -> external.json
#   mla       kbopt bench mla_decode --graph on MLA_VERSIONS          -> mla_decode/<stamp>.json
#   tune      kbopt tune add_rmsnorm TUNE_VERSION at large and xlarge over TUNE_PARAMS
#                                                                     -> tune-<config>.json
# Everything printed also lands in session.log; a short table of each bench comes last.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
STEPS=${STEPS:-tests,bench,profile,external,mla}
REP_MS=${REP_MS:-200}
ADD_VERSIONS=${ADD_VERSIONS:-}
BENCH_FLAGS=${BENCH_FLAGS:-}  # e.g. --repeat: every version timed twice
PROFILE_VERSIONS=${PROFILE_VERSIONS:-triton_v1,triton_v6}
MLA_VERSIONS=${MLA_VERSIONS:-torch,triton_v7,cute_v7}
TUNE_VERSION=${TUNE_VERSION:-triton_v3}
TUNE_PARAMS=${TUNE_PARAMS:-num_warps=2,4,8,16 rows_per_program=1,2,4 evict=false,true}
REPO=$PWD

wheels=(.whl/*.whl)
[ -d .whl-cutlass ] && wheels+=(.whl-cutlass/*.whl)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "${wheels[@]}" || exit 1
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/python_packages:$REPO
export PYTHONUNBUFFERED=1 KBOPT_NCU_TIMEOUT_S=${KBOPT_NCU_TIMEOUT_S:-240}
KB="python3 -m kbopt"
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }
has() { [[ ",$STEPS," == *",$1,"* ]]; }

{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader

if has tests; then
    step "GPU tests"
    timeout 420 python3 -m pytest -q -m gpu -p no:cacheprovider \
        tests/kernels/test_add_rmsnorm.py tests/test_bench_real.py 2>&1 \
        | tee "$OUT/pytest-gpu.log" | tail -25
fi

if has bench; then
    step "kbopt bench add_rmsnorm"
    timeout 540 $KB --root "$REPO" bench add_rmsnorm ${ADD_VERSIONS:+--versions $ADD_VERSIONS} \
        --rep-ms "$REP_MS" $BENCH_FLAGS --out "$OUT/add_rmsnorm"
fi

if has profile; then
    step "kbopt profile add_rmsnorm (ncu): $PROFILE_VERSIONS"
    for v in ${PROFILE_VERSIONS//,/ }; do
        timeout 300 $KB --root "$REPO" profile add_rmsnorm "$v" --config large \
            --counters require --no-devlog --json > "/tmp/profile-$v.json"
        python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['profile'])" \
            "/tmp/profile-$v.json" | head -40
    done
    python3 - "$OUT/profiles.json" /tmp/profile-*.json <<'PY'
import json, sys
json.dump([json.load(open(p)) for p in sys.argv[2:]], open(sys.argv[1], "w"), indent=1)
PY
fi

if has external; then
    step "a kernel outside the repository, named by path"
    rm -rf /tmp/userrepo && mkdir -p /tmp/userrepo
    (cd /tmp/userrepo && $KB init . --json > /dev/null \
        && $KB kernel new scale_shift --dims rows,cols --trial large:rows=16384,cols=8192)
    (cd /tmp && timeout 300 $KB --root /tmp/userrepo profile \
        /tmp/userrepo/kernels/scale_shift/spec.py triton_v1 --config large \
        --counters require --json > "$OUT/external.json"; echo "exit $?")
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['profile'])" \
        "$OUT/external.json" | head -30
fi

if has mla; then
    step "kbopt bench mla_decode --graph: $MLA_VERSIONS"
    timeout 540 $KB --root "$REPO" bench mla_decode --versions "$MLA_VERSIONS" --graph \
        --rep-ms "$REP_MS" --out "$OUT/mla_decode"
fi
if has tune; then
    params=()
    for p in $TUNE_PARAMS; do params+=(--param "$p"); done
    for cfg in large xlarge; do
        step "kbopt tune add_rmsnorm $TUNE_VERSION --config $cfg: $TUNE_PARAMS"
        timeout 300 $KB --root "$REPO" tune add_rmsnorm "$TUNE_VERSION" --config "$cfg" \
            --manual num_warps=4 "${params[@]}" --budget-min 4 --out "$OUT/tune-$cfg.json"
    done
fi
step done
} 2>&1 | tee "$OUT/session.log"
