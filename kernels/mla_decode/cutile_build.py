"""Build the cuTile MLA decode kernel ahead of time, on a machine without a GPU.

    python -m kernels.mla_decode.cutile_build [--out DIR]

Needs the ``cutile`` extra (``pip install -e '.[cutile]'``: cuda-tile 1.7.0 with tileiras,
nvvm and nvcc 13.4.92, all pinned: an unpinned install pulls 13.5 and breaks). Steps:

1. ``cuda.tile.compilation.export_kernel`` writes the TileIR bytecode of
   :func:`kernels.mla_decode.cutile_v1.tile_kernel` for :func:`cutile_v1.signatures`.
2. ``tileiras --gpu-name sm_90 -O3`` compiles it into ``<name>.tileiras.cubin``. tileiras calls
   the ``ptxas`` next to its own executable, so it runs from a temporary copy of its ``bin``
   whose ``ptxas`` is a wrapper that keeps the PTX (``<name>.sm_90a.ptx``) and the ptxas
   command line (``tileiras`` adds ``--enable-extended-smem=true`` and ``--nv-host=...``).
3. ptxas 13.4 assembles that PTX again without ``--nv-host``: ``<name>.sm_90a.cubin``, a plain
   CUDA cubin.
4. ``<name>.jit.ptx``: the PTX lowered to ISA 9.0 (``.language``, ``.loc``, ``.file`` and the
   ``next knob`` pragmas removed) for the JIT of a CUDA 13.0 driver; the build assembles it
   once with ptxas 13.4 to prove it still parses.
5. Checks: the PTX's ``.param`` list equals :func:`cutile_v1.param_layout` (no hidden TMA
   descriptors), ``.reqntid`` gives the block size; writes ``<name>.json`` (the manifest).

The output goes to ``kernels/mla_decode/build/cutile/`` (git-ignored) unless ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from kernels.mla_decode import cutile_v1

PINNED = {
    "cuda-tile": "1.7.0",
    "nvidia-cuda-tileiras": "13.4.92",
    "nvidia-nvvm": "13.4.92",
    "nvidia-cuda-nvcc": "13.4.92",
}
INSTALL_HINT = "pip install " + " ".join(f"'{k}=={v}'" for k, v in PINNED.items())
GPU_CODE = "sm_90"


class ToolchainMissing(RuntimeError):
    pass


def toolchain() -> dict[str, Any]:
    """Versions and the tileiras/ptxas paths; :class:`ToolchainMissing` (one line) if absent."""
    versions: dict[str, str] = {}
    for pkg in PINNED:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            raise ToolchainMissing(
                f"cutile_build: {pkg} is not installed; install the pinned cuTile toolchain: "
                f"{INSTALL_HINT}  (or pip install -e '.[cutile]')"
            ) from None
    try:
        import cuda.tile  # noqa: F401
        import nvidia.cu13 as cu13
    except ImportError as exc:
        raise ToolchainMissing(
            f"cutile_build: cannot import cuda.tile / nvidia.cu13 ({exc}); {INSTALL_HINT}"
        ) from None
    bin_dir = Path(cu13.__path__[0]) / "bin"
    tools = {t: bin_dir / t for t in ("tileiras", "ptxas")}
    for t, p in tools.items():
        if not os.access(p, os.X_OK):
            raise ToolchainMissing(f"cutile_build: {t} not found at {p}; {INSTALL_HINT}")
    return {"versions": versions, "bin_dir": bin_dir, **tools}


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        raise RuntimeError(
            f"cutile_build: {' '.join(map(str, cmd))} failed ({res.returncode}):\n"
            f"{res.stdout}{res.stderr}"
        )
    return res


def ptx_params(ptx: str, entry: str) -> list[tuple[str, bool]]:
    """``(type, hidden)`` of each ``.param`` of ``entry``, in order."""
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        raise RuntimeError(f"cutile_build: no .entry {entry} in the PTX")
    out = []
    for line in m.group(1).split(","):
        line = line.strip()
        if not line:
            continue
        hidden = line.startswith(".hidden")
        ty = re.search(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)", line)
        out.append((ty.group(1) if ty else "?", hidden))
    return out


def jit_ptx(ptx: str) -> str:
    """Lower tileiras's PTX (ISA 9.4) to ISA 9.0 for the JIT of a CUDA 13.0 driver."""
    out = re.sub(r"^\.version\s+\d+\.\d+", ".version 9.0", ptx, count=1, flags=re.M)
    drop = re.compile(r'^\s*(\.language\b|\.loc\b|\.file\b|\.pragma\s+"next knob)')
    return "".join(line for line in out.splitlines(True) if not drop.match(line))


