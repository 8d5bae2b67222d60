"""A devlog's generated blocks, rebuilt from the kernel's results: `kbopt devlog KERNEL`.

`docs/kernels/<kernel>.md` belongs to people; the blocks between `<!-- GEN:name -->` and
`<!-- /GEN:name -->` are this module's, and nothing in them is typed by hand:

- `results`: per configuration (the spec's trial order), the roofline floor and the
  ceilings it was computed from, the best spec version per call (and from CUDA-graph
  replay when rows have it), and a table of every version's newest correct row --
  baselines first, then the spec's families in order -- with time, GB/s, TFLOP/s, % of
  floor, speed-ups against the spec's `compare_with` baselines, graph and host times when
  measured, and what each launch recorded (registers, splits...); then the software and
  the commands of those rows;
- `measured:<version>`: one line per configuration for that version's devlog entry, with
  the change against the previous step of its ladder (`triton_v3` against `triton_v2`);
- `profiles`: the Nsight Compute sessions in results/, as profile contracts
  (`kbopt.devlog_profiles`);
- `<family>`, for any family of rows that is neither the spec's nor a baseline's (MLA
  decode's `sweep` of tile variants): every row of that family, failures included.

Rows come from `kbopt.results`; the newest correct row per (configuration, version)
wins.  Text outside the blocks is kept byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbopt import results as res
from kbopt.devlog_options import DevlogOptions, load_options
from kbopt.errors import KbError
from kbopt.kernel import KernelSpec

GEN_BLOCK = re.compile(
    r"(<!-- GEN:(?P<name>[\w:.-]+) -->\n)(?P<body>.*?)(<!-- /GEN:(?P=name) -->)", re.S
)
# Launch-record columns the tables know a short heading for; others show under their name.
KERNEL_COLUMNS = {
    "n_regs": "regs",
    "n_spills": "spills",
    "shared": "smem (B)",
    "splits": "splits",
    "ptx_sha256": "PTX sha256",
}
SOFTWARE = (("torch", "torch"), ("triton", "triton"), ("cuda", "CUDA"))


def block_names(text: str) -> list[str]:
    return [m["name"] for m in GEN_BLOCK.finditer(text)]


@dataclass
class Context:
    """What every block of one kernel's devlog is rendered from."""

    spec: KernelSpec
    rows: list[res.Row]
    results: Path  # the kernel's results folder
    rel: str  # the same folder as the devlog cites it (from the project root)
    options: DevlogOptions
    command: str  # how to run the benchmark, for an empty block

    @classmethod
    def for_spec(cls, spec: KernelSpec, root: Path) -> Context:
        folder = res.results_dir(spec)
        try:
            rel = folder.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = folder.as_posix()
        return cls(
            spec=spec,
            rows=res.load_rows(folder),
            results=folder,
            rel=rel,
            options=load_options(spec.folder),
            command=f"kbopt bench {spec.name}",
        )


# ---------------------------------------------------------------------- helpers


