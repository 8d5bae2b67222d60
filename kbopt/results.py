"""A kernel's results rows on disk: read them, and pick and order the ones a report shows.

`kbopt bench KERNEL` (`kbopt.bench.suite`) writes JSON lists of rows to
`<kernel folder>/results/*.json`; the devlog generator (`kbopt.devlog_results`) and LEARN
(`kbopt.learn_lessons`) read them here, so both see the same rows in the same order:

- every `*.json` of the folder that is a list of rows (objects with a `version` and a
  `config`), each row tagged with the file it came from (`_file`), oldest run first (by the
  row's `date`, then the file name: files written by different tools do not sort by time
  on their names alone); Nsight Compute's files (`ncu-*`) and other tools' records kept
  beside the rows (`kbopt profile` and `kbopt tune` outputs) are not rows and are skipped;
- a row's dims come from its `dims` object; rows written before kbopt had kernel specs
  (MLA decode's first files) carry them as top-level keys only, so those are read too;
- rows fall in three groups: the spec's versions (`<family>_v<N>`), baselines (the spec's
  `compare_with` versions and the other versions of their families, e.g. MLA's
  `torch_fp32_softmax` beside `torch`), and any other family (a tile sweep's variants),
  which reports list apart.

Nothing here imports torch: reading results works on any machine.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kbopt.errors import KbError
from kbopt.kernel import VERSION_RE, KernelSpec

Row = dict[str, Any]

RESULTS_DIR = "results"
NCU_PREFIX = "ncu-"
# The dims of MLA decode's rows from before kernel specs (no `dims` object in the row).
LEGACY_DIMS = ("b", "s", "t", "h")
SHORT_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def results_dir(spec: KernelSpec) -> Path:
    return spec.folder / RESULTS_DIR


def load_rows(folder: Path) -> list[Row]:
    """Every results row of a folder, oldest run first, each with its file as `_file`."""
    rows: list[Row] = []
    if not folder.is_dir():
        return rows
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith(NCU_PREFIX):
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise KbError(f"{path}: not a results file ({exc})") from None
        if not is_rows(data):
            continue  # another tool's record (a profile, a tuning run), not results rows
        for r in data:
            rows.append({**r, "_file": path.name})
    rows.sort(key=lambda r: (str(r.get("date", "")), r["_file"]))
    return rows


def is_rows(data: Any) -> bool:
    """A JSON value that is a list of results rows (what `kbopt bench` writes)."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(r, dict) and "version" in r and "config" in r for r in data)
    )


def row_dims(row: Mapping[str, Any], dim_names: Sequence[str]) -> dict[str, int]:
    """The row's dims: its `dims` object, else the top-level keys (older rows)."""
    dims = row.get("dims")
    if isinstance(dims, Mapping):
        return {k: int(v) for k, v in dims.items()}
    names = dim_names or LEGACY_DIMS
    return {n: int(row[n]) for n in names if isinstance(row.get(n), int | float)}


def shape(row: Mapping[str, Any], dim_names: Sequence[str], sep: str = ", ") -> str:
    """`b=32, s=1, t=4096`: the row's dims in the spec's order."""
    return sep.join(f"{k}={v}" for k, v in row_dims(row, dim_names).items())


def short_dtype(dtype: str) -> str:
    return SHORT_DTYPES.get(dtype, dtype)


def is_ok(row: Mapping[str, Any]) -> bool:
    return row.get("status") == "ok"


# ---------------------------------------------------------------------- groups


def baseline_families(spec: KernelSpec, rows: Iterable[Mapping[str, Any]]) -> set[str]:
    """Families of the spec's comparison baselines, as the rows record them."""
    out = set(spec.compare_with)
    out |= {str(r.get("family")) for r in rows if r.get("version") in spec.compare_with}
    return out


def is_spec_version(spec: KernelSpec, row: Mapping[str, Any]) -> bool:
    return spec.version_family(str(row.get("version", ""))) is not None


def in_ladder(spec: KernelSpec, row: Mapping[str, Any], baselines: set[str]) -> bool:
    """A spec version or a baseline (the rows of the results table and measured lines)."""
    return is_spec_version(spec, row) or row.get("family") in baselines


