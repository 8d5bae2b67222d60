#!/bin/bash
# Does the catalog choose well, on the H200: `kbopt ablate` (catalog-guided vs random order vs
# grid, equal trials) and `kbopt cycle --designer catalog` runs, sent from the repository root
# through the device `run` tool, carrying .whl/ (kbopt's pure-Python dependencies and
# liger-kernel) and third_party/ (the foreign kernels' sources).
#
#   KBOPT_COMMIT=$(git rev-parse --short HEAD) STEPS=ablate ABLATE="..." bash scripts/gpu_proof.sh
#
# STEPS: bench, profile, ablate, cycle (comma-separated, run in that order).  BENCH /
# PROFILES / ABLATE / CYCLES: ';'-separated lines of arguments of `kbopt bench`, `kbopt
# profile` (with ncu when readable), `kbopt ablate` and `kbopt cycle` (a kernel or spec path
# first), run in order; ABLATE_PLAN=FILE reads the ablate lines from a file instead, one per
# line, `#` starting a comment (benchmarks/ablation-held-out.txt).  PROFILE_BUDGET_S: each
# profile's --budget-s (150).
# Every file the runs write or change (results, run records, new versions, devlogs, catalog
# evidence) is packed into $OUT/proof.tgz after each line, so a run stopped at its limit
# keeps what finished; the logs go to $OUT/proof.log.
set -u
OUT=${OUT:-/tmp/out}
STEPS=${STEPS:-ablate}
TRIALS=${TRIALS:-24}
# The GPU machine gets a copy of the tree without .git: the results name the catalog's commit
# only through this variable, so a run without it is refused rather than left unnamed.
: "${KBOPT_COMMIT:?set KBOPT_COMMIT=\$(git rev-parse --short HEAD), the commit whose catalog runs}"
export KBOPT_COMMIT
ABLATE=${ABLATE:-"mla_decode --from triton_v2 --config decode --budget-s 150;add_rmsnorm --from triton_v1 --config large --budget-s 130;benchmarks/foreign/sglang_mla_decode/spec.py --config decode --budget-s 150"}
CYCLES=${CYCLES:-}
if [[ -n "${ABLATE_PLAN:-}" ]]; then
    ABLATE=$(grep -v '^[[:space:]]*\(#\|$\)' "$ABLATE_PLAN" | paste -sd ';') || exit 2
fi
export KBOPT_BENCH_REP_MS=${KBOPT_BENCH_REP_MS:-50}
REPO=$PWD
mkdir -p "$OUT"
marker=$(mktemp)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$REPO PYTHONUNBUFFERED=1
KB="python3 -m kbopt --root $REPO"

pack() {  # everything written since the start, outside caches and the wheels
    (cd "$REPO" && find . -type f -newer "$marker" -not -path './.whl/*' -not -path '*/__pycache__/*' \
        -not -path './.kbopt/*' -not -path './.kbopt-cache/*' -not -path './third_party/*' -not -name '*.pyc' -print0 \
        | tar czf "$OUT/proof.tgz" --null -T -)
}

{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
table=()
if [[ ",$STEPS," == *",bench,"* ]]; then
    IFS=';' read -ra lines <<< "${BENCH:-}"
    for line in "${lines[@]}"; do
        echo "=== bench $line ($(date -u +%H:%M:%S))"
        start=$(date +%s)
        # shellcheck disable=SC2086
        timeout 300 $KB bench $line 2>&1 | tail -30
        table+=("bench $line: rc=${PIPESTATUS[0]} $(( $(date +%s) - start ))s")
        pack
    done
fi
if [[ ",$STEPS," == *",profile,"* ]]; then
    IFS=';' read -ra lines <<< "${PROFILES:-}"
    for line in "${lines[@]}"; do
        echo "=== profile $line ($(date -u +%H:%M:%S))"
        start=$(date +%s)
        # shellcheck disable=SC2086
        timeout 200 $KB profile $line --counters auto --budget-s "${PROFILE_BUDGET_S:-150}" 2>&1 | tail -40
        table+=("profile $line: rc=${PIPESTATUS[0]} $(( $(date +%s) - start ))s")
        pack
    done
fi
if [[ ",$STEPS," == *",ablate,"* ]]; then
    IFS=';' read -ra lines <<< "$ABLATE"
    for line in "${lines[@]}"; do
        echo "=== ablate $line ($(date -u +%H:%M:%S))"
        start=$(date +%s)
        # shellcheck disable=SC2086
        timeout 560 $KB ablate $line --trials "$TRIALS" --backend real --seed 0 2>&1 | tail -40
        table+=("ablate $line: rc=${PIPESTATUS[0]} $(( $(date +%s) - start ))s")
        pack
    done
fi
if [[ ",$STEPS," == *",cycle,"* ]]; then
    IFS=';' read -ra lines <<< "$CYCLES"
    for line in "${lines[@]}"; do
        echo "=== cycle $line ($(date -u +%H:%M:%S))"
        start=$(date +%s)
        # shellcheck disable=SC2086
        timeout "${CYCLE_TIMEOUT:-560}" $KB cycle $line --designer catalog --backend real 2>&1 | tail -60
        table+=("cycle $line: rc=${PIPESTATUS[0]} $(( $(date +%s) - start ))s")
        pack
    done
fi
echo "=== summary"
printf '%s\n' "${table[@]}"
} 2>&1 | tee "$OUT/proof.log"
pack
