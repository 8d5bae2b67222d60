#!/bin/bash
# Fill .whl/ (git-ignored) with the wheels the GPU machine installs kbopt from: kbopt's
# pure-Python dependencies and liger-kernel, at the versions this checkout's .venv holds, for
# the GPU machine's Python 3.12 on x86-64 Linux (its torch, triton and numpy are its own).
# The GPU scripts (gpu_profiles.sh, gpu_proof.sh, foreign_gpu.sh, gpu_session.sh) install
# them with `pip install --no-index --target /tmp/site .whl/*.whl`; send with carry [".whl"].
#
#   make setup && bash scripts/device_wheels.sh        # about 4 MB
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "device_wheels: no .venv here; run make setup first" >&2; exit 2; }
pins=$(.venv/bin/python - <<'PY'
from importlib.metadata import version
names = ["pydantic", "pydantic-core", "annotated-types", "typing-inspection",
         "typing-extensions", "whoosh-reloaded", "cached-property", "liger-kernel"]
print(" ".join(f"{n}=={version(n)}" for n in names))
PY
)
mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d .whl $pins
ls -1 .whl
