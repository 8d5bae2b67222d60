"""What the CPU-only code-generation scripts share (`triton_math_ptx.py`,
`triton_sass_per_element.py`): their command line, the refusal under Triton's
interpreter, and the results file under results/ptx/.

Each script compiles small Triton kernels for sm_90 without a GPU and counts instructions;
`run` parses `--no-write` / `--json`, measures, prints the table the script formats, and
writes the rows with the date, command, versions and target.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from typing import Any

import results_file
import triton
from triton.backends.compiler import GPUTarget

Rows = list[dict[str, Any]]
SM90 = GPUTarget("cuda", 90, 32)


def compile_sm90(
    fn: Any, signature: dict[str, str], constexprs: dict[str, Any], **options: int
) -> Any:
    """`fn` compiled for sm_90 by the installed Triton, no GPU needed (Triton runs ptxas
    itself); `options` such as num_warps and num_stages, Triton's defaults otherwise."""
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
    return triton.compile(src, target=SM90, options=options or None)


def run(
    script: str,
    doc: str,
    *,
    measure: Callable[[], Rows],
    line: Callable[[dict[str, Any]], str],
    stem: str,
    what: str,
    target: str,
    argv: list[str] | None = None,
) -> int:
    """The script's main: `script` its file name, `doc` its docstring, `line` one table
    line per row, `stem` the results file's name before its timestamp."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--no-write", action="store_true", help="print the table only")
    p.add_argument("--json", action="store_true", help="print the rows as JSON (writes nothing)")
    args = p.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET") == "1":
        # Under the interpreter @triton.jit functions cannot be compiled.
        name = script.removesuffix(".py")
        print(f"{name}: unset TRITON_INTERPRET (it compiles kernels)", file=sys.stderr)
        return 2
    rows = measure()
    if args.json:
        print(json.dumps(rows))
        return 0
    for r in rows:
        print(line(r))
    if args.no_write:
        return 0
    results_file.write(
        "ptx",
        stem,
        script,
        [],
        what,
        versions={"triton": triton.__version__, "python": platform.python_version()},
        target=target,
        rows=rows,
    )
    return 0
