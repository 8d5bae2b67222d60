#!/bin/bash
# Repack a binary wheel as one .tar.xz of its installed files, to fit the device carry limit.
#
# The device machine takes at most 64 MiB of working tree per call (tracked files and carried
# paths together).  The CuTe DSL wheel (nvidia-cutlass-dsl 4.3.5, cp312) is 56 MiB as a zip
# (deflate); the same files in one xz stream are about 40 MB, which leaves room for the
# repository, .whl/ and third_party/flashmla-src.tgz in the same call.  Unpacking the archive
# into a --target folder is what `pip install --no-deps --target` does for this wheel (no
# .data folder, no entry points: Root-Is-Purelib false, files under nvidia_cutlass_dsl/ and
# its .dist-info, one .pth file).
#
#   scripts/pack_wheel_xz.sh WHEEL [OUT_DIR]        # default OUT_DIR: .whl-cutlass-xz
#   # on the device machine:
#   mkdir -p /tmp/site && tar -xJf .whl-cutlass-xz/*.tar.xz -C /tmp/site
#
# Get the wheel with pip (the device README's platform flags), e.g.:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux_2_28_x86_64 -d /tmp/w nvidia-cutlass-dsl==4.3.5
# Compressing takes several minutes (xz -9e on ~150 MB); add OUT_DIR to .git/info/exclude.
set -euo pipefail
wheel=${1:?usage: scripts/pack_wheel_xz.sh WHEEL [OUT_DIR]}
out=${2:-.whl-cutlass-xz}
[ -f "$wheel" ] || { echo "pack_wheel_xz: no such wheel: $wheel" >&2; exit 2; }
case "$wheel" in *.whl) ;; *) echo "pack_wheel_xz: not a .whl: $wheel" >&2; exit 2 ;; esac
if unzip -Z1 "$wheel" | grep -q '\.data/'; then
    echo "pack_wheel_xz: $wheel has a .data folder; unpacking would not equal pip install" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unzip -q "$wheel" -d "$work/files"
mkdir -p "$out"
name=$(basename "$wheel" .whl)
tar -cf - -C "$work/files" . | xz -9e -T2 > "$out/$name.tar.xz.part"
mv "$out/$name.tar.xz.part" "$out/$name.tar.xz"
ls -l "$out/$name.tar.xz"
