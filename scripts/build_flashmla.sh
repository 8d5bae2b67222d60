#!/bin/bash
# Build FlashMLA's dense sm90 decode on the GPU machine from third_party/flashmla-src.tgz.
#
#   FLASHMLA_PATH=$(scripts/build_flashmla.sh) || echo "no FlashMLA"   # from the repository root
#   export KBOPT_FLASHMLA_PATH=$FLASHMLA_PATH  # kernels/mla_decode/flashmla_baseline.py reads it
#
# The archive (FlashMLA 9241ae3 + CUTLASS 147f5673d headers, never committed) is written by
# `python scripts/fetch_third_party.py flashmla [--from-mirror DIR]` and carried to the machine
# in third_party/.  It is unpacked into $FLASHMLA_BUILD_DIR (default /tmp/flashmla) and built in
# place: the one line on stdout is the folder where `import flash_mla` works; everything else
# (nvcc's output included) goes to stderr and to $FLASHMLA_BUILD_LOG.
#
# What is built: only the dense decode and the two small kernels it launches (scheduling
# metadata, split combine), for sm_90a, behind a Python binding of that one function
# (FlashMLA's own csrc/api/api.cpp binds sparse and SM100 paths too).  FLASHMLA_FULL=1 runs
# FlashMLA's own setup.py instead (every sm90 kernel: about two minutes on 16 cores); if the
# dense-only build fails, the full build is tried with the time that is left.
# CUDA 13 keeps the CCCL headers (cuda/std/...) in include/cccl: the host compiler is pointed
# there with CPLUS_INCLUDE_PATH, or api.cpp fails with `cuda/std/utility: No such file`.
#
# Variables: FLASHMLA_ARCHIVE (third_party/flashmla-src.tgz), FLASHMLA_BUILD_DIR (/tmp/flashmla),
# FLASHMLA_BUILD_TIMEOUT_S (240, both attempts together), FLASHMLA_BUILD_LOG
# (<build dir>-build.log), MAX_JOBS (16), NVCC_THREADS (1), FLASHMLA_FULL (0).
# Exit status: 0 built and importable; 1 the build or the import failed (the log's tail is
# printed); 2 bad input (no archive, no nvcc).
set -u
ARCHIVE=${FLASHMLA_ARCHIVE:-third_party/flashmla-src.tgz}
DIR=${FLASHMLA_BUILD_DIR:-/tmp/flashmla}
LIMIT=${FLASHMLA_BUILD_TIMEOUT_S:-240}
LOG=${FLASHMLA_BUILD_LOG:-$DIR-build.log}
PY=${PYTHON:-python3}
export MAX_JOBS=${MAX_JOBS:-16} NVCC_THREADS=${NVCC_THREADS:-1}
export FLASH_MLA_DISABLE_SM100=1
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CPLUS_INCLUDE_PATH=$CUDA_HOME/include/cccl${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}

say() { echo "[build_flashmla] $*" >&2; }
case "$DIR" in /tmp/?* | /root/?* | "$HOME"/?*) ;; *) say "FLASHMLA_BUILD_DIR=$DIR: choose a folder under /tmp"; exit 2 ;; esac
[ -f "$ARCHIVE" ] || {
    say "no archive at $ARCHIVE: run 'python scripts/fetch_third_party.py flashmla' and carry third_party"
    exit 2
}
command -v nvcc > /dev/null || [ -x "$CUDA_HOME/bin/nvcc" ] || { say "no nvcc (CUDA_HOME=$CUDA_HOME)"; exit 2; }

start=$(date +%s)
rm -rf "$DIR"
mkdir -p "$(dirname "$DIR")"
unpack=$(mktemp -d "$(dirname "$DIR")/.flashmla-unpack-XXXXXX")
tar -xzf "$ARCHIVE" -C "$unpack" && [ -f "$unpack/flashmla/setup.py" ] || {
    say "cannot unpack $ARCHIVE (or it holds no flashmla/setup.py)"
    exit 2
}
mv "$unpack/flashmla" "$DIR" && rmdir "$unpack"
say "unpacked $ARCHIVE into $DIR ($(du -sh "$DIR" | cut -f1)); log: $LOG"

