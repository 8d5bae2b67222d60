"""The kernel spec: everything a kernel declares so that kbopt can measure, profile and tune it.

A kernel lives in a folder that is a Python package (`kernels/<name>/` in a kbopt project,
or any package of your own) whose `spec.py` defines `SPEC = KernelSpec(...)`:

- **dimensions** (`Dim`): the named sizes of a problem (MLA decode: `b, s, t`; a norm:
  `rows, hidden`; a GEMM: `m, n, k`), each optionally tied to a catalog metric (MLA's `t`
  is the catalog's `kv_len`), so that entry triggers such as `kv_len >= 1024` read it;
- **the default trial matrix** (`Trial`): the points every version is measured at, each
  with the reason it is there, and the dimension halved on out-of-memory (`backoff_dim`);
- **inputs, reference and roofline**: `make_inputs(dims, dtype=, device=, seed=)` returns
  the positional arguments of one call, `reference(*inputs)` the expected output(s),
  `flops(dims)` the tensor-core FLOPs and `bytes_moved(dims)` the fewest DRAM bytes one
  call needs; the roofline floor is the larger of the two times against the ceilings
  measured in the same run;
- **tolerances** per dtype (largest relative error accepted against the reference);
- **versions**: modules `<family>_v<N>*.py` in the folder, each exporting the function
  named `entry_point`, plus optional `baselines()` (plain torch, a library's kernel...);
- **knobs** per family: the typed, tunable parameters a version exposes (name, type,
  allowed values, and the role a catalog move can act on, e.g. `kv_tile`, `pipeline_stages`).
  A version sets them either as keyword arguments of its `CONFIG = SomeConfig(...)` or as
  upper-case module constants (`BLOCK_SIZE = 1024`); both are read from the source, without
  importing it.

Nothing here imports torch: a spec module imports its heavy dependencies inside the
functions it declares, so `kbopt kernel list`, the fake backend and the cycle's bookkeeping
work on any machine.  `load_spec` finds a spec by kernel name (under `<root>/kernels/`), by
path (a `spec.py` file or its folder) or as `module:attribute`; `check_spec` lists every
problem with the file it is in.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import math
import numbers
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from kbopt.comma_items import comma_items
from kbopt.errors import KbError, Problem, ProblemList
from kbopt.import_deadline import ENV as IMPORT_ENV
from kbopt.import_deadline import ImportTooSlow, import_deadline, limit_s

SPEC_FILE = "spec.py"
SPEC_ATTR = "SPEC"
KERNELS_DIR = "kernels"
IDENT_RE = re.compile(r"^[a-z][a-z0-9_]*$")
VERSION_RE = re.compile(r"^(?P<family>[a-z][a-z0-9]*)_v(?P<number>\d+)(?P<rest>[a-z0-9_]*)$")
KNOB_TYPES = {"int": int, "float": float, "str": str, "bool": bool}
DTYPES = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")


def operand_bits(dtype: str) -> int:
    """Bits per element of a dtype in DTYPES (float8_e4m3fn: 8)."""
    if dtype.startswith("float8"):
        return 8
    return {"float16": 16, "bfloat16": 16, "float32": 32}[dtype]


# Keys a results row or a run record already uses: a dimension may not take these names.
RESERVED_DIMS = frozenset({"name", "why", "config", "kernel", "version", "dims"})

Dims = Mapping[str, int]


@dataclass(frozen=True)
class Dim:
    """One named problem size."""

    name: str
    doc: str
    metric: str | None = None  # the catalog metric this size is (e.g. "kv_len")


@dataclass(frozen=True)
class Trial:
    """One point of the default trial matrix, and why it is in the matrix."""

    name: str
    dims: Mapping[str, int]
    why: str
    aliases: tuple[str, ...] = ()


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True)
class Knob:
    """A tunable parameter of a version family."""

    name: str
    type: str  # one of KNOB_TYPES
    values: tuple[Any, ...]  # the allowed values, in order
    role: str = ""  # what a catalog move acts on: "kv_tile", "pipeline_stages", "splits"...
    doc: str = ""
    # The value a version has when its file does not set the knob (the config class's
    # default): lets a move start from a version that leaves the knob alone.
    default: Any = NO_DEFAULT

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def coerce(self, value: Any) -> Any:
        """A value given as text (a command line's `evict=true`) in the knob's type."""
        if not isinstance(value, str):
            return float(value) if self.type == "float" and isinstance(value, int) else value
        text = value.strip()
        if text.lower() == "none":
            return None
        if self.type == "bool" and text.lower() in {"true", "false", "1", "0", "yes", "no"}:
            return text.lower() in {"true", "1", "yes"}
        if self.type in {"int", "float"}:
            try:
                return KNOB_TYPES[self.type](text)
            except ValueError:
                return value
        return value

    def admits(self, value: Any) -> bool:
        if value is None:  # "let the kernel choose" (e.g. splits sized from the SM count)
            return None in self.values
        py = KNOB_TYPES.get(self.type)
        if py is None:
            return False
        if py is not bool and isinstance(value, bool):
            return False
        if not isinstance(value, py) and not (py is float and isinstance(value, int)):
            return False
        return not self.values or value in self.values


@dataclass(frozen=True)
class Version:
    """A callable version of a kernel (imported: needs the kernel's dependencies)."""

    name: str
    family: str
    description: str
    fn: Callable[..., Any]
    # Set-up that users run once per input set (metadata, workspaces): `prepare(*inputs)`
    # returns the launch to time.  The harness keeps it outside the timed region.
    prepare: Callable[..., Callable[[], Any]] | None = None
    path: Path | None = None


@dataclass
class KernelSpec:
    """What a kernel declares to kbopt (see the module docstring)."""

    name: str
    description: str
    dims: tuple[Dim, ...]
    trials: tuple[Trial, ...]
    backoff_dim: str
    make_inputs: Callable[..., tuple[Any, ...]]
    reference: Callable[..., Any]
    flops: Callable[[Dims], int]
    bytes_moved: Callable[[Dims], int]
    tolerances: Mapping[str, float]
    entry_point: str
    families: tuple[str, ...] = ()  # empty: any `<family>_v<N>` module is a version
    knobs: Mapping[str, tuple[Knob, ...]] = field(default_factory=dict)
    baselines: Callable[[], Mapping[str, Version]] | None = None
    # The baselines every results row is compared with (speed-up columns), in order.
    compare_with: tuple[str, ...] = ()
    dtype: str = "bfloat16"
    # The precision of the kernel's matrix products when it differs from `dtype` (an fp8
    # GEMM that writes bf16: "float8_e4m3fn"): the matmul ceiling of the roofline floor and
    # of TC% is then measured in it, and the profile carries its `matmul_operand_bits` (the
    # catalog does not propose fp8 operands to a kernel already on 8-bit ones).  Empty: `dtype`.
    matmul_dtype: str = ""
    # Catalog metrics that hold at every point (MLA: num_heads=128), for the profile.
    fixed_metrics: Mapping[str, float] = field(default_factory=dict)
    # Catalog metrics that no single dimension is: `shape_metrics(dims)` -> {metric: value}
    # (the row a program tiles is two parts, `row_len` = nope + rope; or a whole per-sequence
    # state, heads x rows x columns).  A tile move reads `row_len` to know when a tile
    # already spans the row, so a row length that is only part of the row stops it early.
    shape_metrics: Callable[[Dims], Mapping[str, float]] | None = None
    # What kind of kernel this is, in the catalog's context tags (`kbopt vocab`: attention-
    # decode, normalization, gemm...).  Strategy selection keeps entries tied only to other
    # kinds of kernels off its profiles; contexts without a kind (memory-bound) keep the
    # attention-only entries off.  Empty: no filtering.
    contexts: tuple[str, ...] = ()
    # Inputs of the correctness check when they should differ from the timed ones
    # (ragged lengths, edge cases); same signature as make_inputs.
    make_check_inputs: Callable[..., tuple[Any, ...]] | None = None
    # `launch_info(family)`: the dict a version family's launches write what they chose
    # into (n_regs, splits, or "metrics": {catalog metric: value}); kbopt clears it before
    # a measurement and reads it after.  Optional.
    launch_info: Callable[[str], dict[str, Any]] | None = None
    # Filled in by load_spec: where the spec was found.
    folder: Path = field(default=Path("."))
    source: str = ""  # how it was named: a kernel name, a path, or module:attr
    spec_file: Path | None = None  # the module that defines it
    package: str = ""  # dotted package of the folder, for importing its versions

    def __post_init__(self) -> None:
        """Where the spec was declared: the module that called KernelSpec(...)."""
        if self.spec_file is not None:
            return
        caller = sys._getframe(2).f_globals  # module body -> __init__ -> __post_init__
        file = caller.get("__file__")
        if file:
            self.spec_file = Path(file).resolve()
            self.folder = self.spec_file.parent
            self.package = _package_of(self.folder)[1]

    # ------------------------------------------------------------------ dimensions

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    def shape(self, dims: Dims) -> str:
        """`rows=8192, hidden=4096`: the dimensions in declaration order."""
        return ", ".join(f"{n}={dims[n]}" for n in self.dim_names if n in dims)

    def dim_metrics(self, dims: Dims) -> dict[str, float]:
        """The catalog metrics the dimensions stand for (MLA: t is kv_len), the fixed ones,
        and the matmul's operand bits where the spec declares its precision."""
        out = {k: float(v) for k, v in self.fixed_metrics.items()}
        if self.matmul_dtype:
            out.setdefault("matmul_operand_bits", float(operand_bits(self.matmul_dtype)))
        out.update(
            {d.metric: float(dims[d.name]) for d in self.dims if d.metric and d.name in dims}
        )
        if self.shape_metrics is not None:
            out.update({k: float(v) for k, v in self.shape_metrics(dims).items()})
        return out

    def trial(self, name: str) -> Trial | None:
        key = name.strip().lower()
        return next((t for t in self.trials if key == t.name or key in t.aliases), None)

    def tolerance(self, dtype: str) -> float:
        if dtype not in self.tolerances:
            known = ", ".join(self.tolerances) or "none"
            raise KbError(f"{self.name} declares no tolerance for {dtype} (declared: {known})")
        return float(self.tolerances[dtype])

    @property
    def matmul_precision(self) -> str:
        """The precision the matmul ceiling is measured in: `matmul_dtype`, else `dtype`."""
        return self.matmul_dtype or self.dtype

    def floor_us(self, dims: Dims, copy_bw_gbps: float, matmul_tflops: float) -> float:
        return max(
            self.bytes_moved(dims) / (copy_bw_gbps * 1e9) * 1e6,
            self.flops(dims) / (matmul_tflops * 1e12) * 1e6,
        )

    # ------------------------------------------------------------------ versions

    def version_family(self, version: str) -> str | None:
        m = VERSION_RE.match(version)
        if m is None or (self.families and m["family"] not in self.families):
            return None
        return m["family"]

    def version_files(self) -> dict[str, Path]:
        """Version name -> file, found by name alone (nothing is imported)."""
        found = [p for p in self.folder.glob("*.py") if self.version_family(p.stem) is not None]
        return {p.stem: p for p in sorted(found, key=self._ladder_key)}

    def _ladder_key(self, path: Path) -> tuple[int, str, int, str]:
        """Declared family order, then the version number: triton_v2 before triton_v10."""
        m = VERSION_RE.match(path.stem)
        assert m is not None
        fam = m["family"]
        rank = self.families.index(fam) if fam in self.families else len(self.families)
        return (rank, fam, int(m["number"]), m["rest"])

    def version_path(self, version: str) -> Path:
        return self.folder / f"{version}.py"

    def knobs_for(self, version: str) -> tuple[Knob, ...]:
        family = self.version_family(version)
        return tuple(self.knobs.get(family, ())) if family else ()

    def check_knobs(self, version: str, values: Mapping[str, Any]) -> None:
        """Refuse knob values a version does not declare or allow (KbError naming them)."""
        knobs = {k.name: k for k in self.knobs_for(version)}
        unknown = sorted(set(values) - set(knobs))
        if unknown:
            raise KbError(
                f"unknown knob(s) {', '.join(unknown)} for {version}; its knobs: "
                + (", ".join(sorted(knobs)) or "none (the spec declares none for its family)")
            )
        for name, value in values.items():
            if not knobs[name].admits(value):
                raise KbError(
                    f"{name}={value!r} is not allowed for {version} "
                    f"({knobs[name].type}, one of {list(knobs[name].values)})"
                )

    def knob_values(self, version: str) -> dict[str, Any]:
        """The knob values a version file sets, read from its source."""
        knobs = self.knobs_for(version)
        if not knobs:
            return {}
        found = read_knob_values(self.version_path(version), [k.name for k in knobs])
        defaults = {k.name: k.default for k in knobs if k.has_default and k.name not in found}
        return {**defaults, **found}

    @property
    def locator(self) -> str:
        """How another process finds this spec again: `module:attr`, or the spec file."""
        if ":" in self.source:
            return self.source
        return str(self.spec_file or self.folder / SPEC_FILE)

    def module_name(self, stem: str) -> str:
        return f"{self.package}.{stem}" if self.package else stem

    def load_versions(
        self, include_baselines: bool = True
    ) -> tuple[dict[str, Version], dict[str, str]]:
        """Import every version (and the baselines); returns (versions, import errors)."""
        _ensure_importable(self)
        out: dict[str, Version] = {}
        errors: dict[str, str] = {}
        if include_baselines and self.baselines is not None:
            try:
                out.update(self.baselines())
            except Exception as exc:  # a missing optional dependency must not hide the rest
                errors["baselines"] = f"{type(exc).__name__}: {exc}"
        for name in self.version_files():
            try:
                out[name] = self.load_version(name)
            except Exception as exc:  # one broken version must not hide the others
                errors[name] = f"{type(exc).__name__}: {exc}"
        return out, errors

    def load_baselines(self) -> dict[str, Version]:
        """The baselines present on this machine (a spec says on stderr why it leaves one
        out: a missing local copy, a package that is not built)."""
        if self.baselines is None:
            return {}
        _ensure_importable(self)
        return dict(self.baselines())

    def load_version(self, name: str) -> Version:
        family = self.version_family(name)
        if family is None or not self.version_path(name).is_file():
            known = ", ".join(self.version_files()) or "none"
            raise KbError(f"{self.name} has no version {name!r}; known: {known}")
        _ensure_importable(self)
        path = self.version_path(name)
        seconds = limit_s()
        try:
            with import_deadline(seconds):
                mod = importlib.import_module(self.module_name(name))
        except ImportTooSlow as exc:  # a version that waits at import must not hold kbopt
            raise KbError(
                f"importing version {name} took more than {seconds:g} s (does it wait for "
                f"something at import?); {IMPORT_ENV} sets the limit",
                path=str(path),
                line=_raising_line(exc, path.resolve()),
            ) from None
        fn = getattr(mod, self.entry_point, None)
        if not callable(fn):
            raise KbError(
                f"{path}: defines no function {self.entry_point}() "
                "(the entry point every version of this kernel exports)"
            )
        doc = (mod.__doc__ or "").strip().splitlines()
        return Version(
            name=name,
            family=family,
            description=str(getattr(mod, "DESCRIPTION", doc[0] if doc else "")),
            fn=fn,
            prepare=_own_function(mod, "prepare"),
            path=path,
        )

    def summary(self) -> dict[str, Any]:
        """The spec as plain data (what `kbopt kernel list --json` prints)."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "folder": str(self.folder),
            "dims": [{"name": d.name, "doc": d.doc, "metric": d.metric} for d in self.dims],
            "trials": [
                {"name": t.name, "dims": dict(t.dims), "why": t.why, "aliases": list(t.aliases)}
                for t in self.trials
            ],
            "backoff_dim": self.backoff_dim,
            "dtype": self.dtype,
            "matmul_dtype": self.matmul_precision,
            "tolerances": dict(self.tolerances),
            "entry_point": self.entry_point,
            "families": list(self.families),
            "knobs": {
                fam: [
                    {"name": k.name, "type": k.type, "values": list(k.values), "role": k.role}
                    for k in knobs
                ]
                for fam, knobs in self.knobs.items()
            },
            "versions": list(self.version_files()),
            "compare_with": list(self.compare_with),
            "contexts": list(self.contexts),
        }


# ---------------------------------------------------------------------- reading sources


def _own_function(mod: Any, name: str) -> Callable[..., Any] | None:
    """`mod.name` when the module defines it: a helper of the same name imported from
    elsewhere (MLA's shared `prepare(q, kv, lens)`) is not the version's set-up hook."""
    fn = getattr(mod, name, None)
    if callable(fn) and getattr(fn, "__module__", None) == mod.__name__:
        return fn
    return None


def parse_source(path: Path) -> ast.Module:
    """A version file's syntax tree; a KbError at the line of a syntax error."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise KbError(str(exc.msg), str(path), exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise KbError(f"cannot read: not UTF-8 text ({exc.reason})", str(path)) from None
    except OSError as exc:
        raise KbError(f"cannot read: {exc.strerror or exc}", str(path)) from None


def read_knob_values(path: Path, names: Iterable[str]) -> dict[str, Any]:
    """Literal knob values in a version's source: `CONFIG = X(name=...)` or `NAME = ...`."""
    tree = parse_source(path)
    wanted = set(names)
    config: dict[str, Any] = {}
    consts: dict[str, Any] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        if target.id == "CONFIG" and isinstance(node.value, ast.Call):
            for kw in node.value.keywords:
                if kw.arg in wanted:
                    try:
                        config[kw.arg] = ast.literal_eval(kw.value)
                    except ValueError:
                        continue
        elif target.id.lower() in wanted and target.id.isupper():
            try:
                consts[target.id.lower()] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return {**consts, **config}


# ---------------------------------------------------------------------- finding specs


def kernels_dir(root: Path) -> Path:
    return Path(root) / KERNELS_DIR


def discover(root: Path) -> list[Path]:
    """The spec files of the project's kernels: `<root>/kernels/*/spec.py`."""
    base = kernels_dir(root)
    if not base.is_dir():
        return []
    return sorted(p for p in base.glob(f"*/{SPEC_FILE}") if p.is_file())


_CACHE: dict[tuple[str, str], KernelSpec] = {}


def load_spec(ref: str | KernelSpec, root: Path | str | None = None) -> KernelSpec:
    """A spec from a kernel name, a spec file or folder, or `module:attr` (see module doc)."""
    if isinstance(ref, KernelSpec):
        return ref
    root_path = Path(root).resolve() if root is not None else Path.cwd().resolve()
    text = ref.strip()
    if not text:
        raise KbError("no kernel named: give a kernel name, a spec.py path or module:attr")
    key = (str(root_path), text)
    if key in _CACHE:
        return _CACHE[key]
    if ":" in text and not Path(text).exists() and not re.match(r"^[A-Za-z]:[\\/]", text):
        spec = _from_module(text, root_path)
    else:
        path = Path(text)
        if not path.is_absolute():
            local = root_path / path
            by_name = kernels_dir(root_path) / text / SPEC_FILE
            if IDENT_RE.match(text) and by_name.exists():
                path = by_name  # a spec.py that is not a file is refused below
            elif local.exists():
                path = local
            elif IDENT_RE.match(text):
                known = ", ".join(p.parent.name for p in discover(root_path)) or "none"
                raise KbError(
                    f"no kernel {text!r}: {by_name.relative_to(root_path)} does not exist "
                    f"(kernels here: {known}; `kbopt kernel new {text} --dims ...` makes one)"
                )
            else:
                raise KbError(f"no kernel spec at {text}: no such file or folder")
        if path.is_dir() and path.name != SPEC_FILE:
            path = path / SPEC_FILE
        if path.exists() and not path.is_file():
            from kbopt.textio import file_kind

            raise KbError(f"{path}: is {file_kind(path.stat().st_mode)}, not a Python file")
        if not path.is_file():
            raise KbError(f"no kernel spec at {path}: the folder has no {SPEC_FILE}")
        if path.suffix != ".py":
            raise KbError(
                f"{path}: not a kernel spec, which is a Python file: give a kernel name, "
                f"the kernel's {SPEC_FILE} or folder, or module:attr"
            )
        if (kernels_dir(root_path) / "__init__.py").is_file():
            # A spec outside the project's kernels (benchmarks/foreign/...) may import them
            # (`from kernels.mla_decode import ...`): this project's folder is searched
            # first.  Nothing loaded is dropped, so objects handed out keep their identity.
            _search_first(root_path, KERNELS_DIR)
        spec = _from_file(path.resolve(), source=text)
    _CACHE[key] = spec
    return spec


def clear_cache() -> None:
    """Forget loaded specs (tests, or after `kbopt kernel new` wrote one)."""
    _CACHE.clear()


def _package_of(folder: Path) -> tuple[Path, str]:
    """(import root, dotted package) of a folder: walk up while `__init__.py` exists."""
    parts: list[str] = []
    current = folder
    while (current / "__init__.py").is_file():
        parts.insert(0, current.name)
        current = current.parent
    return current, ".".join(parts)


def _from_file(path: Path, source: str) -> KernelSpec:
    """Execute a spec file under a private module name (so that two projects' `kernels`
    packages never collide in one process), with its package's root on sys.path so its own
    imports work."""
    folder = path.parent
    import_root, package = _package_of(folder)
    if not package:
        raise KbError(
            f"{folder}: a kernel folder must be a Python package (add an empty __init__.py) "
            "so that its versions can import each other"
        )
    if not all(p.isidentifier() for p in package.split(".")):
        raise KbError(f"{folder}: {package!r} is not an importable package name")
    _claim_package(import_root, package)
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    name = f"_kbopt_spec_{digest}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise KbError(f"{path}: cannot load the spec file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    seconds = limit_s()
    try:
        with import_deadline(seconds):
            loader_spec.loader.exec_module(module)
    except KbError:
        raise
    except ImportTooSlow as exc:  # a sleep, a download, a wait for a device at import
        del sys.modules[name]
        raise KbError(
            f"importing the spec took more than {seconds:g} s (does it wait for something at "
            f"import?); {IMPORT_ENV} sets the limit",
            path=str(path),
            line=_raising_line(exc, path),
        ) from None
    except (Exception, SystemExit) as exc:  # a spec's sys.exit() must not end kbopt silently
        del sys.modules[name]
        raise KbError(
            f"cannot import the spec: {type(exc).__name__}: {exc}",
            path=str(path),
            line=_raising_line(exc, path),
        ) from None
    return _finish(module, SPEC_ATTR, path, source, package)


def _raising_line(exc: BaseException, path: Path) -> int | None:
    """The line of `path` that raised `exc` (the last frame in that file; a
    SyntaxError's own line), or None when the spec file is not on the traceback."""
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename) == path:
        return exc.lineno
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if Path(frame.f_code.co_filename) == path:
            line = lineno
    return line


def _from_module(text: str, root: Path) -> KernelSpec:
    module_name, _, attr = text.partition(":")
    top = module_name.split(".")[0]
    if top.isidentifier() and (root / top / "__init__.py").is_file():
        _claim_package(root, module_name)  # the project's own package, not another's
    seconds = limit_s()
    try:
        with import_deadline(seconds):
            module = importlib.import_module(module_name)
    except ImportTooSlow:
        raise KbError(
            f"{text}: importing {module_name} took more than {seconds:g} s (does it wait for "
            f"something at import?); {IMPORT_ENV} sets the limit"
        ) from None
    except Exception as exc:
        raise KbError(f"{text}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    path = Path(getattr(module, "__file__", "") or ".").resolve()
    return _finish(module, attr or SPEC_ATTR, path, text, module.__name__.rpartition(".")[0])


def _finish(module: ModuleType, attr: str, path: Path, source: str, package: str) -> KernelSpec:
    spec = getattr(module, attr, None)
    if not isinstance(spec, KernelSpec):
        raise KbError(f"{path}: defines no {attr} = KernelSpec(...) (found {type(spec).__name__})")
    spec.folder = path.parent
    spec.spec_file = path
    spec.source = source
    spec.package = package
    problems = check_spec(spec, path)
    if problems:
        raise ProblemList(problems)
    _guard_roofline(spec)
    return spec


def _ensure_importable(spec: KernelSpec) -> None:
    import_root, package = _package_of(spec.folder)
    _claim_package(import_root, package)


def _search_first(import_root: Path, top: str) -> bool:
    """Put `import_root` first on sys.path and its `top` folder first in the search path of
    a `top` package already loaded; whether one was loaded."""
    root = str(import_root)
    if not sys.path or sys.path[0] != root:
        if root in sys.path:
            sys.path.remove(root)
        sys.path.insert(0, root)
    loaded = sys.modules.get(top)
    search = getattr(loaded, "__path__", None)
    if loaded is None or search is None:
        return False
    wanted = str((import_root / top).resolve())
    paths = [str(Path(p).resolve()) for p in search]
    if paths[:1] != [wanted]:
        loaded.__path__ = [wanted, *(p for p in paths if p != wanted)]
    return True


def _claim_package(import_root: Path, package: str) -> None:
    """Make `package` (e.g. `kernels.softmax`) import from `import_root`.

    Projects name their kernels' package alike (`kernels`), so a process that has loaded
    another project's kernels holds that project's `kernels` package, and an import of this
    one's versions would look in the other project's folder.  This project's folder goes
    first in the loaded package's search path (and its root first on sys.path), and modules
    of a same-named kernel loaded from elsewhere are dropped from sys.modules; every other
    module stays as it is (objects already handed out keep their identity)."""
    top, _, _ = package.partition(".")
    if not top:
        return
    if not _search_first(import_root, top):
        return
    # A kernel of the same name from another project, imported before: not this one's.
    own = (import_root / Path(*package.split("."))).resolve()
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        origin = getattr(sys.modules[name], "__file__", None)
        if origin and not Path(origin).resolve().is_relative_to(own):
            del sys.modules[name]


# ---------------------------------------------------------------------- validation


def spec_line(path: Path, attr: str = SPEC_ATTR) -> int:
    """The line of `SPEC = ...` in the spec file (1 when it cannot be found)."""
    try:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(rf"^{attr}\s*(:[^=]*)?=", line):
                return i
    except (OSError, UnicodeDecodeError):
        pass
    return 1


def _source_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _first_line(lines: Sequence[str], patterns: Sequence[str]) -> int | None:
    """The first line (1-based) of code, not a comment, that matches the first pattern of
    `patterns` found anywhere; None when none is."""
    for pattern in patterns:
        regex = re.compile(pattern)
        for i, text in enumerate(lines, 1):
            if not text.lstrip().startswith("#") and regex.search(text):
                return i
    return None


def check_spec(spec: KernelSpec, path: Path | None = None) -> list[Problem]:
    """Every problem of a spec, located at the line of what it concerns (the field, or the
    Dim / Trial / Knob of that name) when the spec file shows it, else at its `SPEC =`
    line; empty when it is valid."""
    from kbopt.moves import ROLES
    from kbopt.vocab import CONTEXTS, METRICS, VALUE_MAX

    where = str(path or spec.folder / SPEC_FILE)
    line = spec_line(Path(where)) if path is not None else 1
    problems: list[Problem] = []
    source = _source_lines(Path(where)) if path is not None else []

    def bad(message: str, *anchors: str) -> None:
        """A problem at the first line matching one of `anchors` (regular expressions: the
        field or the Dim / Trial / Knob it concerns), else at the `SPEC =` line."""
        problems.append(Problem(message, where, _first_line(source, anchors) or line))

    def named(call: str, name: str) -> str:
        return rf"\b{call}\(\s*[\"']{re.escape(name)}[\"']"

    def field(name: str) -> str:
        return rf"\b{name}\s*="

    if not IDENT_RE.match(spec.name or ""):
        bad(
            f"name {spec.name!r} must be lower-case letters, digits and _ (e.g. add_rmsnorm)",
            field("name"),
        )
    names = [d.name for d in spec.dims]
    if not names:
        bad(
            "dims: declare at least one dimension, e.g. Dim('rows', 'rows of the input')",
            field("dims"),
        )
    for d in spec.dims:
        dim_at = (named("Dim", d.name), field("dims"))
        if not IDENT_RE.match(d.name):
            bad(f"dims: {d.name!r} is not a lower-case identifier", *dim_at)
        elif d.name in RESERVED_DIMS:
            bad(f"dims: {d.name!r} is reserved (results rows use it); choose another name", *dim_at)
        if d.metric is not None and d.metric not in METRICS:
            bad(
                f"dims: {d.name} maps to unknown catalog metric {d.metric!r} (see `kbopt vocab`)",
                *dim_at,
            )
    for dup in sorted({n for n in names if names.count(n) > 1}):
        bad(f"dims: {dup!r} is declared twice", named("Dim", dup), field("dims"))
    by_metric: dict[str, list[str]] = {}
    for d in spec.dims:
        if d.metric is not None:
            by_metric.setdefault(d.metric, []).append(d.name)
    for metric, dims in sorted(by_metric.items()):
        if len(dims) > 1:
            bad(
                f"dims: {' and '.join(dims)} all map to the catalog metric {metric!r}, so a "
                f"profile holds only {dims[-1]}'s value; map one of them to another metric, "
                f"or give the combined value in shape_metrics",
                named("Dim", dims[-1]),
                field("dims"),
            )
    if spec.backoff_dim not in names:
        bad(
            f"backoff_dim {spec.backoff_dim!r} is not one of the dims ({', '.join(names)})",
            field("backoff_dim"),
        )
    if not spec.trials:
        bad("trials: declare the default trial matrix (at least one Trial)", field("trials"))
    seen: set[str] = set()
    for t in spec.trials:
        trial_at = (named("Trial", t.name), rf"[\"']{re.escape(t.name)}[\"']", field("trials"))
        for label in (t.name, *t.aliases):
            if label in seen:
                bad(f"trials: the name {label!r} is used twice", *trial_at)
            seen.add(label)
        if not IDENT_RE.match(t.name):
            bad(f"trials: {t.name!r} is not a lower-case identifier", *trial_at)
        if not t.why.strip():
            bad(f"trials: {t.name} needs a reason (why this point is in the matrix)", *trial_at)
        missing = [n for n in names if n not in t.dims]
        extra = [n for n in t.dims if n not in names]
        if missing:
            bad(f"trials: {t.name} lacks {', '.join(missing)}", *trial_at)
        if extra:
            bad(f"trials: {t.name} sets unknown dims {', '.join(extra)}", *trial_at)
        for n, v in t.dims.items():
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                bad(f"trials: {t.name}: {n}={v!r} must be a positive integer", *trial_at)
            elif v > VALUE_MAX:  # what --config refuses too: no profile can carry it
                bad(f"trials: {t.name}: {n}={v:.3g} is above {VALUE_MAX:g}", *trial_at)
    for label, fn in (
        ("make_inputs", spec.make_inputs),
        ("reference", spec.reference),
        ("flops", spec.flops),
        ("bytes_moved", spec.bytes_moved),
    ):
        if not callable(fn):
            bad(f"{label} must be a function", field(label))
    if not spec.entry_point.isidentifier():
        bad(f"entry_point {spec.entry_point!r} is not a function name", field("entry_point"))
    if not spec.tolerances:
        bad(
            "tolerances: give the largest relative error accepted per dtype, e.g. {'bfloat16': 2e-2}",
            field("tolerances"),
        )
    for dtype, tol in spec.tolerances.items():
        if dtype not in DTYPES:
            bad(
                f"tolerances: unknown dtype {dtype!r} (known: {', '.join(DTYPES)})",
                field("tolerances"),
            )
        if isinstance(tol, bool) or not isinstance(tol, int | float) or not 0 < tol < 1:
            bad(
                f"tolerances: {dtype}={tol!r} must be a number between 0 and 1", field("tolerances")
            )
    if spec.dtype not in spec.tolerances:
        bad(f"dtype {spec.dtype!r} has no tolerance", field("dtype"), field("tolerances"))
    if spec.matmul_dtype and spec.matmul_dtype not in DTYPES:
        bad(
            f"matmul_dtype: unknown dtype {spec.matmul_dtype!r} (known: {', '.join(DTYPES)})",
            field("matmul_dtype"),
        )
    for fam in spec.families:
        if not re.fullmatch(r"[a-z][a-z0-9]*", fam):
            bad(
                f"families: {fam!r} must be lower-case letters and digits (files {fam}_v1.py...)",
                field("families"),
            )
    for fam, knobs in spec.knobs.items():
        if spec.families and fam not in spec.families:
            bad(
                f"knobs: family {fam!r} is not in families ({', '.join(spec.families)})",
                field("knobs"),
            )
        knob_names = [k.name for k in knobs]
        for dup in sorted({n for n in knob_names if knob_names.count(n) > 1}):
            bad(f"knobs: {fam}.{dup} is declared twice", named("Knob", dup), field("knobs"))
        for k in knobs:
            knob_at = (named("Knob", k.name), field("knobs"))
            if not IDENT_RE.match(k.name):
                bad(f"knobs: {fam}.{k.name!r} is not a lower-case identifier", *knob_at)
            if k.type not in KNOB_TYPES:
                bad(
                    f"knobs: {fam}.{k.name} has type {k.type!r}; use one of {', '.join(KNOB_TYPES)}",
                    *knob_at,
                )
                continue
            wrong = [
                v for v in k.values if v is not None and not Knob(k.name, k.type, ()).admits(v)
            ]
            repeated = sorted({repr(v) for i, v in enumerate(k.values) if v in k.values[:i]})
            if repeated:  # a search would measure the same launch twice
                bad(f"knobs: {fam}.{k.name} lists {', '.join(repeated)} twice", *knob_at)
            if not k.values:
                bad(f"knobs: {fam}.{k.name} allows no value: list the values it may take", *knob_at)
            elif wrong:
                bad(f"knobs: {fam}.{k.name} allows {wrong!r}, which are not {k.type}", *knob_at)
            elif k.has_default and not k.admits(k.default):
                bad(
                    f"knobs: {fam}.{k.name} default {k.default!r} is not one of its values",
                    *knob_at,
                )
            if k.role and k.role not in ROLES:
                # A misspelt role is a knob no catalog move can ever reach: say so here
                # rather than let every search skip it without a word.
                bad(
                    f"knobs: {fam}.{k.name} has role {k.role!r}, which no catalog move acts "
                    f"on; use one of {', '.join(ROLES)} (or no role)",
                    *knob_at,
                )
    for ctx in spec.contexts:
        if ctx not in CONTEXTS:
            bad(
                f"contexts: unknown context {ctx!r}; use one of {', '.join(CONTEXTS)}",
                field("contexts"),
            )
    for metric in spec.fixed_metrics:
        if metric not in METRICS:
            bad(
                f"fixed_metrics: unknown catalog metric {metric!r} (see `kbopt vocab`)",
                field("fixed_metrics"),
            )
    if spec.shape_metrics is not None:
        # Read at every trial point by every profile and walk: an unknown metric name, a
        # raise or a non-number would surface in each of them.
        for t in spec.trials:
            try:
                shaped = dict(spec.shape_metrics(dict(t.dims)))
            except Exception as exc:
                bad(
                    f"shape_metrics({spec.shape(t.dims)}) raised {type(exc).__name__}: {exc}",
                    field("shape_metrics"),
                )
                break
            for metric, value in shaped.items():
                if metric not in METRICS:
                    bad(
                        f"shape_metrics: unknown catalog metric {metric!r} (see `kbopt vocab`)",
                        field("shape_metrics"),
                    )
                elif not _is_count(value):
                    bad(
                        f"shape_metrics({spec.shape(t.dims)}) gave {metric}={value!r}; it "
                        "must be a number of at least 0",
                        field("shape_metrics"),
                    )
    for name in spec.compare_with:
        if not IDENT_RE.match(name):
            bad(f"compare_with: {name!r} is not a version name", field("compare_with"))
    if not problems:
        # Every measurement divides by these counts: a function that raises or returns no
        # count at a trial point would stop each of them with a traceback.
        for t in spec.trials:
            for label in ("flops", "bytes_moved"):
                try:
                    count = getattr(spec, label)(dict(t.dims))
                except Exception as exc:
                    problems.append(roofline_error(spec, label, t.dims, exc, where, line))
                    continue
                if not _is_count(count):
                    bad(
                        f"{label}({spec.shape(t.dims)}) returned {count!r}; it must return "
                        "a number of at least 0",
                        field(label),
                    )
    if spec.folder.is_dir() and not problems:
        for version, vpath in spec.version_files().items():
            knobs = spec.knobs_for(version)
            if not knobs:
                continue
            try:
                parse_source(vpath)
            except KbError:
                # A version that does not parse is reported by `kbopt kernel check` and
                # refused where it is used; it must not keep the spec, and so every other
                # version, from loading.
                continue
            try:
                values = read_knob_values(vpath, [k.name for k in knobs])
            except KbError as exc:
                problems.append(Problem(exc.message, exc.path, exc.line))
                continue
            for k in knobs:
                if k.name in values and not k.admits(values[k.name]):
                    # at the line that sets it (BLOCK = 300, or block=300 in a CONFIG call)
                    setter = rf"(?i)\b{re.escape(k.name)}\b\s*[=:]"
                    problems.append(
                        Problem(
                            f"knob {k.name}={values[k.name]!r} is not among the allowed "
                            f"values {list(k.values)}",
                            str(vpath),
                            _first_line(_source_lines(vpath), [setter]) or 1,
                        )
                    )
    return problems


def check_versions(spec: KernelSpec) -> list[Problem]:
    """What `kbopt kernel check` adds to `check_spec`: every version file parses and defines
    the entry point, read from its source (nothing is imported).  Loading a spec leaves
    this out: one broken version must not stop the commands on the others."""
    problems: list[Problem] = []
    for vpath in spec.version_files().values():
        problems += check_version_source(spec, vpath)
    return problems


def check_version_source(spec: KernelSpec, vpath: Path) -> list[Problem]:
    """One version file's problems, read from its source: it parses and defines the entry
    point.  The fake backend asks the same before it invents figures for a version."""
    try:
        tree = parse_source(vpath)
    except KbError as exc:
        return [Problem(exc.message, exc.path, exc.line)]
    if not _may_define(tree, spec.entry_point):
        return [
            Problem(
                f"defines no function {spec.entry_point}() (the spec's entry_point, which "
                "every version exports)",
                str(vpath),
                1,
            )
        ]
    return []


PLACEHOLDER_RE = re.compile(r"^\s*TODO\b")


def placeholders(spec: KernelSpec) -> list[Problem]:
    """The texts of the spec still holding the scaffold's `TODO: ...` placeholders (its
    description, a dim's doc, a trial's reason), each located at its line of spec.py.

    They do not make the spec invalid (the scaffold's kernel runs as written), but they are
    what rankings, reports and the site show a reader, so `kbopt kernel check` lists them."""
    path = Path(spec.locator)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []

    def line_of(text: str) -> int:
        for i, line in enumerate(lines, 1):
            if text in line:
                return i
        return 1

    fields = [("description", spec.description)]
    fields += [(f"dims: {d.name}", d.doc) for d in spec.dims]
    fields += [(f"trials: {t.name}", t.why) for t in spec.trials]
    return [
        Problem(f"{field}: still the scaffold's placeholder {text!r}", str(path), line_of(text))
        for field, text in fields
        if PLACEHOLDER_RE.match(text or "")
    ]


def _may_define(tree: ast.Module, name: str) -> bool:
    """Whether the module's own statements (not its functions' or classes' bodies) bind
    `name`, or may (a `*` import, a module `__getattr__`): only a sure absence is reported."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name in (name, "__getattr__"):
                return True
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*" or (alias.asname or alias.name.split(".")[0]) == name:
                    return True
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _is_count(value: Any) -> bool:
    """A number of bytes or FLOPs: a finite real >= 0 (numpy's integers too), not a bool."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    number = float(value)
    return math.isfinite(number) and number >= 0


def roofline_error(
    spec: KernelSpec,
    label: str,
    dims: Dims,
    exc: BaseException,
    where: str | None = None,
    line: int | None = None,
) -> Problem:
    """`bytes_moved(rows=8, cols=4) raised ZeroDivisionError: ...`, located at the line of
    the kernel's own code that raised (else at `where`:`line`, the spec)."""
    folder = spec.folder.resolve()
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        file = Path(frame.f_code.co_filename)
        if file.is_absolute() and file.is_relative_to(folder):
            where, line = str(file), lineno  # the innermost such frame wins
    if where is None:
        spec_file = spec.spec_file or spec.folder / SPEC_FILE
        where, line = str(spec_file), spec_line(spec_file)
    return Problem(
        f"{label}({spec.shape(dims)}) raised {type(exc).__name__}: {exc}".splitlines()[0],
        where,
        line,
    )


def _guard_roofline(spec: KernelSpec) -> None:
    """Make a raise in the spec's `flops` / `bytes_moved` (at dims no trial point has, such
    as a `--config` of the command line) a located KbError instead of a traceback."""
    for label in ("flops", "bytes_moved"):
        fn = getattr(spec, label)
        if not callable(fn) or getattr(fn, "_kbopt_guarded", False):
            continue

        def guarded(dims: Dims, _fn: Callable[[Dims], int] = fn, _label: str = label) -> int:
            try:
                return _fn(dims)
            except KbError:
                raise
            except Exception as exc:
                raise roofline_error(spec, _label, dims, exc) from None

        guarded._kbopt_guarded = True  # type: ignore[attr-defined]
        setattr(spec, label, guarded)


# ---------------------------------------------------------------------- trial points


def dims_from_text(spec: KernelSpec, text: str) -> dict[str, int]:
    """`rows=8192, hidden=4096` or positional `8192,4096` (all dims, declaration order).

    With `name=value` items, dims left out take their value from the first trial point.
    """
    parts = comma_items(text.replace(";", ","), f"configuration {text!r}", "items")
    if not parts:
        raise KbError(f"configuration {text!r} names no dimension ({spec.shape(_first(spec))})")
    out: dict[str, int] = {}
    if all("=" not in p for p in parts):
        if len(parts) != len(spec.dims):
            raise KbError(
                f"configuration {text!r} gives {len(parts)} value(s); {spec.name} has "
                f"{len(spec.dims)} dims ({', '.join(spec.dim_names)}): write them in that order "
                f"or as name=value"
            )
        pairs = list(zip(spec.dim_names, parts, strict=True))
    else:
        pairs = []
        for p in parts:
            key, eq, value = p.partition("=")
            if not eq:
                raise KbError(f"configuration item {p!r} is not name=value")
            pairs.append((key.strip(), value.strip()))
        out.update(_first(spec))
    from kbopt.vocab import VALUE_MAX  # the largest dim a profile may carry

    given: set[str] = set()
    for key, value in pairs:
        if key not in spec.dim_names:
            raise KbError(
                f"configuration {text!r}: {key!r} is not a dimension of {spec.name} "
                f"({', '.join(spec.dim_names)})"
            )
        if not re.fullmatch(r"[0-9]+", value):
            raise KbError(f"configuration {text!r}: {key}={value!r} is not a positive integer")
        if len(value.lstrip("0")) > 16 or int(value) > VALUE_MAX:  # int() refuses 4300+ digits
            raise KbError(f"configuration {text!r}: {key} is above {VALUE_MAX:g}")
        if int(value) < 1:
            raise KbError(f"configuration {text!r}: {key} must be at least 1")
        if key in given:
            raise KbError(f"configuration {text!r}: {key} is given twice")
        given.add(key)
        out[key] = int(value)
    return {n: out[n] for n in spec.dim_names}


def _first(spec: KernelSpec) -> dict[str, int]:
    return dict(spec.trials[0].dims) if spec.trials else {}