def cubin_resources(data: bytes) -> dict[str, int]:
    """Registers, stack frame and static shared memory from a cubin's ELF sections."""
    e_shoff = struct.unpack_from("<Q", data, 0x28)[0]
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [
        struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)
    ]
    strtab = secs[e_shstrndx][4]

    def name(off: int) -> str:
        end = data.index(b"\0", strtab + off)
        return data[strtab + off : end].decode()

    out: dict[str, int] = {}
    for sec in secs:
        n = name(sec[0])
        if n.startswith(".nv.shared.") and not n.startswith(".nv.shared.reserved"):
            out["static_smem_bytes"] = out.get("static_smem_bytes", 0) + sec[5]
        if n != ".nv.info":
            continue
        blob, p = data[sec[4] : sec[4] + sec[5]], 0
        while p + 4 <= len(blob):
            fmt, attr = blob[p], blob[p + 1]
            if fmt == 0x04:  # EIFMT_SVAL: u16 size, payload
                size = struct.unpack_from("<H", blob, p + 2)[0]
                if attr == 0x2F:  # EIATTR_REGCOUNT (function, count)
                    out["registers"] = struct.unpack_from("<II", blob, p + 4)[1]
                elif attr == 0x11:  # EIATTR_FRAME_SIZE (function, bytes)
                    out["stack_frame_bytes"] = struct.unpack_from("<II", blob, p + 4)[1]
                p += 4 + size
            elif fmt in (0x02, 0x03):
                p += 4
            elif fmt == 0x01:
                p += 2
            else:
                break
    return out


def _ptxas_wrapper(real: Path, keep: Path) -> str:
    return (
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in *.ptx) cp "$a" "' + str(keep) + '.ptx";; esac; done\n'
        'printf "%s\\n" "$*" > "' + str(keep) + '.args"\n'
        'exec "' + str(real) + '" "$@"\n'
    )