# The binding of the dense decode alone (our file, written into the unpacked tree).
cat > "$DIR/csrc/api/kbopt_dense_api.cpp" << 'CPP'
// Written by kbopt's scripts/build_flashmla.sh: FlashMLA's binding reduced to the dense decode.
#include <pybind11/pybind11.h>

#include "dense_decode.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "FlashMLA, dense sm90 decode only (kbopt scripts/build_flashmla.sh)";
    m.def("dense_decode_fwd", &dense_attn_decode_interface);
}
CPP
# FlashMLA's setup.py with its source list cut to the dense decode; the flags are its own.
cat > "$DIR/kbopt_dense_setup.py" << 'PY'
import os
from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = Path(__file__).resolve().parent
cxx = ["-O3", "-std=c++20", "-DNDEBUG", "-Wno-deprecated-declarations"]
nvcc = [
    "-O3", "-std=c++20", "-DNDEBUG", "-D_USE_MATH_DEFINES", "-Wno-deprecated-declarations",
    "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math",
    "--ptxas-options=-v,--register-usage-level=10,--warn-on-spills,--warn-on-local-memory-usage,"
    "--warn-on-double-precision-use",
    "-lineinfo", "-gencode", "arch=compute_90a,code=sm_90a",
    "--threads", os.environ.get("NVCC_THREADS", "1"),
]
setup(
    name="flash_mla",
    version="1.0.0+9241ae3.kbopt_dense",
    packages=["flash_mla"],
    ext_modules=[
        CUDAExtension(
            name="flash_mla.cuda",
            sources=[
                "csrc/api/kbopt_dense_api.cpp",
                "csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu",
                "csrc/smxx/decode/combine/combine.cu",
                "csrc/sm90/decode/dense/instantiations/bf16.cu",
                "csrc/sm90/decode/dense/instantiations/fp16.cu",
            ],
            extra_compile_args={"cxx": cxx, "nvcc": nvcc},
            include_dirs=[
                here / "csrc",
                here / "csrc" / "kerutils" / "include",
                here / "csrc" / "sm90",
                here / "csrc" / "cutlass" / "include",
                here / "csrc" / "cutlass" / "tools" / "util" / "include",
            ],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
PY

importable() {
    (cd / && PYTHONPATH="$DIR${PYTHONPATH:+:$PYTHONPATH}" "$PY" -c \
        'import flash_mla, flash_mla.cuda as c; assert hasattr(c, "dense_decode_fwd"); print(flash_mla.__file__)') \
        >> "$LOG" 2>&1
}

attempt() {  # attempt NAME SETUP_SCRIPT
    local left=$((LIMIT - ($(date +%s) - start)))
    if [ "$left" -lt 30 ]; then
        say "$1 build: not started, only ${left}s of the ${LIMIT}s limit left"
        return 1
    fi
    say "$1 build: $2 build_ext --inplace (MAX_JOBS=$MAX_JOBS NVCC_THREADS=$NVCC_THREADS, limit ${left}s)"
    local t0
    t0=$(date +%s)
    (cd "$DIR" && timeout "$left" "$PY" "$2" build_ext --inplace) >> "$LOG" 2>&1
    local rc=$?
    if [ "$rc" -eq 124 ]; then
        say "$1 build: FAILED, stopped at the time limit (${left}s); FLASHMLA_BUILD_TIMEOUT_S raises it"
    elif [ "$rc" -ne 0 ]; then
        say "$1 build: FAILED (exit $rc after $(($(date +%s) - t0))s); the log's last lines:"
        grep -E "error|Error|No such file" "$LOG" | tail -8 >&2
        tail -5 "$LOG" >&2
    elif importable; then
        say "$1 build: OK in $(($(date +%s) - t0))s ($(du -sh "$DIR"/flash_mla/cuda*.so | cut -f1))"
        return 0
    else
        say "$1 build: built, but 'import flash_mla.cuda' failed:"
        tail -8 "$LOG" >&2
    fi
    return 1
}

: > "$LOG"
if [ "${FLASHMLA_FULL:-0}" != 1 ] && attempt dense-only kbopt_dense_setup.py; then
    echo "$DIR"
    exit 0
fi
if attempt "full (FlashMLA's setup.py)" setup.py; then
    echo "$DIR"
    exit 0
fi
say "FlashMLA is not available: the benchmark runs without it (see $LOG)"
exit 1
