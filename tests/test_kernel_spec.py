"""Kernel specs: validation with clear errors, every way of naming one, the scaffold end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kbopt.bench.backend import FakeBackend
from kbopt.bench.trials import default_matrix, parse_config
from kbopt.cli import main
from kbopt.errors import KbError, ProblemList
from kbopt.kernel import Knob, check_spec, check_versions, clear_cache, load_spec

REPO = Path(__file__).resolve().parent.parent

GOOD_SPEC = """\
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

SPEC = KernelSpec(
    name="{name}",
    description="a test kernel",
    dims=(Dim("rows", "rows", "rows"), Dim("cols", "columns", "row_len")),
    trials=(Trial("big", {{"rows": 1024, "cols": 4096}}, "the shape users run"),),
    backoff_dim="rows",
    make_inputs=lambda dims, **kw: (),
    reference=lambda *a: None,
    flops=lambda d: 0,
    bytes_moved=lambda d: 4 * d["rows"] * d["cols"],
    tolerances={{"bfloat16": 1e-2}},
    entry_point="{name}",
    families=("triton",),
    knobs={{"triton": (Knob("block", "int", (256, 512, 1024), "vector_width"),)}},
)
"""


def write_kernel(root: Path, name: str, spec: str = GOOD_SPEC, package: bool = True) -> Path:
    folder = root / "kernels" / name
    folder.mkdir(parents=True)
    if package:
        (root / "kernels" / "__init__.py").write_text("")
        (folder / "__init__.py").write_text("")
    (folder / "spec.py").write_text(spec.format(name=name))
    (folder / "triton_v1.py").write_text(f"BLOCK = 512\n\n\ndef {name}(*args):\n    return None\n")
    clear_cache()
    return folder


def test_the_bundled_kernels_have_valid_specs() -> None:
    for name in ("mla_decode", "add_rmsnorm"):
        spec = load_spec(name, REPO)
        assert check_spec(spec, spec.spec_file) == []
        assert spec.version_files(), name
    mla = load_spec("mla_decode", REPO)
    assert mla.dim_names == ("b", "s", "t") and mla.backoff_dim == "b"
    assert [c.shape for c in default_matrix(mla)] == ["b=32, s=1, t=4096", "b=32, s=16, t=4096"]
    assert mla.dim_metrics({"b": 32, "s": 1, "t": 4096})["kv_len"] == 4096
    assert mla.knob_values("triton_v7")["block_n"] == 64
    norm = load_spec("add_rmsnorm", REPO)
    assert norm.dim_names == ("rows", "hidden")
    assert norm.shape({"rows": 8192, "hidden": 4096}) == "rows=8192, hidden=4096"


def test_every_way_of_naming_a_spec(tmp_path: Path) -> None:
    folder = write_kernel(tmp_path, "scale")
    by_name = load_spec("scale", tmp_path)
    assert by_name.folder == folder and by_name.package == "kernels.scale"
    assert load_spec(str(folder), tmp_path).name == "scale"  # the folder
    assert load_spec(str(folder / "spec.py"), Path("/")).name == "scale"  # the file, from anywhere
    assert load_spec("kernels/scale/spec.py", tmp_path).name == "scale"  # relative to the root
    assert list(by_name.version_files()) == ["triton_v1"]
    assert by_name.knob_values("triton_v1") == {"block": 512}  # BLOCK = 512, read from source
    assert load_spec("kernels.mla_decode.spec:SPEC", REPO).name == "mla_decode"


def test_two_projects_kernels_packages_load_in_one_process(tmp_path: Path) -> None:
    # Both projects call their package `kernels`: loading one's versions must not make
    # the other's unimportable (an agent or a test suite works on several projects).
    specs = []
    for project in ("one", "two"):
        folder = write_kernel(tmp_path / project, f"k_{project}")
        (folder / "helpers.py").write_text(f"WHO = {project!r}\n")
        (folder / "triton_v1.py").write_text(
            f"from kernels.k_{project}.helpers import WHO\n\n\n"
            f"def k_{project}(*args):\n    return WHO\n"
        )
        specs.append(load_spec(f"k_{project}", tmp_path / project))
    for spec in (*specs, *specs):
        assert spec.load_version("triton_v1").fn() == spec.name.removeprefix("k_")
    assert load_spec("kernels.mla_decode.spec:SPEC", REPO).name == "mla_decode"
    assert load_spec("k_one", tmp_path / "one").load_version("triton_v1").fn() == "one"
    # the same kernel name in two projects: each project's own files
    for project in ("three", "four"):
        folder = write_kernel(tmp_path / project, "same")
        (folder / "helpers.py").write_text(f"WHO = {project!r}\n")
        (folder / "triton_v1.py").write_text(
            "from kernels.same.helpers import WHO\n\n\ndef same(*args):\n    return WHO\n"
        )
    for project in ("three", "four", "three"):
        clear_cache()
        assert load_spec("same", tmp_path / project).load_version("triton_v1").fn() == project


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("nope", "no kernel 'nope'"),
        ("missing/spec.py", "no kernel spec at missing/spec.py"),
        ("no_such_module:SPEC", "cannot import no_such_module"),
        ("kbopt.kernel:SPEC", "defines no SPEC = KernelSpec"),
    ],
)
def test_naming_errors_are_one_clean_line(tmp_path: Path, ref: str, why: str) -> None:
    with pytest.raises(KbError, match=why):
        load_spec(ref, tmp_path)


def test_a_spec_or_version_that_is_a_folder_is_named_as_such(tmp_path: Path) -> None:
    """Not "spec.py does not exist" nor "no version triton_v2 (known: ..., triton_v2)"."""
    folder = write_kernel(tmp_path, "scale")
    (folder / "triton_v2.py").mkdir()
    with pytest.raises(KbError, match=r"triton_v2\.py: is a folder, not a Python file"):
        spec = load_spec("scale", tmp_path)
        FakeBackend(tmp_path).measure(spec, "triton_v2", default_matrix(spec)[0])
    (folder / "spec.py").unlink()
    (folder / "spec.py").mkdir()
    clear_cache()
    for ref in ("scale", str(folder), str(folder / "spec.py")):
        with pytest.raises(KbError, match=r"spec\.py: is a folder, not a Python file"):
            load_spec(ref, tmp_path)


def test_a_kernel_folder_must_be_a_package_and_import_errors_are_reported(tmp_path: Path) -> None:
    write_kernel(tmp_path, "loose", package=False)
    with pytest.raises(KbError, match="must be a Python package"):
        load_spec("loose", tmp_path)
    write_kernel(tmp_path / "b", "broken", spec="import not_a_module\n")
    with pytest.raises(KbError, match="cannot import the spec: ModuleNotFoundError"):
        load_spec("broken", tmp_path / "b")


def test_shape_metrics_give_a_metric_no_single_dim_is(tmp_path: Path) -> None:
    """A row of two parts: `row_len` is their sum, beside the dims' own metrics."""
    spec_text = GOOD_SPEC.replace(
        'Dim("cols", "columns", "row_len")', 'Dim("cols", "columns"), Dim("tail", "more")'
    ).replace('"cols": 4096}}', '"cols": 4096, "tail": 64}}')
    spec_text = spec_text.replace(
        'entry_point="{name}",',
        'entry_point="{name}", shape_metrics=lambda d: {{"row_len": d["cols"] + d["tail"]}},',
    )
    write_kernel(tmp_path, "two_part", spec=spec_text)
    spec = load_spec("two_part", tmp_path)
    assert spec.dim_metrics({"rows": 8, "cols": 512, "tail": 64}) == {"rows": 8.0, "row_len": 576.0}