def other_families(spec: KernelSpec, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Families that are neither the spec's nor a baseline's (e.g. a tile sweep)."""
    base = baseline_families(spec, rows)
    return sorted({str(r.get("family")) for r in rows if not in_ladder(spec, r, base)})


def device_of(row: Mapping[str, Any]) -> str:
    """The GPU a row was measured on; "" for a row that names none."""
    return str(row.get("device") or "")


def devices(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The GPUs correct rows were measured on, the one with the most rows first (the
    kernel's usual machine), then by name."""
    counts = Counter(device_of(r) for r in rows if is_ok(r))
    return sorted(counts, key=lambda d: (-counts[d], d))


def on_device(rows: Iterable[Row], device: str) -> list[Row]:
    """The rows measured on one GPU (`devices` names them)."""
    return [r for r in rows if device_of(r) == device]


def newest(
    spec: KernelSpec, rows: Sequence[Row], device: str | None = None
) -> dict[tuple[str, str], Row]:
    """(config, version) -> the newest row where it ran correctly (spec versions, baselines),
    on one GPU when `device` names it: times from two GPUs do not compare."""
    base = baseline_families(spec, rows)
    best: dict[tuple[str, str], Row] = {}
    for r in rows if device is None else on_device(rows, device):
        # oldest first: a later row replaces an earlier one
        if is_ok(r) and in_ladder(spec, r, base):
            best[(r["config"], r["version"])] = r
    return best


def newest_of(rows: Iterable[Row], version: str) -> dict[str, Row]:
    """config -> the newest ok row of one version (any family, sweep variants included)."""
    out: dict[str, Row] = {}
    for r in rows:
        if r.get("version") == version and is_ok(r):
            out[r["config"]] = r
    return out


# ---------------------------------------------------------------------- order


def config_key(spec: KernelSpec, config: str) -> tuple[int, str]:
    """The spec's trial order first, then any other configuration by name."""
    names = [t.name for t in spec.trials]
    return (names.index(config) if config in names else len(names), config)


def ladder_key(spec: KernelSpec, row: Mapping[str, Any]) -> tuple[int, int, int, str]:
    """Baselines first (in `compare_with` order, by version or family), then the spec's
    families in declared order, each by version number."""
    version, family = str(row.get("version", "")), str(row.get("family", ""))
    m = VERSION_RE.match(version)
    if m is None or spec.version_family(version) is None:
        cw = spec.compare_with
        rank = cw.index(version) if version in cw else cw.index(family) if family in cw else len(cw)
        return (0, rank, 0, version)
    fam = m["family"]
    rank = spec.families.index(fam) if fam in spec.families else len(spec.families)
    return (1, rank, int(m["number"]), version)


def previous_version(version: str) -> str | None:
    """`triton_v3` -> `triton_v2`: the ladder step a version is compared with."""
    m = VERSION_RE.match(version)
    if m is None or int(m["number"]) <= 1:
        return None
    return f"{m['family']}_v{int(m['number']) - 1}"


def compared_with(rows: Sequence[Row], row: Row) -> Row | None:
    """The row a version's measurement is compared with: the nearest earlier version of its
    family timed correctly in the same run (results file) and configuration, so that both sides
    share one machine state and one set of measured ceilings; else the newest row of the
    ladder step just before it, from whatever run measured it on the same GPU (none when only
    another GPU ran it: the difference would be the machine's, not the change's)."""
    m = VERSION_RE.match(str(row["version"]))
    if m is None:
        return None
    number = int(m["number"])
    same_run = [
        (int(mm["number"]), r)
        for r in rows
        if r.get("_file") == row.get("_file")
        and r.get("config") == row["config"]
        and is_ok(r)
        and (mm := VERSION_RE.match(str(r["version"]))) is not None
        and mm["family"] == m["family"]
        and int(mm["number"]) < number
    ]
    if same_run:
        return max(same_run, key=lambda nr: nr[0])[1]
    prev = previous_version(str(row["version"]))
    if prev is None:
        return None
    return newest_of(on_device(rows, device_of(row)), prev).get(row["config"])


def software(row: Mapping[str, Any]) -> str:
    """`torch 2.11.0, triton 3.6.0, CUDA 13.0[, nvidia-cutlass-dsl 4.3.5]` of one row."""
    parts = [
        f"{label} {row[key]}"
        for key, label in (("torch", "torch"), ("triton", "triton"), ("cuda", "CUDA"))
        if row.get(key)
    ]
    if row.get("cutlass_dsl"):
        parts.append(f"nvidia-cutlass-dsl {row['cutlass_dsl']}")
    return ", ".join(parts)
