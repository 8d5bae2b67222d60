"""Running a CPU-only code-generation script (scripts/triton_math_ptx.py,
scripts/triton_sass_per_element.py) in a process of its own: the kernel tests' conftest sets
TRITON_INTERPRET=1 for the whole test process, and under the interpreter Triton does not
compile."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def run_codegen(script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
