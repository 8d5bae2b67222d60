#!/bin/bash
# Does the catalog choose well, on the H200: `kbopt ablate` (catalog-guided vs random order vs
# grid, equal trials) and `kbopt cycle --designer catalog` runs, sent from the repository root
# through the device `run` tool, carrying .whl/ (kbopt's pure-Python dependencies and
# liger-kernel: scripts/device_wheels.sh) and third_party/ (the foreign kernels' sources).
#
#   KBOPT_COMMIT=$(git rev-parse --short HEAD) STEPS=ablate ABLATE="..." bash scripts/gpu_proof.sh
#
# STEPS: bench, profile, ablate, cycle (comma-separated, run in that order).  BENCH /
# PROFILES / ABLATE / CYCLES: ';'-separated lines of arguments of `kbopt bench`, `kbopt
# profile` (with ncu when readable), `kbopt ablate` and `kbopt cycle` (a kernel or spec path
# first; a new cycle also needs --from and --target, e.g. CYCLES="benchmarks/foreign/
# liger_mhc_post_res/spec.py --from triton_v1 --target pct_of_floor>=60 --configs
# tokens=4096,hc=4,c=4096 --max-iterations 4 --run-id h200-catalog-liger_mhc_post_res"),
# run in order; ABLATE_PLAN=FILE reads the ablate lines from a file instead, one per line,
# `#` starting a comment (benchmarks/ablation-held-out.txt).  PROFILE_BUDGET_S: each
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

# run_step STEP LINES LIMIT_S KEEP [ARGS...]: `kbopt STEP <line> ARGS...` for each
# ';'-separated line of LINES when STEPS names STEP, under LIMIT_S seconds each, printing the
# last KEEP lines of each, its exit status and time going to the summary table.
run_step() {
    local step=$1 text=$2 limit=$3 keep=$4 line start
    shift 4
    [[ ",$STEPS," == *",$step,"* ]] || return 0
    IFS=';' read -ra lines <<< "$text"
    for line in "${lines[@]}"; do
        echo "=== $step $line ($(date -u +%H:%M:%S))"
        start=$(date +%s)
        # shellcheck disable=SC2086
        timeout "$limit" $KB "$step" $line "$@" 2>&1 | tail -"$keep"
        table+=("$step $line: rc=${PIPESTATUS[0]} $(( $(date +%s) - start ))s")
        pack
    done
}

{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
table=()
run_step bench "${BENCH:-}" 300 30
run_step profile "${PROFILES:-}" 200 40 --counters auto --budget-s "${PROFILE_BUDGET_S:-150}"
run_step ablate "$ABLATE" 560 40 --trials "$TRIALS" --backend real --seed 0
run_step cycle "$CYCLES" "${CYCLE_TIMEOUT:-560}" 60 --designer catalog --backend real
echo "=== summary"
printf '%s\n' "${table[@]}"
} 2>&1 | tee "$OUT/proof.log"
pack
