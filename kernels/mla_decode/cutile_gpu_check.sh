#!/bin/bash
# cutile_v1 on the H200, from the repository root, with kernels/mla_decode/build/cutile/ carried
# over (built on a CPU machine by `python -m kernels.mla_decode.cutile_build`; cuda-tile is not
# needed here). About 2-3 minutes of GPU time. Writes to $OUT (default /tmp/out):
#   cutile-images.log  which of the three images loads and launches (one process each)
#   pytest-cutile.log  the gpu tests (bf16 vs the fp32 reference, ragged, s=16, NaN-poisoned)
#   cute_<stamp>.json  cute_bench rows for torch and cutile_v1 (decode + speculative)
# IMAGES (default "tileiras sm_90a ptx") and REP_MS (default 200) shorten the run.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
# .whl/ (when carried): kbopt's pure-Python dependencies (pydantic...), which cute_bench needs
# through kbopt's benchmark suite
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=${PYTHONPATH:-/tmp/site:/tmp/site/nvidia_cutlass_dsl/python_packages:$PWD}
export PYTHONUNBUFFERED=1 KBOPT_CUTILE_REQUIRE=1
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ls -l kernels/mla_decode/build/cutile/ || { echo "no kernels/mla_decode/build/cutile/"; exit 1; }

step "images: load + one launch each (separate processes: a failed launch can poison a context)"
for img in ${IMAGES:-tileiras sm_90a ptx}; do
    KBOPT_CUTILE_IMAGE=$img timeout 60 python3 - "$img" <<'PY' 2>&1 | tail -3
import sys, time, torch
from kernels.mla_decode import cutile_v1, reference as ref
q, kv, lens, sc = ref.make_inputs(3, 2, 777, dtype=torch.bfloat16, device="cuda", ragged=True, seed=0)
try:
    t0 = time.perf_counter()
    out = cutile_v1.mla_decode(q, kv, lens, sc)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    err = ref.rel_error(out, ref.reference(q, kv, lens, sc))
    print(f"[{sys.argv[1]}] OK rel_err={err:.3g} first call {dt*1e3:.0f} ms {cutile_v1.LAST_INFO}")
except Exception as exc:
    print(f"[{sys.argv[1]}] FAIL {type(exc).__name__}: {exc}")
PY
done 2>&1 | tee "$OUT/cutile-images.log"

step "GPU correctness: tests/kernels/test_mla_decode_cutile.py"
timeout 240 python3 -m pytest -v -s -m gpu -p no:cacheprovider \
    tests/kernels/test_mla_decode_cutile.py 2>&1 | tee "$OUT/pytest-cutile.log" | tail -12

step "timing: torch vs cutile_v1"
timeout 300 python3 -m kernels.mla_decode.cute_bench --versions torch,cutile_v1 --config all \
    --rep-ms "${REP_MS:-200}" --out "$OUT" 2>&1 | tail -12
step done
