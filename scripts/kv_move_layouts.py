"""How SGLang's in-place KV move lays its tile out over warps, compiled for sm_90 without a
GPU, beside what its measured runs found at each configuration.

    .venv/bin/python scripts/kv_move_layouts.py            # writes results/ptx/kv-move-layouts-*.json
    .venv/bin/python scripts/kv_move_layouts.py --no-write
    .venv/bin/python scripts/kv_move_layouts.py --json      # the rows, for a program

`copy_all_layer_kv_cache_tiled` (benchmarks/foreign/sglang_kv_move, fetched into
third_party/) loads a [slots, bytes] tile of source rows and stores it to the target rows
of the same buffer, and a request's targets overlap its sources.  Triton orders a thread's
own load and store of an address, but nothing across warps (it places no barrier between
global loads and stores).  So the copy is safe only while every byte column of the tile is
one thread's: while the compiled layout puts all warps along the bytes.  For each
configuration the held-out ablation measured (`results/ablation/*sglang_kv_move*.json`),
this script compiles the kernel with the installed Triton for sm_90 and reads the tile's
`warpsPerCTA` from its TTGIR, then counts the runs' correct and wrong results there.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import codegen_results

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from foreign import _common  # noqa: E402
from foreign.sglang_kv_move import launcher, reference  # noqa: E402

SOURCE = "sglang_kv_move"
ELEMENT_BYTES = 2  # the spec's bf16 rows: the row's bytes pick SGLang's default tile and warps
SIGNATURE = {
    "data_ptrs": "*u64",
    "strides": "*i64",
    "tgt_loc_ptr": "*i64",
    "src_loc_ptr": "*i64",
    "num_locs": "i32",
    "num_locs_upper": "constexpr",
    "BYTES_PER_TILE": "constexpr",
}
# the tile of rows x bytes: the layout of the 2-D tensors the kernel loads and stores
TILE_LAYOUT = re.compile(r"#blocked\d* = #ttg\.blocked<\{[^}]*warpsPerCTA = \[(\d+), (\d+)\]")


def _measured(root: Path) -> dict[tuple[int, int, int], Counter[str]]:
    """(bytes per tile, slots in the widest tile, warps) -> the runs' trial statuses there."""
    found: dict[tuple[int, int, int], Counter[str]] = {}
    for path in sorted((root / "results" / "ablation").glob(f"*-{SOURCE}-*.json")):
        doc = json.loads(path.read_text())
        dims = doc["config"]["dims"]
        row_bytes = int(dims["kv_heads"]) * int(dims["head_dim"]) * ELEMENT_BYTES
        tile0, cap0, warps0 = launcher.sglang_config(row_bytes)
        moved = sum(reference.accepted(int(dims["reqs"]), int(dims["draft_tokens"])))
        for row in doc["rows"]:
            for trial in row["trajectory"]:
                v = trial["values"]
                tile, cap = v["bytes_per_tile"] or tile0, v["locs_cap"] or cap0
                # the launcher's widest chunk: its tile of slots is the next power of two
                key = (tile, launcher._next_pow2(min(moved, cap)), v["num_warps"] or warps0)
                found.setdefault(key, Counter())[trial["status"]] += 1
    return found


def warps_per_cta(slots: int, tile: int, warps: int) -> tuple[int, int] | None:
    """The tile's warps along (slots, bytes), or None when the kernel does not compile."""
    kernel = _common.load_source(SOURCE).copy_all_layer_kv_cache_tiled
    constexprs = {"num_locs_upper": slots, "BYTES_PER_TILE": tile}
    try:
        compiled = codegen_results.compile_sm90(
            kernel, SIGNATURE, constexprs, num_warps=warps, num_stages=launcher.SGLANG_STAGES
        )
    except Exception:  # e.g. a tile too large to compile
        return None
    layouts = TILE_LAYOUT.findall(compiled.asm["ttgir"])
    return (int(layouts[0][0]), int(layouts[0][1])) if layouts else None


def measure() -> codegen_results.Rows:
    rows = []
    for (tile, slots, warps), statuses in sorted(_measured(ROOT).items()):
        if statuses.keys() <= {"error"}:
            continue  # refused by the launcher or failed to run: no result to explain
        split = warps_per_cta(slots, tile, warps)
        rows.append(
            {
                "bytes_per_tile": tile,
                "slots": slots,
                "num_warps": warps,
                "warps_per_cta": list(split) if split else None,
                "slots_split_across_warps": bool(split and split[0] > 1),
                "correct": statuses.get("ok", 0),
                "wrong": statuses.get("wrong", 0),
            }
        )
    return rows


def _line(r: dict) -> str:
    where = "slots split across warps" if r["slots_split_across_warps"] else "warps along bytes"
    return (
        f"{r['bytes_per_tile']:>5} B x {r['slots']:>3} slots, {r['num_warps']:>2} warps: "
        f"warpsPerCTA {r['warps_per_cta']}  {where:<25} correct {r['correct']}, wrong {r['wrong']}"
    )


def main(argv: list[str] | None = None) -> int:
    if _common.missing_sources(SOURCE):
        print(f"kv_move_layouts: {_common.fetch_hint(SOURCE)} first", file=sys.stderr)
        return 2
    return codegen_results.run(
        "kv_move_layouts.py",
        __doc__ or "",
        measure=measure,
        line=_line,
        stem="kv-move-layouts",
        what="the KV move's tile layout over warps, compiled for sm_90 without a GPU, "
        "beside its measured correct and wrong results",
        target="cuda sm_90, Triton's TTGIR of copy_all_layer_kv_cache_tiled, "
        f"{launcher.SGLANG_STAGES} stages",
        argv=argv,
    )


if __name__ == "__main__":
    sys.exit(main())
