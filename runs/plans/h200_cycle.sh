#!/bin/bash
# The H200 run of `kbopt cycle mla_decode` (issue 5, deliverable 6), as sent to the device.
# Run from the repository root with the kbopt wheels in .whl-cycle/ (pydantic, pydantic-core,
# annotated-types, typing-inspection, python-frontmatter, whoosh-reloaded, cached-property:
# the versions pinned in pyproject.toml); $OUT receives cycle.tgz and the log.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl-cycle/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
export KBOPT_BENCH_REP_MS=${KBOPT_BENCH_REP_MS:-50} KBOPT_NCU_TIMEOUT_S=${KBOPT_NCU_TIMEOUT_S:-60}
RUN_ID=${RUN_ID:-h200-mla_decode-ladder}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
sha256sum kernels/mla_decode/*.py > /tmp/kernels.before
timeout "${CYCLE_TIMEOUT_S:-240}" python3 -m kbopt cycle mla_decode \
    --target 'pct_of_floor>=50' --from triton_v1 \
    --designer scripted:runs/plans/mla_decode_ladder.json --max-iterations 8 \
    --run-id "$RUN_ID" --backend real --counters baseline
echo "cycle exit status $?"
# Counters for the version the cycle ended on (the baseline's were read in PROFILE).
FINAL=$(python3 -c "import json; print(json.load(open('runs/$RUN_ID/record.json'))['current_version'])")
timeout 60 python3 -m kbopt profile mla_decode "$FINAL" --config decode --counters auto \
    > "runs/$RUN_ID/profile-final-decode.md"
echo "final profile exit status $?"
# W3 tuning helper, manual tiles only: how triton_v7 moves with the KV tile (its two neighbours).
timeout 45 python3 -m kbopt tune mla_decode triton_v7 --config decode \
    --manual block_n=32,num_stages=3 --manual block_n=64,num_stages=2 --budget-min 1 \
    --out "runs/$RUN_ID/tune-triton_v7-decode.json"
echo "tune exit status $?"
sha256sum kernels/mla_decode/*.py > /tmp/kernels.after
diff /tmp/kernels.before /tmp/kernels.after && echo "kernel files: identical to the ones sent"
tar czf "$OUT/cycle.tgz" --exclude="runs/$RUN_ID/backups" "runs/$RUN_ID" docs/kernels \
    docs/knowledge catalog