@pytest.mark.parametrize(
    ("old", "new", "message", "line"),
    [
        (
            'Dim("cols", "columns", "row_len")',
            'Dim("rows", "again")',
            "'rows' is declared twice",
            6,
        ),
        (
            'Dim("cols", "columns", "row_len")',
            'Dim("cols", "columns", "rows")',
            "rows and cols all map to the catalog metric 'rows', so a profile holds only cols'",
            6,
        ),
        (
            'backoff_dim="rows"',
            'backoff_dim="batch"',
            "backoff_dim 'batch' is not one of the dims",
            8,
        ),
        ('{{"rows": 1024, "cols": 4096}}', '{{"rows": 1024}}', "big lacks cols", 7),
        ('"the shape users run"', '" "', "big needs a reason", 7),
        ('{{"bfloat16": 1e-2}}', '{{"bfloat16": 2}}', "must be a number between 0 and 1", 13),
        ('"row_len"', '"row_length"', "unknown catalog metric 'row_length'", 6),
        ('Dim("rows", "rows", "rows")', 'Dim("config", "rows")', "'config' is reserved", 6),
        (
            '"int", (256, 512, 1024)',
            '"int", (256, "wide")',
            "allows ['wide'], which are not int",
            16,
        ),
        ('entry_point="{name}"', 'entry_point="not a name"', "is not a function name", 14),
        ('"vector_width"', '"vector_widht"', "role 'vector_widht', which no catalog move acts", 16),
        (
            'entry_point="{name}",',
            'entry_point="{name}", matmul_dtype="fp8",',
            "matmul_dtype: unknown dtype 'fp8'",
            14,
        ),
        ('"int", (256, 512, 1024)', '"int", ()', "triton.block allows no value", 16),
        ('"int", (256, 512, 1024)', '"int", (256, 512, 512)', "triton.block lists 512 twice", 16),
        (
            '{{"rows": 1024, "cols": 4096}}',
            '{{"rows": 10**30, "cols": 4096}}',
            "rows=1e+30 is above",
            7,
        ),
        (
            'bytes_moved=lambda d: 4 * d["rows"] * d["cols"]',
            "bytes_moved=lambda d: None",
            "bytes_moved(rows=1024, cols=4096) returned None",
            12,
        ),
        (
            'entry_point="{name}",',
            'entry_point="{name}", shape_metrics=lambda d: {{"row_length": 1}},',
            "shape_metrics: unknown catalog metric 'row_length'",
            14,
        ),
        (
            'entry_point="{name}",',
            'entry_point="{name}", shape_metrics=lambda d: {{"row_len": d["width"]}},',
            "shape_metrics(rows=1024, cols=4096) raised KeyError: 'width'",
            14,
        ),
        (
            'entry_point="{name}",',
            'entry_point="{name}", shape_metrics=lambda d: {{"row_len": "wide"}},',
            "gave row_len='wide'; it must be a number",
            14,
        ),
    ],
)
def test_check_names_every_problem_at_the_line_it_concerns(
    tmp_path: Path, old: str, new: str, message: str, line: int
) -> None:
    assert old in GOOD_SPEC, old
    write_kernel(tmp_path, "bad", spec=GOOD_SPEC.replace(old, new))
    with pytest.raises(ProblemList) as err:
        load_spec("bad", tmp_path)
    text = str(err.value)
    # the field, or the Dim / Trial / Knob, the problem concerns (before: all at SPEC =, line 3)
    assert f"{tmp_path / 'kernels' / 'bad' / 'spec.py'}:{line}: " in text
    assert message in text


