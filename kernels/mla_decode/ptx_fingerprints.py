"""PTX fingerprints of the CuTe DSL versions: the kernels CI compiles are the ones measured.

    python -m kernels.mla_decode.ptx_fingerprints --check     # CI: recompile, compare, exit 1
    python -m kernels.mla_decode.ptx_fingerprints --write     # after a deliberate kernel change
    python -m kernels.mla_decode.ptx_fingerprints --check --versions cute_v7,cute_v8 --json
    python -m kernels.mla_decode.ptx_fingerprints --check --at 0dcfe9c  # the code at a commit

Every ``cute_v*`` version is compiled for sm_90a on the CPU (CuTe DSL writes the PTX before it
needs a GPU, see :func:`kernels.mla_decode.cute_common.compile_ptx`) with bf16 inputs, once per
output dtype its launches use: ``float32`` (split-KV partials, e.g. decode at b=32) and
``bfloat16`` (one split, the kernel writes the output, e.g. speculative at b=32). The
sha256 of each normalised PTX goes to ``ptx_fingerprints.json`` with the nvidia-cutlass-dsl
version that made it; the GPU benchmark records the same hash of the PTX it actually launched
(``kernel_ptx_sha256`` in its rows), so a results row can be matched to a fingerprint.

Normalisation (:func:`normalise`): CuTe DSL 4.3.5 writes byte-identical PTX for identical
compiles -- twice in one process, in two processes, from two checkouts in different folders,
with different temporary folders -- so nothing is dropped from a default compile. Two things
are removed because they depend on where or how the PTX was obtained, not on the code: ``.file``
directives (present only with line information, ``CUTE_DSL_LINEINFO=1``; they hold the
absolute path of the source file, the one line that differed between two checkouts) and the
NUL byte and blank space after the last line (the end of CuTe DSL's PTX dump). The NVVM banner
comments (compiler build, CUDA release) are kept: they change only with the toolchain, and a
toolchain change is a change to the measured kernel.

``--at REV`` compiles the versions as they were at git revision REV (for example the commit
that added a results file) and compares them with the current file: the check that today's
fingerprints are those of the code that was measured then.

A version whose PTX changed is named with the output dtypes affected; the fix is to re-measure
the version on the GPU and then ``--write``, or to undo the change.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FINGERPRINTS = HERE / "ptx_fingerprints.json"
ARCH = "sm_90a"
IN_DTYPE = "bfloat16"
OUT_DTYPES = ("float32", "bfloat16")  # split-KV partials; one split, output in q's dtype
COMMAND = "python -m kernels.mla_decode.ptx_fingerprints --write"
NORMALISATION = (
    "drop '.file' directive lines (absolute source paths, only with line information) and "
    "the NUL byte / blank space after the last line; everything else is kept (identical "
    "compiles gave byte-identical PTX)"
)

_FILE_DIRECTIVE = re.compile(r"^\s*\.file\s")
_CUTLASS_NAMES = {"float32": "Float32", "bfloat16": "BFloat16", "float16": "Float16"}


def normalise(ptx: str) -> str:
    """The PTX text without what varies between identical compiles (see the module doc)."""
    lines = [ln for ln in ptx.rstrip("\x00 \t\r\n").split("\n") if not _FILE_DIRECTIVE.match(ln)]
    return "\n".join(lines) + "\n"


def ptx_sha256(ptx: str) -> str:
    """sha256 (hex) of the normalised PTX: the fingerprint of one compiled kernel module."""
    return hashlib.sha256(normalise(ptx).encode()).hexdigest()


def toolchain(ptx: str) -> str:
    """The NVVM release line of the PTX banner, e.g. 'Cuda compilation tools, release 12.9,
    V12.9.83' ('' when absent)."""
    m = re.search(r"^// (Cuda compilation tools.*)$", ptx, re.M)
    return m.group(1).strip() if m else ""


def cutlass_dsl_version() -> str:
    try:
        return importlib.metadata.version("nvidia-cutlass-dsl")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cute_versions() -> list[str]:
    """Every ``cute_v<N>.py`` next to this module, in ladder order."""
    found = [p.stem for p in HERE.glob("cute_v*.py") if p.stem[len("cute_v") :].isdigit()]
    return sorted(found, key=lambda n: int(n[len("cute_v") :]))


def _module(name: str) -> Any:
    return importlib.import_module(f"kernels.mla_decode.{name}")


def kernel_label(name: str) -> str:
    """Which kernel class and knob values a version compiles, e.g.
    ``cute_v7._MlaDecodeV7(l2_prefetch_distance=2)``: versions that change only host code
    show the kernel of the version they reuse."""
    entry = _module(name).entry()
    cls = type(entry)
    knobs = ", ".join(f"{k}={v!r}" for k, v in sorted(vars(entry).items()))
    return f"{cls.__module__.rpartition('.')[2]}.{cls.__qualname__}({knobs})"


