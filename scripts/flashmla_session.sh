#!/bin/bash
# One GPU call: build FlashMLA's dense sm90 decode and time it side by side with plain torch,
# SGLang's Triton kernel and our best MLA decode versions, in one `kbopt bench mla_decode` run
# (one results file, one set of measured ceilings) at decode, speculative and FlashMLA's own
# headline shape b=128, s=2, t=4096 (given as dims: it is not one of the spec's trials).
#
# Run from the repository root on the GPU machine (the device `run` tool), carrying:
#   .whl             kbopt's pure-Python dependencies (pydantic, frontmatter, whoosh...)
#   .whl-cutlass-xz  nvidia-cutlass-dsl 4.3.5 repacked by scripts/pack_wheel_xz.sh (~40 MB;
#                    the 56 MiB wheel in .whl-cutlass/ is used instead when no .tar.xz is there)
#   third_party      flashmla-src.tgz (scripts/fetch_third_party.py flashmla) and the SGLang copy
# What comes back in $OUT (2 files):
#   flashmla-session.log   everything printed (the bench's table last)
#   flashmla-session.tgz   mla_decode/<stamp>-<device>.json (the results rows: copy it to
#                          kernels/mla_decode/results/), flashmla-build.log (nvcc's output)
# Variables: VERSIONS (ours and torch; flashmla and sglang are added when present), REP_MS
# (200), SESSION_S (460: the whole script's budget, so the call's 480 s limit is never hit),
# BUILD_S (180: FlashMLA's build, both attempts).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
REPO=$PWD
VERSIONS=${VERSIONS:-torch,triton_v7,cute_v7,cute_v8,cute_v9}
REP_MS=${REP_MS:-200}
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

    left=$((DEADLINE - $(date +%s) - 10))
    step "kbopt bench mla_decode: $VERSIONS (limit ${left}s)"
    timeout "$left" python3 -m kbopt --root "$REPO" bench mla_decode --versions "$VERSIONS" \
        --config decode --config speculative --config b=128,s=2,t=4096 \
        --graph --rep-ms "$REP_MS" --out "$WORK/mla_decode"
    rc=$?
    [ "$rc" -eq 124 ] && echo "the bench was stopped at its time limit: no rows were written"
    step "done (bench exit $rc)"
} 2>&1 | tee "$OUT/flashmla-session.log"
tar -czf "$OUT/flashmla-session.tgz" -C "$WORK" .
ls -l "$OUT"
