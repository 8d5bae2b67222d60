"""An agent's write is refused when an import names what its project module does not define."""

from __future__ import annotations

from pathlib import Path

from kbopt.agents import roles
from kbopt.agents.import_check import import_problems
from tests.agents.test_tools import ctx_for, err, ok


def test_a_guessed_name_is_refused_with_the_module_exports(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    guess = "from kernels.toy.toy_v1 import launch_kernel\n\nprint(launch_kernel(1))\n"
    message = err(ctx, "write_file", {"path": "kernels/toy/bench_all.py", "content": guess})
    assert "kernels/toy/bench_all.py:1: kernels.toy.toy_v1 has no 'launch_kernel'" in message
    # the refusal lists what list_exports lists for the module
    listed = ok(ctx, "list_exports", {"module": "kernels.toy.toy_v1"})
    assert f"it exports: {', '.join(n['name'] for n in listed['names'])}" in message
    assert not (project / "kernels/toy/bench_all.py").exists()  # nothing landed
    # the real name, a relative import, a submodule and an installed package all pass
    good = (
        "import math\nimport kernels.toy.toy_v1\nfrom kernels.toy import toy_v1\n"
        "from .toy_v1 import BLOCK, launch\nfrom kernels.toy.toy_v1 import FAKE_FLOOR_US\n"
    )
    ok(ctx, "write_file", {"path": "kernels/toy/bench_all.py", "content": good})


def test_a_guessed_module_and_a_relative_guess_are_refused(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    for content, expected in (
        ("from kernels.toy.common import launch\n", "no module kernels.toy.common"),
        ("import kernels.toy.toy_v9\n", "no module kernels.toy.toy_v9"),
        ("def f():\n    from .toy_v1 import run\n", "kernels.toy.toy_v1 has no 'run'"),
    ):
        assert expected in err(ctx, "write_file", {"path": "kernels/toy/x.py", "content": content})


def test_an_edit_is_judged_on_the_imports_it_adds(project: Path) -> None:
    ctx = ctx_for(project, roles.TRITON)
    target = project / "kernels/toy/user.py"
    # an old guessed import already in the file does not block an unrelated edit ...
    target.write_text("from kernels.toy.toy_v1 import old_guess\nX = 1\n")
    ok(ctx, "backup_file", {"path": "kernels/toy/user.py"})
    ok(ctx, "edit_file", {"path": "kernels/toy/user.py", "old": "X = 1", "new": "X = 2"})
    # ... but an edit that adds one is refused and leaves the file as it was
    message = err(
        ctx,
        "edit_file",
        {"path": "kernels/toy/user.py", "old": "X = 2", "new": "from .toy_v1 import tile\nX = 3"},
    )
    assert "has no 'tile'" in message and "launch" in message
    assert target.read_text().endswith("X = 2\n")


def test_names_bound_in_try_blocks_and_module_getattr_count(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("try:\n    import numpy as np\nexcept ImportError:\n    np = None\n")
    (pkg / "b.py").write_text("def __getattr__(name):\n    return name\n")
    text = "from pkg.a import np\nfrom pkg.b import anything\nfrom pkg.a import nope\n"
    problems = import_problems(tmp_path, Path("user.py"), text)
    # exports are what list_exports shows (the try block's np is not a public definition)
    assert problems == ["user.py:3: pkg.a has no 'nope' (pkg/a.py); it exports no public name"]