def test_a_version_whose_knob_value_is_not_allowed_is_named(tmp_path: Path) -> None:
    folder = write_kernel(tmp_path, "knobby")
    (folder / "triton_v2.py").write_text('"""a version"""\n\nBLOCK = 300\n')
    with pytest.raises(ProblemList, match=r"triton_v2.py:3: knob block=300 is not among"):
        load_spec("knobby", tmp_path)


def test_a_trial_declared_apart_from_spec_is_named_at_its_own_lines(tmp_path: Path) -> None:
    """At the line that names it, inside its own Trial( ... ), not at SPEC =."""
    apart = GOOD_SPEC.replace(
        "\nSPEC = KernelSpec(",
        '\nBIG = Trial(\n    "big",\n    {{"rows": 1024}},\n    "the shape users run",\n)\n'
        "\nSPEC = KernelSpec(",
    ).replace(
        '    trials=(Trial("big", {{"rows": 1024, "cols": 4096}}, "the shape users run"),),',
        "    trials=(BIG,),",
    )
    write_kernel(tmp_path, "apart", spec=apart)
    with pytest.raises(ProblemList) as err:
        load_spec("apart", tmp_path)
    assert f"{tmp_path / 'kernels' / 'apart' / 'spec.py'}:4: trials: big lacks cols" in str(
        err.value
    )


def test_a_version_that_does_not_parse_is_named_at_its_line(tmp_path: Path) -> None:
    folder = write_kernel(tmp_path, "broken")
    (folder / "triton_v2.py").write_text("BLOCK = 512\nx = (1,\n")
    # The spec still loads (triton_v1 can be measured); the broken version is named at its
    # line by `kbopt kernel check` and refused where it is used.
    spec = load_spec("broken", tmp_path)
    where = f"{folder / 'triton_v2.py'}:2: '(' was never closed"
    assert [str(p) for p in check_versions(spec)] == [where]
    with pytest.raises(ProblemList) as err:
        FakeBackend(tmp_path).measure(spec, "triton_v2", default_matrix(spec)[0])
    assert str(err.value) == where
    FakeBackend(tmp_path).measure(spec, "triton_v1", default_matrix(spec)[0])