def build(out_dir: Path, command: str) -> dict[str, Any]:
    tc = toolchain()
    from cuda.tile.compilation import export_kernel

    out_dir.mkdir(parents=True, exist_ok=True)
    name = cutile_v1.KERNEL_NAME
    bc = out_dir / f"{name}.tileirbc"
    export_kernel(
        cutile_v1.tile_kernel(), cutile_v1.signatures(), bc, output_format="tileir_bytecode"
    )

    with tempfile.TemporaryDirectory(prefix="cutile_build_") as tmp_s:
        tmp = Path(tmp_s)
        (tmp / "bin").mkdir()
        for sub in ("nvvm", "lib"):  # what tileiras finds relative to its own directory
            src = tc["bin_dir"].parent / sub
            if src.exists():
                (tmp / sub).symlink_to(src.resolve())
        tileiras = tmp / "bin" / "tileiras"
        shutil.copy2(tc["tileiras"], tileiras)
        wrapper = tmp / "bin" / "ptxas"
        keep = tmp / "captured"
        wrapper.write_text(_ptxas_wrapper(tc["ptxas"], keep))
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        cubin = out_dir / f"{name}.tileiras.cubin"
        tileiras_cmd = [str(tileiras), "--gpu-name", GPU_CODE, "-O3", str(bc), "-o", str(cubin)]
        _run(tileiras_cmd)
        if not Path(f"{keep}.ptx").is_file():
            raise RuntimeError("cutile_build: tileiras did not call ptxas; no PTX captured")
        ptx = Path(f"{keep}.ptx").read_text()
        ptxas_args = Path(f"{keep}.args").read_text().split()

    (out_dir / f"{name}.sm_90a.ptx").write_text(ptx)
    entry = re.search(r"\.visible\s+\.entry\s+(\w+)", ptx)
    if not entry:
        raise RuntimeError("cutile_build: no .entry in the PTX")
    entry_name = entry.group(1)
    target = re.search(r"^\.target\s+(\S+)", ptx, re.M)
    arch = target.group(1) if target else "sm_90a"

    # the kernel ABI: exactly the parameters cutile_v1 packs, no hidden (TMA descriptor) ones
    want = [(p["type"], False) for p in cutile_v1.param_layout()]
    got = [("u32" if t in ("u32", "b32", "s32") else t, h) for t, h in ptx_params(ptx, entry_name)]
    if got != want:
        raise RuntimeError(f"cutile_build: PTX parameters {got} != cutile_v1.param_layout() {want}")
    reqntid = re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", ptx)
    if not reqntid or any(g not in (None, "1") for g in reqntid.groups()[1:]):
        raise RuntimeError("cutile_build: no one-dimensional .reqntid in the PTX")
    block = int(reqntid.group(1))

    # plain cubin: tileiras's ptxas options minus its host-callback object
    plain = out_dir / f"{name}.sm_90a.cubin"
    src_ptx = out_dir / f"{name}.sm_90a.ptx"
    opts = [a for a in ptxas_args if a.startswith("--enable-extended-smem")]
    _run(
        [str(tc["ptxas"]), "-arch", arch, "--opt-level", "3", *opts, str(src_ptx), "-o", str(plain)]
    )

    jit = out_dir / f"{name}.jit.ptx"
    jit.write_text(jit_ptx(ptx))
    with tempfile.TemporaryDirectory() as tmp_s:  # the lowered PTX must still assemble
        _run([str(tc["ptxas"]), "-arch", arch, str(jit), "-o", str(Path(tmp_s) / "jit.cubin")])

    res = cubin_resources(plain.read_bytes())
    manifest = {
        "version": cutile_v1.VERSION,
        "entry": entry_name,
        "block": block,
        "grid": "(ceil(s*h / BLOCK_M), b, 512 / D_OUT)",
        "dynamic_smem_bytes": 0,
        "tiles": {
            "BLOCK_M": cutile_v1.BLOCK_M,
            "BLOCK_N": cutile_v1.BLOCK_N,
            "D_OUT": cutile_v1.D_OUT,
        },
        "dtype": "bf16 q/kv/out, int32 lens, f32 qk_scale = sm_scale * log2(e)",
        "params": cutile_v1.param_layout(),
        "param_bytes": cutile_v1.param_layout()[-1]["offset"] + 4,
        "images": {"tileiras": cubin.name, "sm_90a": plain.name, "ptx": jit.name},
        "ptx": src_ptx.name,
        "bytecode": bc.name,
        "target": arch,
        "gpu_code": GPU_CODE,
        "ptxas_args_by_tileiras": ptxas_args,
        "resources": res,
        "instructions": {
            k: len(re.findall(pat, ptx))
            for k, pat in {
                "wgmma": r"wgmma\.mma_async",
                "mma.sync": r"\bmma\.sync",
                "tma": r"cp\.async\.bulk\.tensor",
                "ld.global": r"\bld\.global",
            }.items()
        },
        "toolchain": tc["versions"],
        "python": sys.version.split()[0],
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
    }
    (out_dir / cutile_v1.MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m kernels.mla_decode.cutile_build")
    p.add_argument("--out", type=Path, default=cutile_v1.BUILD_DIR)
    args = p.parse_args(argv)
    try:
        man = build(args.out, " ".join(["python -m kernels.mla_decode.cutile_build", *argv]))
    except ToolchainMissing as exc:
        print(str(exc), file=sys.stderr)
        return 2
    r = man["resources"]
    print(
        f"[cutile_build] {args.out}/{cutile_v1.MANIFEST_NAME}: entry {man['entry']}, "
        f"block {man['block']}, {man['param_bytes']} B of parameters, "
        f"{r.get('registers')} registers, {r.get('stack_frame_bytes')} B stack frame, "
        f"{r.get('static_smem_bytes')} B static smem, {man['instructions']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
