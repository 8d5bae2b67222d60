#!/bin/bash
# Check and time every foreign kernel (benchmarks/foreign/<name>/spec.py: kernels nobody on
# this project wrote) on the GPU machine, from the repository root (the device `run` tool).
#
# Before sending it, on this machine:
#   python scripts/fetch_third_party.py           # or: sglang --from-pypi, the tutorials with
#                                                 # --from-files/--from-mirror (see its docstring)
#   python scripts/fetch_third_party.py --list    # every source "present"
# and carry the git-ignored folders it needs: carry ["third_party", ".whl"], where .whl/
# holds kbopt's pure-Python dependencies and liger-kernel (scripts/device_wheels.sh).
#
# STEPS (comma-separated, default check,bench):
#   check    kbopt kernel check <spec> --json for each kernel   -> <kernel>-check.json
#   tests    the CPU/interpreter tests of the set                 -> pytest-foreign.log
#   bench    kbopt bench <spec> (every version and baseline, the spec's trial matrix)
#                                                                  -> <kernel>/<stamp>.json
#   profile  kbopt profile <spec> <PROFILE_VERSION> with ncu at each trial
#                                                                  -> profile-<kernel>-<trial>.json
# KERNELS picks a subset (comma-separated names); BENCH_FLAGS adds e.g. --graph or --repeat.
# Everything printed also lands in foreign-session.log.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
STEPS=${STEPS:-check,bench}
KERNELS=${KERNELS:-sglang_mla_decode,triton_matmul,triton_softmax,triton_layernorm,liger_rmsnorm,liger_swiglu,torch_attention_decode,liger_geglu,liger_layernorm,liger_cross_entropy,liger_rope,liger_group_norm,torch_sdpa_decode,torch_cross_entropy,liger_jsd,liger_dyt,liger_fused_add_rms_norm,liger_sparsemax,liger_kl_div,liger_poly_norm,liger_llama4_rope,liger_relu_squared,liger_tvd,liger_embedding,liger_grpo_loss,liger_moe_up_proj,liger_attn_res,liger_qwen2vl_mrope,liger_mm_int8int2,liger_neighborhood_attention}
REP_MS=${REP_MS:-200}
BENCH_FLAGS=${BENCH_FLAGS:-}
PROFILE_VERSION=${PROFILE_VERSION:-triton_v1}
REPO=$PWD

if [ ! -f third_party/MANIFEST.json ]; then
    echo "third_party/ was not carried: fetch it here first (scripts/fetch_third_party.py)" \
        "and send with carry [\"third_party\", \".whl\"]; the specs that need it will refuse to load"
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$REPO
export PYTHONUNBUFFERED=1 KBOPT_NCU_TIMEOUT_S=${KBOPT_NCU_TIMEOUT_S:-240}
KB="python3 -m kbopt"
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }
has() { [[ ",$STEPS," == *",$1,"* ]]; }
spec_of() { echo "$REPO/benchmarks/foreign/$1/spec.py"; }
trials_of() {  # the trial names of a spec, from kbopt kernel check --json
    $KB --root "$REPO" kernel check "$(spec_of "$1")" --json \
        | python3 -c "import json,sys; print(' '.join(t['name'] for t in json.load(sys.stdin)['spec']['trials']))"
}

{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
cat third_party/MANIFEST.json 2>/dev/null | python3 -c \
    "import json,sys; [print(k, v['ref'], v['verified']) for k, v in json.load(sys.stdin).items()]"

if has check; then
    for k in ${KERNELS//,/ }; do
        step "kbopt kernel check $k"
        $KB --root "$REPO" kernel check "$(spec_of "$k")" --json > "$OUT/$k-check.json"
        echo "exit $?"
    done
fi

if has tests; then
    step "CPU/interpreter tests of the foreign kernels"
    timeout 900 python3 -m pytest -q -p no:cacheprovider tests/test_foreign_kernels.py 2>&1 \
        | tee "$OUT/pytest-foreign.log" | tail -15
fi

if has bench; then
    for k in ${KERNELS//,/ }; do
        step "kbopt bench $k"
        timeout 540 $KB --root "$REPO" bench "$(spec_of "$k")" --rep-ms "$REP_MS" $BENCH_FLAGS \
            --out "$OUT/$k"
        echo "exit $?"
    done
fi

if has profile; then
    for k in ${KERNELS//,/ }; do
        v=$PROFILE_VERSION
        [[ "$k" == torch_* ]] && v=torch_v1  # torch's own kernels: one torch version
        for trial in $(trials_of "$k"); do
            step "kbopt profile $k $v --config $trial (ncu)"
            timeout 300 $KB --root "$REPO" profile "$(spec_of "$k")" "$v" --config "$trial" \
                --counters require --no-devlog --json > "$OUT/profile-$k-$trial.json"
            echo "exit $?"
        done
    done
fi
step done
} 2>&1 | tee "$OUT/foreign-session.log"