def test_a_roofline_function_that_raises_is_located_never_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raising = GOOD_SPEC.replace('4 * d["rows"] * d["cols"]', '4 * d["rows"] // 0')
    write_kernel(tmp_path, "zero", spec=raising)
    where = f"{tmp_path / 'kernels' / 'zero' / 'spec.py'}:12: "  # the lambda's line
    with pytest.raises(ProblemList) as err:
        load_spec("zero", tmp_path)
    assert str(err.value) == (
        f"{where}bytes_moved(rows=1024, cols=4096) raised ZeroDivisionError: "
        "integer division or modulo by zero"
    )
    argv = ["--root", str(tmp_path), "profile", "zero", "triton_v1", "--backend", "fake"]
    assert main([*argv, "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == [str(err.value)]
    # At dims no trial point has (a --config of the command line): the same, when measured.
    bounded = GOOD_SPEC.replace('4 * d["rows"] * d["cols"]', '4 * d["cols"] // (d["rows"] < 2048)')
    write_kernel(tmp_path / "b", "bounded", spec=bounded)
    assert main(["--root", str(tmp_path / "b"), "kernel", "check", "bounded"]) == 0
    spec = load_spec("bounded", tmp_path / "b")
    big = parse_config("rows=4096", spec)
    with pytest.raises(KbError, match=r"bytes_moved\(rows=4096, cols=4096\) raised Zero"):
        FakeBackend(tmp_path / "b").measure(spec, "triton_v1", big)


def test_kernel_check_reads_each_version_for_the_entry_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_kernel(tmp_path, "scale")
    (folder / "triton_v2.py").write_text("BLOCK = 512\n\n\ndef scale_renamed(*args):\n    pass\n")
    (folder / "triton_v3.py").write_text("from kernels.scale.triton_v1 import scale as scale\n")
    argv = ["--root", str(tmp_path), "kernel", "check", "scale"]
    assert main(argv) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{folder / 'triton_v2.py'}:1: defines no function scale() (the spec's entry_point, "
        "which every version exports)",
    ]
    (folder / "triton_v2.py").unlink()
    assert main([*argv, "--json"]) == 0 and json.loads(capsys.readouterr().out)["ok"]


def test_kernel_check_of_a_file_that_is_not_a_spec(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("")
    with pytest.raises(KbError, match=r"notes.md: not a kernel spec, which is a Python file"):
        load_spec(str(notes), tmp_path)


def test_knobs_coerce_command_line_text() -> None:
    flag = Knob("evict", "bool", (False, True))
    assert flag.coerce("true") is True and flag.coerce("0") is False
    splits = Knob("splits", "int", (None, 1, 8))
    assert splits.coerce("None") is None and splits.coerce("8") == 8
    assert splits.admits(None) and splits.admits(8) and not splits.admits(True)
    assert not splits.admits(3)


def test_the_fake_cost_model_is_labelled_and_follows_the_source(tmp_path: Path) -> None:
    folder = write_kernel(tmp_path, "scale")
    spec = load_spec("scale", tmp_path)
    backend = FakeBackend(tmp_path)
    cfg = default_matrix(spec)[0]
    first = backend.measure(spec, "triton_v1", cfg)
    assert backend.measure(spec, "triton_v1", cfg).duration_us == first.duration_us  # deterministic
    assert first.device == "fake-gpu" and "--backend fake" in first.command
    assert "not a measurement" in first.note
    assert first.shape_metrics == {"rows": 1024, "row_len": 4096}
    floor = 4 * 1024 * 4096 / 3000e9 * 1e6  # the spec's bytes over the fake copy bandwidth
    assert first.floor_us == pytest.approx(floor)
    assert 0.30 <= floor / (first.duration_us - 4.0) < 0.95  # efficiency drawn in [0.30, 0.95)
    (folder / "triton_v1.py").write_text("BLOCK = 1024\n\n\ndef scale(*args):\n    return None\n")
    assert backend.measure(spec, "triton_v1", cfg).duration_us != first.duration_us
    with pytest.raises(KbError, match="block=300 is not allowed"):
        backend.measure(spec, "triton_v1", cfg, {"block": 300})


def _kbopt(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KBOPT_BUNDLED": "0", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "kbopt", "--root", str(root), *args],
        cwd=cwd or root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_kernel_list_and_check_in_this_repository(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(REPO), "kernel", "list", "--json"]) == 0
    names = {k["name"] for k in json.loads(capsys.readouterr().out)}
    assert {"mla_decode", "add_rmsnorm"} <= names
    assert main(["--root", str(REPO), "kernel", "check", "add_rmsnorm", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["spec"]["dims"][1]["metric"] == "row_len"


def test_kernel_check_names_the_shape_facts_the_catalog_reads_and_the_spec_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attention-decode spec without a KV length cannot fire `kv_len >= 1024`
    (`split-kv-decode`): the check says so and how to state it; once a dim maps to it, the
    note goes, and a spec naming no kind of kernel gets none."""
    import shutil

    shutil.copytree(REPO / "docs" / "knowledge", tmp_path / "docs" / "knowledge")
    decode = GOOD_SPEC.replace(
        'entry_point="{name}",', 'entry_point="{name}", contexts=("attention-decode",),'
    )
    write_kernel(tmp_path, "dec", spec=decode)
    env = ["--root", str(tmp_path), "kernel", "check", "dec"]
    assert main([*env, "--json"]) == 0
    gaps = json.loads(capsys.readouterr().out)["unstated_shape_metrics"]
    assert "split-kv-decode" in gaps["kv_len"] and "row_len" not in gaps
    assert main(env) == 0
    out = capsys.readouterr().out
    assert "kv_len: " in out and "Dim('n', '...', 'kv_len')" in out
    shutil.rmtree(tmp_path / "kernels")
    write_kernel(
        tmp_path,
        "dec",
        spec=decode.replace('Dim("rows", "rows", "rows")', 'Dim("rows", "r", "kv_len")'),
    )
    assert main([*env, "--json"]) == 0
    assert "kv_len" not in json.loads(capsys.readouterr().out)["unstated_shape_metrics"]
    shutil.rmtree(tmp_path / "kernels")
    write_kernel(tmp_path, "dec", spec=decode.replace('"attention-decode"', '"memory-bound"'))
    assert main([*env, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unstated_shape_metrics"] == {}


def test_kernel_check_counts_what_a_followed_launch_records_as_stated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """MLA decode's tiled Triton version records its heads per program and its splits at
    launch: without --launch the check lists both as unstated, following the launch (on
    this machine, compiled for sm_90 and never run) removes them; an unknown version is
    refused with the spec's list."""
    env = ["--root", str(REPO), "kernel", "check", "mla_decode", "--json"]
    assert main(env) == 0
    before = json.loads(capsys.readouterr().out)["unstated_shape_metrics"]
    assert "heads_per_program" in before and "num_splits" in before
    assert main([*env, "--launch", "triton_v9"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["launches"]["triton_v9"]["metrics"]["heads_per_program"] > 0
    assert out["launches"]["triton_v9"]["metrics"]["num_splits"] >= 1
    assert "heads_per_program" not in out["unstated_shape_metrics"]
    assert "num_splits" not in out["unstated_shape_metrics"]
    assert main([*env, "--launch", "triton_v99"]) == 2
    assert "has no version 'triton_v99'" in capsys.readouterr().err


def test_a_broken_version_is_refused_by_the_fake_backend_and_leaves_the_others(
    kb_copy: Path,
) -> None:
    """The fake backend refuses a version a GPU could not import (no stand-in figures for
    it), and a broken version file does not keep its siblings from being profiled."""
    root = kb_copy
    assert _kbopt(root, "kernel", "new", "sm", "--dims", "rows,cols").returncode == 0
    folder = root / "kernels" / "sm"
    v1 = (folder / "triton_v1.py").read_text(encoding="utf-8")
    (folder / "triton_v2.py").write_text(v1.replace("def sm(", "def sm_renamed("), "utf-8")
    (folder / "triton_v3.py").write_text("def sm(:\n", "utf-8")
    r = _kbopt(root, "profile", "sm", "triton_v2", "--backend", "fake")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "triton_v2.py:1: defines no function sm()" in r.stderr, r.stderr
    r = _kbopt(root, "profile", "sm", "triton_v3", "--backend", "fake", "--json")
    assert (
        r.returncode == 2 and "triton_v3.py:1: invalid syntax" in json.loads(r.stdout)["error"][0]
    )
    r = _kbopt(root, "profile", "sm", "triton_v1", "--backend", "fake")
    assert r.returncode == 0 and "## Profile: sm triton_v1" in r.stdout, r.stderr
    r = _kbopt(root, "kernel", "check", "sm")
    assert r.returncode == 1 and "triton_v2.py:1" in r.stderr and "triton_v3.py:1" in r.stderr


def test_a_scaffolded_kernel_profiles_and_cycles_on_the_fake_backend(kb_copy: Path) -> None:
    root = kb_copy
    r = _kbopt(root, "kernel", "new", "softmax", "--dims", "rows,cols", "--json")
    assert r.returncode == 0, r.stderr
    created = json.loads(r.stdout)["created"]
    assert "kernels/softmax/spec.py" in created and "tests/kernels/test_softmax.py" in created
    assert _kbopt(root, "kernel", "new", "softmax", "--dims", "rows,cols").returncode == 2
    bad = _kbopt(root, "kernel", "new", "x", "--dims", "rows,rows")
    assert bad.returncode == 2 and "given twice" in bad.stderr and "Traceback" not in bad.stderr
    r = _kbopt(root, "kernel", "check", "softmax")
    assert r.returncode == 0 and "softmax: OK" in r.stdout
    # ... and lists, at their lines, the texts still holding the scaffold's placeholders
    assert "4 text(s) still hold the scaffold's TODO placeholder" in r.stdout
    assert re.search(r"kernels/softmax/spec\.py:\d+: dims: cols: still the scaffold", r.stdout)
    strict = _kbopt(root, "kernel", "check", "softmax", "--strict", "--json")
    assert strict.returncode == 1 and len(json.loads(strict.stdout)["problems"]) == 4
    spec_py = root / "kernels" / "softmax" / "spec.py"
    text = spec_py.read_text(encoding="utf-8")
    spec_py.write_text(re.sub(r'"TODO: [^"]*"', '"filled in"', text), encoding="utf-8")
    r = _kbopt(root, "kernel", "check", "softmax", "--strict", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["placeholders"] == [], r.stdout
    spec_py.write_text(text, encoding="utf-8")
    # the scaffolded devlog holds the blocks `kbopt devlog` fills (from no results yet)
    r = _kbopt(root, "devlog", "softmax")
    assert r.returncode == 0 and "rebuilt results, profiles" in r.stdout, r.stderr
    r = _kbopt(root, "profile", "softmax", "triton_v1", "--backend", "fake", "--json")
    assert r.returncode == 0, r.stderr
    (run,) = json.loads(r.stdout)  # a list, one run per configuration
    assert run["profile"].startswith("## Profile: softmax triton_v1 | rows=4096, cols=4096")
    assert run["measurement"]["device"] == "fake-gpu"
    r = _kbopt(
        root,
        "cycle",
        "softmax",
        "--backend",
        "fake",
        "--from",
        "triton_v1",
        "--target",
        "pct_of_floor>=99",
        "--designer",
        "scripted:kernels/softmax/cycle-plan.json",
        "--run-id",
        "s1",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)["record"]
    assert record["state"] == "DONE" and record["spec"] == "softmax"
    assert [a["new_version"] for a in record["attempts"]] == ["triton_v2"]
    assert all(x["action"] == "skipped" for x in record["learned"])  # fake: never evidence
    # the scaffold's own CPU test passes under the Triton interpreter
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": f"{root}{os.pathsep}{REPO}"}
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/kernels"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert test.returncode == 0, test.stdout[-2000:] + test.stderr[-2000:]


def test_a_spec_outside_the_project_named_by_path(kb_copy: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "user-repo"
    elsewhere.mkdir()
    assert _kbopt(elsewhere, "kernel", "new", "scale", "--dims", "n").returncode == 0
    spec_file = elsewhere / "kernels" / "scale" / "spec.py"
    r = _kbopt(kb_copy, "profile", str(spec_file), "triton_v1", "--backend", "fake", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["profile"].startswith("## Profile: scale triton_v1 | n=16777216")
    r = _kbopt(
        kb_copy,
        "cycle",
        str(spec_file),
        "--backend",
        "fake",
        "--from",
        "triton_v1",
        "--target",
        "pct_of_floor>=99",
        "--designer",
        f"scripted:{elsewhere / 'kernels/scale/cycle-plan.json'}",
        "--run-id",
        "e1",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)["record"]
    assert record["spec"] == str(spec_file)  # outside the project: its absolute path
    # the version the designer wrote outside the project was backed up and, slower or
    # faster, the kernel folder is left as the run decided
    assert record["state"] == "DONE"


def test_timing_shares_stop_at_the_ceiling_and_a_spec_names_its_matmul_precision(
    tmp_path: Path,
) -> None:
    """An fp8 GEMM timed against a bf16 matmul rate runs "above" it: TC% stays a share of
    the pipe (100%); a spec that declares its matmul precision gets the right ceiling."""
    from types import SimpleNamespace

    from kbopt.bench.backend import timing_metrics

    write_kernel(
        tmp_path,
        "fp8mm",
        spec=GOOD_SPEC.replace(
            'entry_point="{name}",', 'entry_point="{name}", matmul_dtype="float8_e4m3fn",'
        ),
    )
    spec = load_spec("fp8mm", tmp_path)
    assert spec.matmul_dtype == "float8_e4m3fn"
    assert spec.summary()["matmul_dtype"] == "float8_e4m3fn"
    gemm = SimpleNamespace(  # 8192 x 10240 x 5120 in e4m3, bf16 out
        flops=lambda d: 2 * d["m"] * d["n"] * d["k"],
        bytes_moved=lambda d: d["m"] * d["k"] + d["n"] * d["k"] + 2 * d["m"] * d["n"],
    )
    dims = {"m": 8192, "n": 10240, "k": 5120}
    m = timing_metrics(gemm, dims, 1053.0, 4260.0, 700.0)  # 816 TFLOP/s against 700
    assert m["tensor_core_util_pct"] == 100.0
    assert m["dram_throughput_pct"] < 10
    assert timing_metrics(gemm, dims, 1053.0, 4260.0, 1400.0)["tensor_core_util_pct"] < 60


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["import", "--dims", "rows"], "kernel name 'import' is a Python keyword; choose another"),
        (
            ["torch", "--dims", "rows"],
            "kernel name 'torch' would hide the torch that triton_v1.py uses; choose another",
        ),
        (
            ["sm8", "--dims", "rows", "--trial", "a:rows=4", "--trial", "a:rows=8"],
            "--trial: the trial name 'a' is given twice",
        ),
        (
            ["sm5", "--dims", "rows", "--trial", "large:cols=5"],
            "--trial 'large:cols=5': unknown dim 'cols' (dims: rows)",
        ),
        (
            ["sm5", "--dims", "rows", "--trial", "large:rows=4,rows=8"],
            "--trial 'large:rows=4,rows=8': rows is given twice",
        ),
        (
            ["sm5", "--dims", "rows,,cols"],
            "--dims 'rows,,cols' has an empty item: separate the names by single commas",
        ),
        (
            ["sm5", "--dims", "rows,cols", "--trial", "large:rows=4,,cols=8"],
            "--trial 'large:rows=4,,cols=8' has an empty item: separate the dim=value items by "
            "single commas",
        ),
        (
            ["sm5", "--dims", "rows", "--trial", "large:rows=x"],
            "--trial 'large:rows=x': rows='x' is not a positive integer",
        ),
        (
            ["sm5", "--dims", "rows", "--trial", "large:rows=" + "9" * 30],
            f"--trial 'large:rows={'9' * 30}': rows is above 1e+15",
        ),
        (
            ["sm5", "--dims", "rows", "--trial", "large:rows=" + "9" * 5000],
            f"--trial 'large:rows={'9' * 5000}': rows is above 1e+15",
        ),
    ],
)
def test_kernel_new_refuses_what_kernel_check_would_reject_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["--root", str(tmp_path), "kernel", "new", *argv]) == 2
    assert capsys.readouterr().err == f"kbopt: error: {message}\n"
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_bench_checks_out_first_and_keeps_the_rows_when_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_kernel(tmp_path, "scale")
    taken = tmp_path / "taken.md"
    taken.write_text("mine\n")
    argv = ["--root", str(tmp_path), "bench", "scale", "--backend", "fake"]
    assert (
        main([*argv, "--out", str(taken)]) == 2
    )  # a file where a folder goes: refused before measuring
    assert capsys.readouterr().err == (
        f"kbopt: error: --out {taken}: is a file; give the folder to write the results into\n"
    )
    assert taken.read_text() == "mine\n"
    # --no-write and --out contradict each other: an argument error names both
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--no-write", "--out", str(tmp_path / "rows")])
    assert stop.value.code == 2
    assert "--out: not allowed with argument --no-write" in capsys.readouterr().err
    assert not (tmp_path / "rows").exists()

    def full(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    assert main([*argv, "--out", str(tmp_path / "rows")]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["rows"][0]["version"] == "triton_v1"  # nothing measured is lost
    assert "cannot write (No space left on device); the results are on stdout instead" in err
    assert main([*argv, "--out", str(tmp_path / "rows"), "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"] and doc["written"] is None and "No space left" in doc["error"][0]


def test_a_spec_that_waits_at_import_is_stopped_and_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    write_kernel(tmp_path, "slow", spec="import time\n\ntime.sleep(600)\n")
    monkeypatch.setenv("KBOPT_SPEC_IMPORT_TIMEOUT_S", "1")
    began = time.monotonic()
    with pytest.raises(KbError) as err:
        load_spec("slow", tmp_path)
    assert time.monotonic() - began < 30
    assert str(err.value).startswith(f"{tmp_path / 'kernels' / 'slow' / 'spec.py'}:3: ")
    assert "took more than 1 s" in str(err.value) and "KBOPT_SPEC_IMPORT_TIMEOUT_S" in str(
        err.value
    )
    # a shorter --timeout of the command still ends it first, as its own exit
    monkeypatch.setenv("KBOPT_SPEC_IMPORT_TIMEOUT_S", "60")
    clear_cache()
    assert main(["--root", str(tmp_path), "--timeout", "1", "kernel", "check", "slow"]) == 124
    monkeypatch.setenv("KBOPT_SPEC_IMPORT_TIMEOUT_S", "soon")
    clear_cache()
    with pytest.raises(KbError, match="KBOPT_SPEC_IMPORT_TIMEOUT_S='soon'"):
        load_spec("slow", tmp_path)


def test_a_version_that_waits_at_import_is_stopped_and_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    folder = write_kernel(tmp_path, "lazy")
    (folder / "triton_v1.py").write_text("import time\n\ntime.sleep(600)\n")
    spec = load_spec("lazy", tmp_path)
    monkeypatch.setenv("KBOPT_SPEC_IMPORT_TIMEOUT_S", "1")
    began = time.monotonic()
    with pytest.raises(KbError) as err:
        spec.load_version("triton_v1")
    assert time.monotonic() - began < 30
    assert str(err.value).startswith(f"{folder / 'triton_v1.py'}:3: ")
    assert "importing version triton_v1 took more than 1 s" in str(err.value)
    # loading every version reports it among the others' errors, and goes on
    versions, errors = spec.load_versions(include_baselines=False)
    assert "triton_v1" not in versions and "took more than 1 s" in errors["triton_v1"]


def test_an_outer_deadline_survives_a_spec_import(tmp_path: Path) -> None:
    import signal

    write_kernel(tmp_path, "quick")

    def outer(signum: int, frame: object) -> None:
        raise AssertionError("the outer deadline fired")

    previous = signal.signal(signal.SIGALRM, outer)
    signal.setitimer(signal.ITIMER_REAL, 500)
    try:
        load_spec("quick", tmp_path)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 400 < left <= 500 and signal.getsignal(signal.SIGALRM) is outer
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_bench_stopped_part_way_keeps_the_configurations_it_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GPU session's `timeout` stopped the bench during its second configuration: the
    first one's rows, all timed, were lost with it.  Now they are written, by SIGTERM or
    kbopt's own --timeout, and the stop is an error that says how far it got."""
    import os
    import signal
    import time

    import kbopt.bench.suite as suite

    write_kernel(tmp_path, "scale")

    def two_configs(*args: object, finished: list[dict[str, object]], **kw: object) -> None:
        finished.append({"config": "small", "version": "triton_v1", "status": "error",
                         "error": "stands in for a timed row", "device": "test gpu",
                         "floor_us": 1.0, "floor_bound": "memory"})  # fmt: skip
        os.kill(os.getpid(), signal.SIGTERM)  # as `timeout` does, mid-way through the next
        raise AssertionError("not reached: the signal stops the suite")

    monkeypatch.setattr(suite, "run_suite", two_configs)
    out_dir = tmp_path / "rows"
    argv = ["--root", str(tmp_path), "bench", "scale", "--out", str(out_dir)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "stopped by SIGTERM (a time limit?) after 1 of" in err
    (written,) = out_dir.iterdir()
    assert json.loads(written.read_text())[0]["config"] == "small"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is gone
    assert main([*argv, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["written"] and "stopped by SIGTERM" in doc["error"][0]

    def slow_second(*args: object, finished: list[dict[str, object]], **kw: object) -> None:
        finished.append(dict(row))
        time.sleep(5)  # --timeout's alarm lands here

    row = {"config": "small", "version": "triton_v1", "status": "error", "error": "stand-in",
           "device": "test gpu", "floor_us": 1.0, "floor_bound": "memory"}  # fmt: skip
    monkeypatch.setattr(suite, "run_suite", slow_second)
    late = tmp_path / "late"
    base = ["--root", str(tmp_path), "--timeout", "0.5", "bench", "scale", "--out", str(late)]
    assert main(base) == 124  # the command's own timeout status, after the rows are written
    err = capsys.readouterr().err
    assert "stopped by --timeout after 1 of" in err and "gave up after 0.5 s" in err
    (kept,) = late.iterdir()
    assert json.loads(kept.read_text())[0]["config"] == "small"


def test_a_spec_outside_kernels_imports_its_own_project_s_kernels(tmp_path: Path) -> None:
    """A foreign kernel's spec (benchmarks/foreign/x/spec.py) that reuses the project's
    kernels must get this project's `kernels` package, not one a previous load claimed."""
    repo = Path(__file__).resolve().parent.parent
    load_spec("add_rmsnorm", repo)
    import kernels.add_rmsnorm.triton_common as held  # a module of this repository's kernels

    write_kernel(tmp_path / "other", "first")
    load_spec("first", tmp_path / "other")  # the process now holds other/kernels too
    project = tmp_path / "project"
    write_kernel(project, "shared")
    (project / "kernels" / "shared" / "helpers.py").write_text("NAME = 'shared helpers'\n")
    foreign = project / "bench" / "foreign"
    foreign.mkdir(parents=True)
    (foreign / "__init__.py").write_text("")
    spec = GOOD_SPEC.format(name="foreign").replace(
        "from kbopt.kernel import",
        "from kernels.shared.helpers import NAME\nfrom kbopt.kernel import",
    )
    (foreign / "spec.py").write_text(spec)
    clear_cache()
    assert load_spec("bench/foreign/spec.py", project).name == "foreign"
    # nothing loaded before is dropped: objects handed out keep their identity
    assert sys.modules["kernels.add_rmsnorm.triton_common"] is held