def _args(example_args: Callable[..., Any], out_dtype: str) -> tuple[Any, ...]:
    """A version's example arguments for bf16 inputs and `out_dtype` outputs."""
    import cutlass

    in_dt = getattr(cutlass, _CUTLASS_NAMES[IN_DTYPE])
    out_dt = getattr(cutlass, _CUTLASS_NAMES[out_dtype])
    return example_args(in_dt, out_dt)


@functools.cache
def _compile(entry: Any, example_args: Callable[..., Any], out_dtype: str) -> str:
    from kernels.mla_decode.cute_common import compile_ptx

    return compile_ptx(entry, *_args(example_args, out_dtype), arch=ARCH)


def version_ptx(name: str, out_dtype: str) -> str:
    """The sm_90a PTX of version ``name`` for bf16 inputs and ``out_dtype`` outputs.

    Cached per (kernel object, argument template, dtype): versions that reuse another
    version's kernel (cute_v5, cute_v9) share its compile, and tests that read the PTX of the
    same version for different checks compile it once per process."""
    mod = _module(name)
    return _compile(mod.entry(), mod.example_args, out_dtype)


def version_cubin(name: str, out_dtype: str) -> bytes:
    """The sm_90a cubin of version ``name`` (bf16 inputs, ``out_dtype`` outputs), assembled
    by CuTe DSL's own ptxas on this machine: for reading the SASS, not fingerprinted."""
    from kernels.mla_decode.cute_common import compile_cubin

    mod = _module(name)
    return compile_cubin(mod.entry(), *_args(mod.example_args, out_dtype), arch=ARCH)


# ---------------------------------------------------------------------- the file


class FingerprintFileError(ValueError):
    """The fingerprints file cannot be read; the message starts with ``path:line:``."""


def load(path: Path = FINGERPRINTS) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise FingerprintFileError(f"{path}:1: cannot read: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FingerprintFileError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    versions = doc.get("versions") if isinstance(doc, dict) else None
    if not isinstance(versions, dict) or not all(
        isinstance(v, dict) and all(isinstance(v.get(d), str) for d in OUT_DTYPES)
        for v in versions.values()
    ):
        raise FingerprintFileError(
            f"{path}:1: expected {{'versions': {{name: {{{', '.join(OUT_DTYPES)}: sha256}}}}}}"
        )
    return doc


@dataclass
class Computed:
    """What one version compiles to now."""

    name: str
    kernel: str
    sha256: dict[str, str]
    toolchain: str


def compute(names: Sequence[str], progress: Callable[[str], None] | None = None) -> list[Computed]:
    out = []
    for name in names:
        shas: dict[str, str] = {}
        chain = ""
        for dtype in OUT_DTYPES:
            t0 = time.perf_counter()
            ptx = version_ptx(name, dtype)
            shas[dtype] = ptx_sha256(ptx)
            chain = chain or toolchain(ptx)
            if progress:
                progress(f"{name} {dtype}: {shas[dtype][:12]} ({time.perf_counter() - t0:.1f} s)")
        out.append(Computed(name, kernel_label(name), shas, chain))
    return out


def document(computed: Sequence[Computed]) -> dict[str, Any]:
    return {
        "about": (
            "sha256 of each CuTe DSL MLA decode version's sm_90a PTX (normalised), per output "
            "dtype; checked in CI, matched by the kernel_ptx_sha256 of GPU benchmark rows"
        ),
        "command": COMMAND,
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cutlass_dsl": cutlass_dsl_version(),
        "toolchain": next((c.toolchain for c in computed if c.toolchain), ""),
        "arch": ARCH,
        "in_dtype": IN_DTYPE,
        "normalisation": NORMALISATION,
        "versions": {c.name: {"kernel": c.kernel, **c.sha256} for c in computed},
    }


def differences(doc: dict[str, Any], computed: Sequence[Computed], *, every: bool) -> list[str]:
    """One line per mismatch between the file and the fresh compiles. ``every``: the compiled
    set is all versions, so versions only in the file are reported too."""
    problems = []
    if doc.get("cutlass_dsl") != cutlass_dsl_version():
        problems.append(
            f"nvidia-cutlass-dsl {cutlass_dsl_version()} is installed, the fingerprints were "
            f"made with {doc.get('cutlass_dsl')}: the PTX of every version may differ from "
            "what was measured"
        )
    recorded = doc["versions"]
    for c in computed:
        if c.name not in recorded:
            problems.append(f"{c.name}: not in the fingerprints file")
            continue
        changed = [d for d in OUT_DTYPES if recorded[c.name][d] != c.sha256[d]]
        if changed:
            detail = ", ".join(
                f"{d} {recorded[c.name][d][:12]} -> {c.sha256[d][:12]}" for d in changed
            )
            problems.append(f"{c.name}: PTX changed ({detail})")
    if every:
        gone = sorted(set(recorded) - {c.name for c in computed})
        problems += [f"{n}: in the fingerprints file but no longer a version" for n in gone]
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m kernels.mla_decode.ptx_fingerprints",
        description=(
            "Compile every CuTe DSL MLA decode version for sm_90a on the CPU and compare the "
            "sha256 of its PTX with ptx_fingerprints.json (--check), or rewrite that file "
            "(--write). No GPU needed."
        ),
    )
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when any PTX changed")
    mode.add_argument("--write", action="store_true", help="record the current PTX")
    p.add_argument("--versions", default="", help="comma-separated (default: every cute_v*)")
    p.add_argument("--file", type=Path, default=FINGERPRINTS, help="default: %(default)s")
    p.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    p.add_argument(
        "--at",
        metavar="REV",
        help="with --check: compile the versions as they were at git revision REV instead",
    )
    args = p.parse_args(argv)
    if args.at:
        if not args.check:
            print("error: --at goes with --check", file=sys.stderr)
            return 2
        return check_at_revision(args.at, args.file, args.versions, args.json)

    known = cute_versions()
    names = [n for n in args.versions.split(",") if n] or known
    unknown = [n for n in names if n not in known]
    if unknown:
        known_list = ", ".join(known)
        print(f"error: unknown versions {', '.join(unknown)}; known: {known_list}", file=sys.stderr)
        return 2
    every = not args.versions  # all versions: also report those only in the file

    def progress(msg: str) -> None:
        print(f"[ptx] {msg}", file=sys.stderr, flush=True)

    doc: dict[str, Any] | None = None
    if args.check or not every:  # --write of some versions updates their entries only
        try:
            doc = load(args.file)
        except FingerprintFileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    computed = compute(names, progress)

    if args.check:
        assert doc is not None
        problems = differences(doc, computed, every=every)
        if args.json:
            print(json.dumps({"ok": not problems, "problems": problems, "checked": names}))
        for line in problems:
            print(line, file=sys.stderr if args.json else sys.stdout)
        if problems:
            print(
                f"{len(problems)} problem(s) in {_shown(args.file)}: re-measure the changed versions "
                f"on the GPU, then run `{COMMAND}` (or undo the change)",
                file=sys.stderr,
            )
            return 1
        if not args.json:
            dsl = cutlass_dsl_version()
            what = f"{len(names)} versions match" if len(names) != 1 else "1 version matches"
            print(f"ok: {what} {_shown(args.file)} (nvidia-cutlass-dsl {dsl})")
        return 0

    new = document(computed)
    if doc is not None:  # a subset: keep the other versions' entries
        new["versions"] = {**doc["versions"], **new["versions"]}
        new["versions"] = {n: new["versions"][n] for n in known if n in new["versions"]}
    try:
        old: dict[str, Any] | None = _without_date(load(args.file))
    except FingerprintFileError:  # absent or unreadable: written afresh
        old = None
    if old == _without_date(new):
        msg = f"unchanged: {_shown(args.file)}"
    else:
        args.file.write_text(json.dumps(new, indent=2) + "\n")
        msg = f"wrote {_shown(args.file)} ({len(new['versions'])} versions)"
    if args.json:
        print(json.dumps({"ok": True, "file": str(args.file), "message": msg}))
    else:
        print(msg)
    return 0