def _fmt(v: Any, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def _kernel_cell(r: res.Row, key: str) -> str:
    """One launch-record cell; a PTX fingerprint shows its first 12 hex digits (as the
    fingerprint check prints them), enough to tell kernels apart in a table."""
    v = r.get(f"kernel_{key}", "-")
    return v[:12] if key == "ptx_sha256" and isinstance(v, str) else str(v)


def _kernel_columns(rows: Sequence[res.Row]) -> list[str]:
    """`kernel_<x>` fields with a plain value in any row: the known ones first."""
    keys = {
        k.removeprefix("kernel_")
        for r in rows
        for k, v in r.items()
        if k.startswith("kernel_") and isinstance(v, int | float | str) and k != "kernel_"
    }
    known = [k for k in KERNEL_COLUMNS if k in keys]
    return known + sorted(keys - set(known))


def _speedup(ctx: Context, r: res.Row, baseline: str) -> float | None:
    """`r`'s speed-up over `baseline`: as the bench recorded it, else from the baseline's
    correct row at the same configuration in the same results file (a baseline added to
    `compare_with` after the run, or measured but not compared at the time)."""
    recorded = r.get(f"speedup_vs_{baseline}")
    if recorded is not None:
        return float(recorded)
    for o in ctx.rows:
        if (
            o["_file"] == r["_file"]
            and o["config"] == r["config"]
            and o.get("version") == baseline
            and res.is_ok(o)
            and r.get("time_us")
        ):
            return float(o["time_us"]) / float(r["time_us"])
    return None


def _speedups(ctx: Context, r: res.Row) -> str:
    found = [(b, _speedup(ctx, r, b)) for b in ctx.spec.compare_with]
    parts = [f"{x:.2f}x {b}" for b, x in found if x is not None]
    if not parts:
        return "no baseline in the same run"
    return ", ".join(parts) + " (measured side by side)"


def _verdict(ctx: Context, pct: float) -> str:
    target = ctx.options.target_pct
    return f"{'meets' if pct >= target else 'misses'} the {target:g}% target"


# ---------------------------------------------------------------------- blocks


def results_block(ctx: Context) -> str:
    """Per GPU (the kernel's usual one first, its sections as before; another GPU's named in
    each heading), per configuration: the floor, the best versions and every version's newest
    row on that GPU; then the software and commands of all of them."""
    spec = ctx.spec
    newest = {
        device: found
        for device in res.devices(ctx.rows)
        if (found := res.newest(spec, ctx.rows, device))
    }
    if not newest:
        return f"_No results yet: run `{ctx.command}`._\n"
    every = [r for found in newest.values() for r in found.values()]
    optional = [
        (key, head)
        for key, head in (
            ("time_us_repeat", "repeat (us)"),
            ("time_us_graph", "graph (us)"),
        )
        if any(r.get(key) is not None for r in every)
    ]
    graph_pct = any(r.get("pct_of_floor_graph") is not None for r in every)
    host = any(r.get("host_us_per_call") is not None for r in every)
    kcols = _kernel_columns(every)
    head = ["version", "time (us)", *(h for _, h in optional), "% of floor"]
    head += ["% of floor (graph)"] if graph_pct else []
    head += ["host (us/call)"] if host else []
    head += ["GB/s", "TFLOP/s", *(f"x {b}" for b in spec.compare_with), "rel. err"]
    head += [KERNEL_COLUMNS.get(k, k) for k in kcols] + ["results file"]
    cols = _Columns(head, optional, graph_pct, host, kcols, res.short_dtype(spec.dtype))
    out = []
    usual = next(iter(newest))
    for device, found in newest.items():
        on = "" if device == usual else f" on {device or 'an unnamed GPU'}"
        configs = sorted({c for c, _ in found}, key=lambda c: res.config_key(spec, c))
        for cfg in configs:
            vrows = sorted(
                (r for (c, _), r in found.items() if c == cfg),
                key=lambda r: res.ladder_key(spec, r),
            )
            out += _config_section(ctx, f"{cfg}{on}", vrows, cols)
            out.append("")
    software = sorted(
        {
            ", ".join(
                [str(r["device"])]
                + [f"{label} {r[key]}" for key, label in SOFTWARE if r.get(key) is not None]
            )
            for r in every
        }
    )
    out.append(
        "Software: "
        + "; ".join(software)
        + ". Commands: "
        + "; ".join(f"`{c}`" for c in sorted({str(r.get("command", "")) for r in every}))
        + "\n"
    )
    return "\n".join(out)


@dataclass(frozen=True)
class _Columns:
    """The results tables' columns, the same for every GPU and configuration."""

    head: list[str]
    optional: list[tuple[str, str]]  # (row key, heading) of the optional time columns
    graph_pct: bool
    host: bool
    kcols: list[str]
    dtype: str


def _config_section(ctx: Context, title: str, vrows: list[res.Row], cols: _Columns) -> list[str]:
    """One configuration's heading, floor, best versions and table, from rows of one GPU."""
    spec = ctx.spec
    latest = max(vrows, key=lambda r: (str(r.get("date", "")), r["_file"]))
    out = [f"### {title}: {res.shape(latest, spec.dim_names)}\n"]
    dtype, head, optional, kcols = cols.dtype, cols.head, cols.optional, cols.kcols
    graph_pct, host = cols.graph_pct, cols.host
    out.append(
        f"Floor {latest['floor_us']:.1f} us ({latest['floor_bound']}-bound: "
        f"{latest['bytes'] / 1e6:.1f} MB over {latest['copy_bw_gbps']:.0f} GB/s copy "
        f"bandwidth, {latest['flops'] / 1e9:.1f} GFLOP over {latest['matmul_tflops']:.0f} "
        f"TFLOP/s {dtype} matmul, both measured in the same run on {latest['device']}, "
        f"{latest['_file']}). Every row's % of floor uses the ceilings measured in its own "
        "run.\n"
    )
    best = max(
        (r for r in vrows if res.is_spec_version(spec, r)),
        key=lambda r: r["pct_of_floor"],
        default=None,
    )
    if best is not None:
        out.append(
            f"Best kernel version, per-call time: **{best['version']}**, "
            f"{best['time_us']:.1f} us = {best['pct_of_floor']:.1f}% of the floor "
            f"({_verdict(ctx, best['pct_of_floor'])}), {_speedups(ctx, best)}.\n"
        )
        spread = _floor_spread(spec, vrows, latest)
        if spread is not None:
            out.append(spread)
    graphed = [r for r in vrows if r.get("pct_of_floor_graph") is not None]
    if graphed:
        g = max(graphed, key=lambda r: r["pct_of_floor_graph"])
        out.append(
            "Best GPU time (the call replayed from a CUDA graph, same L2 flush and input "
            f"rotation, so no Python launch time): **{g['version']}**, "
            f"{g['time_us_graph']:.1f} us = {g['pct_of_floor_graph']:.1f}% of the floor "
            f"({_verdict(ctx, g['pct_of_floor_graph'])}). Where `host (us/call)` exceeds "
            "the GPU time, the per-call time measures Python, not the kernel.\n"
        )
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for r in vrows:
        cells = [r["version"], f"{r['time_us']:.1f}"]
        cells += [_fmt(r.get(key)) for key, _ in optional]
        cells.append(f"{r['pct_of_floor']:.1f}")
        cells += [_fmt(r.get("pct_of_floor_graph"))] if graph_pct else []
        cells += [_fmt(r.get("host_us_per_call"))] if host else []
        cells += [f"{r['gbps']:.0f}", f"{r['tflops']:.1f}"]
        cells += [_fmt(_speedup(ctx, r, b), ".2f") for b in spec.compare_with]
        cells.append(f"{r['rel_err']:.1e}")
        cells += [_kernel_cell(r, k) for k in kcols]
        cells.append(r["_file"])
        out.append("| " + " | ".join(cells) + " |")
    return out


# Floors (the same bytes and FLOPs over each run's measured ceilings) that differ between
# runs by more than this make their rows' % of floor disagree by as much, whatever the
# kernels did.
FLOOR_SPREAD_PCT = 5.0


def _floor_spread(spec: KernelSpec, vrows: list[res.Row], latest: res.Row) -> str | None:
    """A note when the rows come from runs whose floors for this configuration differ by
    more than FLOOR_SPREAD_PCT: the best by % of floor then compares the runs' ceilings as
    much as the kernels, so the fastest kernel version of the newest run (`latest`'s) is
    named too."""
    by_run = {r["_file"]: float(r["floor_us"]) for r in vrows if r.get("floor_us")}
    if len(by_run) < 2:
        return None
    low, high = min(by_run.values()), max(by_run.values())
    apart = (high - low) / low * 100
    if apart <= FLOOR_SPREAD_PCT:
        return None
    newest = [
        r
        for r in vrows
        if r["_file"] == latest["_file"] and res.is_spec_version(spec, r) and r.get("time_us")
    ]
    fastest = min(newest, key=lambda r: r["time_us"], default=None)
    named = (
        f" In the newest run alone ({latest['_file']}) the fastest kernel version is "
        f"**{fastest['version']}**, {fastest['time_us']:.1f} us."
        if fastest is not None
        else ""
    )
    return (
        f"The runs in this table put the floor between {low:.1f} and {high:.1f} us ({apart:.1f}% "
        "apart: the ceilings measured on each machine differ), so % of floor compares versions "
        f"fairly only within one run.{named}\n"
    )


def family_block(ctx: Context, family: str) -> str:
    """Every row of a family outside the ladder (e.g. a tile sweep), failures included."""
    rows = [r for r in ctx.rows if r.get("family") == family]
    if not rows:
        return f"_No {family} rows yet._\n"
    kcols = _kernel_columns(rows)
    head = ["config", "variant", "status", "time (us)", "% of floor"]
    head += [KERNEL_COLUMNS.get(k, k) for k in kcols] + ["results file"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = sorted(
        rows, key=lambda r: (res.config_key(ctx.spec, r["config"]), r["_file"], r["version"])
    )
    for r in order:
        ok = res.is_ok(r)
        err = (r.get("error") or "")[:70].replace("|", "/").replace("\n", " ")
        cells = [
            r["config"],
            str(r["version"]).removeprefix(f"{family}:"),
            "ok" if ok else f"{r.get('status', '?')}: {err}",
            _fmt(r.get("time_us")),
            _fmt(r.get("pct_of_floor")),
            *(_kernel_cell(r, k) for k in kcols),
            r["_file"],
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _change(before: res.Row, after: res.Row, key: str) -> float:
    """Speed change in percent from `before` to `after`, on one time column."""
    return 100.0 * (before[key] / after[key] - 1)


def measured_block(ctx: Context, version: str) -> str:
    """One line per configuration and GPU (the kernel's usual one first, others named)."""
    spec = ctx.spec
    parts = []
    devices = res.devices(ctx.rows)
    for device in devices:
        on = "" if device == devices[0] else f" on {device or 'an unnamed GPU'}"
        newest = res.newest(spec, ctx.rows, device)
        for (cfg, v), r in sorted(newest.items(), key=lambda kv: res.config_key(spec, kv[0][0])):
            if v == version:
                parts.append(_measured_line(ctx, r, cfg, on))
    return ("\n".join(parts) or "- not measured yet") + "\n"


def _measured_line(ctx: Context, r: res.Row, cfg: str, on: str) -> str:
    """A version's row at one configuration, with its change against the row it is compared
    with (`results.compared_with`: same run, else the step before on the same GPU)."""
    spec = ctx.spec
    prev_r = res.compared_with(ctx.rows, r)
    delta = ""
    if prev_r:
        # Both speeds when both rows were replayed from a CUDA graph: the per-call one
        # counts Python's launch time (a slow host stretches it; a change of per-call
        # host work shows only there), the graph one the GPU's.
        delta = f", {_change(prev_r, r, 'time_us'):+.0f}% speed per call"
        if r.get("time_us_graph") is not None and prev_r.get("time_us_graph") is not None:
            delta += f" ({_change(prev_r, r, 'time_us_graph'):+.0f}% replayed from a CUDA graph)"
        delta += f" vs {prev_r['version']}"
        delta += "" if prev_r["_file"] == r["_file"] else " (another run)"
    graph = ""
    if r.get("time_us_graph") is not None:
        graph = f"; CUDA graph {r['time_us_graph']:.1f} us, {r['pct_of_floor_graph']:.1f}% of floor"
    return (
        f"- measured{on}, {cfg} ({res.shape(r, spec.dim_names)}): {r['time_us']:.1f} us, "
        f"{r['pct_of_floor']:.1f}% of floor{delta}{graph} ({r['_file']})"
    )


# ---------------------------------------------------------------------- the document


def _renderer(ctx: Context, name: str) -> Callable[[], str]:
    from kbopt.devlog_profiles import profiles_block

    if name == "results":
        return lambda: results_block(ctx)
    if name == "profiles":
        return lambda: profiles_block(ctx.spec, ctx.results, ctx.rel, ctx.options)
    if name.startswith("measured:"):
        return lambda: measured_block(ctx, name.split(":", 1)[1])
    others = res.other_families(ctx.spec, ctx.rows)
    if name in others:
        return lambda: family_block(ctx, name)
    raise KbError(
        f"unknown generated block GEN:{name} (known: results, profiles, measured:<version>"
        + (", " + ", ".join(others) if others else "")
        + ")"
    )


def render(text: str, ctx: Context) -> str:
    """The document with every generated block rebuilt; the rest byte for byte."""
    cache: dict[str, str] = {}

    def body(m: re.Match[str]) -> str:
        name = m["name"]
        if name not in cache:
            cache[name] = _renderer(ctx, name)()
        return m.group(1) + cache[name] + m.group(4)

    return GEN_BLOCK.sub(body, text)


def stale_blocks(old: str, new: str) -> list[str]:
    """Names of the blocks whose bodies differ between two renderings of one document."""
    before = {m["name"]: m["body"] for m in GEN_BLOCK.finditer(old)}
    after = {m["name"]: m["body"] for m in GEN_BLOCK.finditer(new)}
    return [n for n in after if before.get(n) != after[n]]


# ---------------------------------------------------------------------- a kernel's devlog


@dataclass
class DevlogUpdate:
    """What `kbopt devlog` did (or, with --check, found) for one kernel."""

    kernel: str
    path: str
    blocks: list[str]
    stale: list[str]
    written: bool = False
    skipped: str | None = None  # why the kernel was left alone

    def as_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "devlog": self.path,
            "blocks": self.blocks,
            "stale": self.stale,
            "written": self.written,
            "skipped": self.skipped,
        }


def update_devlog(root: Path, spec: KernelSpec, *, check: bool = False) -> DevlogUpdate:
    """Rebuild (or, with `check`, compare) the generated blocks of the kernel's devlog."""
    from kbopt.devlog import devlog_path
    from kbopt.store import atomic_write

    path = devlog_path(root, spec.name)
    shown = _display(path, root)
    if not path.is_file():
        return DevlogUpdate(spec.name, shown, [], [], skipped=f"{shown} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KbError(f"cannot read the devlog {shown}: {exc}") from None
    names = block_names(text)
    if not names:
        return DevlogUpdate(
            spec.name, shown, [], [], skipped=f"{shown} has no <!-- GEN:name --> block"
        )
    new = render(text, Context.for_spec(spec, root))
    stale = stale_blocks(text, new)
    written = False
    if stale and not check:
        atomic_write(path, new)
        written = True
    return DevlogUpdate(spec.name, shown, names, stale, written)


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