def check_at_revision(rev: str, path: Path, versions: str, as_json: bool) -> int:
    """``--check --at REV``: run this module's check on the kernels of git revision ``rev``
    (extracted into a temporary folder, with this module and the fingerprints file ``path``
    copied in, since older trees lack them). Versions absent at ``rev`` are left out."""
    import shutil
    import subprocess
    import tempfile

    repo = HERE.parent.parent
    try:
        load(path)
    except FingerprintFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ptx_at_") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", rev, "kernels", "kbopt"],
            capture_output=True,
        )
        if archive.returncode:
            err = archive.stderr.decode(errors="replace").strip()
            print(f"error: cannot read revision {rev!r}: {err}", file=sys.stderr)
            return 2
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        old_dir = Path(tmp) / "kernels" / "mla_decode"
        shutil.copy(Path(__file__), old_dir / Path(__file__).name)
        shutil.copy(path, old_dir / FINGERPRINTS.name)  # the file checked, in place there
        there = [p.stem for p in old_dir.glob("cute_v*.py") if p.stem[len("cute_v") :].isdigit()]
        there.sort(key=lambda n: int(n[len("cute_v") :]))
        wanted = [n for n in versions.split(",") if n] or there
        names = [n for n in wanted if n in there]
        if not names:
            print(f"error: none of {', '.join(wanted)} exists at {rev}", file=sys.stderr)
            return 2
        print(f"[ptx] the code at {rev}: {', '.join(names)}", file=sys.stderr, flush=True)
        cmd = [sys.executable, "-m", "kernels.mla_decode.ptx_fingerprints", "--check"]
        cmd += ["--versions", ",".join(names)]
        cmd += ["--json"] if as_json else []
        env = {**os.environ, "PYTHONPATH": tmp}
        return subprocess.run(cmd, cwd=tmp, env=env).returncode


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it (output without local paths)."""
    try:
        return str(path.resolve().relative_to(HERE.parent.parent))
    except ValueError:
        return str(path)


def _without_date(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "date"}


if __name__ == "__main__":
    raise SystemExit(main())
