"""Results -> devlog -> evidence for any kernel: `kbopt devlog`, `kbopt learn`, the ncu target.

A synthetic two-dim kernel (rows, hidden) in a temporary project exercises the generic
rules; MLA decode's committed results and lessons check that the move into kbopt changed
no number (its devlog is current, its lessons' evidence is already in the catalog).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kbopt.cli import main as cli
from kbopt.errors import KbError

REPO = Path(__file__).resolve().parent.parent

SPEC_PY = """
from kbopt.kernel import Dim, KernelSpec, Trial

SPEC = KernelSpec(
    name="norm",
    description="a two-dim test kernel",
    dims=(Dim("rows", "rows of x"), Dim("hidden", "row length")),
    trials=(
        Trial("large", {"rows": 8192, "hidden": 4096}, "many rows"),
        Trial("decode", {"rows": 8, "hidden": 4096}, "few rows"),
    ),
    backoff_dim="rows",
    make_inputs=lambda dims, **kw: (),
    reference=lambda *a: None,
    flops=lambda d: 0,
    bytes_moved=lambda d: 8 * d["rows"] * d["hidden"],
    tolerances={"bfloat16": 2e-2},
    entry_point="norm",
    families=("triton",),
    compare_with=("torch",),
)
"""

DOC = """# norm

Prose the kernel engineer wrote, kept byte for byte.

<!-- GEN:results -->
stale
<!-- /GEN:results -->

### triton_v2 -- one pass
<!-- GEN:measured:triton_v2 -->
<!-- /GEN:measured:triton_v2 -->

<!-- GEN:sweep -->
<!-- /GEN:sweep -->

<!-- GEN:profiles -->
<!-- /GEN:profiles -->
"""


def _row(version: str, config: str, time_us: float, date: str, **extra: Any) -> dict[str, Any]:
    dims = {"large": {"rows": 8192, "hidden": 4096}, "decode": {"rows": 8, "hidden": 4096}}[config]
    return {
        "kernel": "norm",
        "version": version,
        "family": extra.pop("family", "triton"),
        "config": config,
        **dims,
        "dims": dims,
        "status": "ok",
        "rel_err": 1e-3,
        "time_us": time_us,
        "gbps": 100.0,
        "tflops": 0.0,
        "pct_of_floor": round(5000.0 / time_us, 1),
        "floor_us": 50.0,
        "floor_bound": "memory",
        "bytes": 268435456,
        "flops": 0,
        "copy_bw_gbps": 4000.0,
        "matmul_tflops": 700.0,
        "device": "NVIDIA H200",
        "torch": "2.11.0",
        "triton": "3.6.0",
        "cuda": "13.0",
        "python": "3.12.3",
        "date": date,
        "command": "kbopt bench norm",
        **extra,
    }


@pytest.fixture
def project(kb_copy: Path) -> Path:
    """A project (copy of the catalog) with kernels/norm/, results and a devlog."""
    folder = kb_copy / "kernels" / "norm"
    (folder / "results").mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "spec.py").write_text(SPEC_PY)
    for v in ("triton_v1", "triton_v2"):
        (folder / f"{v}.py").write_text("def norm(*args):\n    return None\n")
    old = [
        _row("triton_v1", "large", 400.0, "2026-12-01T00:00:00Z"),
        _row("torch", "large", 500.0, "2026-12-01T00:00:00Z", family="torch"),
    ]
    new = [
        _row("torch", "large", 300.0, "2026-12-02T00:00:00Z", family="torch"),
        _row("torch_compile", "large", 250.0, "2026-12-02T00:00:00Z", family="torch"),
        _row("triton_v2", "large", 100.0, "2026-12-02T00:00:00Z", speedup_vs_torch=3.0),
        _row("triton_v1", "large", 200.0, "2026-12-02T00:00:00Z", speedup_vs_torch=1.5),
        _row("triton_v2", "decode", 10.0, "2026-12-02T00:00:00Z", kernel_n_regs=40),
        _row("sweep:w8", "large", 90.0, "2026-12-02T00:00:00Z", family="sweep"),
        {
            **_row("sweep:w16", "large", 1.0, "2026-12-02T00:00:00Z", family="sweep"),
            "status": "error",
            "error": "OutOfResources: shared memory",
        },
    ]
    (folder / "results" / "b-old.json").write_text(json.dumps(old))
    (folder / "results" / "a-new.json").write_text(json.dumps(new))  # sorts first, is newer
    shutil.copy(REPO / "tests/data/ncu_raw_split_kv.csv", folder / "results/ncu-x.csv")
    sidecar = [
        {
            "version": "triton_v2",
            "config": "large",
            "dims": {"rows": 8192, "hidden": 4096},
            "kernel": label,
            "launch": i,
            "kernels": 2,
            "splits": 4,
        }
        for i, label in enumerate(("main", "launch1"))
    ]
    (folder / "results/ncu-x.launches.json").write_text(json.dumps(sidecar))
    (folder / "devlog.toml").write_text('[stages.main]\nname = "norm pass"\n')
    # other tools' records beside the rows are not rows
    (folder / "results/tune-x.json").write_text(json.dumps({"kernel": "norm", "rows": []}))
    (folder / "results/profiles-x.json").write_text(json.dumps([{"profile": "..."}]))
    (kb_copy / "docs" / "kernels").mkdir(parents=True)
    (kb_copy / "docs" / "kernels" / "norm.md").write_text(DOC)
    return kb_copy


def _devlog(project: Path, *args: str) -> int:
    from kbopt.kernel import clear_cache

    clear_cache()
    return cli(["--root", str(project), "devlog", "norm", *args])


# ---------------------------------------------------------------------- devlog


def test_devlog_blocks_of_a_two_dim_kernel(project: Path) -> None:
    assert _devlog(project, "--check") == 1  # the blocks are placeholders
    assert _devlog(project) == 0
    text = (project / "docs/kernels/norm.md").read_text()
    assert text.startswith("# norm\n\nProse the kernel engineer wrote, kept byte for byte.\n")
    assert "stale" not in text
    # trial order, the spec's dims, the newest row per (config, version)
    assert text.index("### large: rows=8192, hidden=4096") < text.index("### decode: rows=8")
    assert "| triton_v1 | 200.0 |" in text and "| triton_v1 | 400.0 |" not in text
    # baselines first (torch_compile is a torch-family baseline), then the ladder
    order = [text.index(f"| {v} | ") for v in ("torch", "torch_compile", "triton_v1", "triton_v2")]
    assert order == sorted(order)
    assert "| x torch | rel. err | regs | results file |" in text
    assert (
        "**triton_v2**, 100.0 us = 50.0% of the floor (misses the 60% target), 3.00x torch" in text
    )
    assert "rows=8192 hidden=4096" not in text  # shapes use the spec's "name=value, " form
    # measured line: the previous step of the ladder
    assert (
        "- measured, large (rows=8192, hidden=4096): 100.0 us, 50.0% of floor, +100% speed per call vs triton_v1 (a-new.json)"
        in text
    )
    # a family outside the spec has its own block, failures included; not in the results
    assert "| large | w8 | ok | 90.0 |" in text
    assert "| large | w16 | error: OutOfResources: shared memory |" in text
    assert "| sweep:w8 |" not in text
    # profiles: one per (version, config), the first launch diagnosed, labels as stages
    assert "## Profile: norm triton_v2 | rows=8192, hidden=4096" in text
    # stages: named by devlog.toml, else by ncu's kernel name
    assert "| norm pass | " in text and "| _combine_kernel | " in text
    assert "Source: `kernels/norm/results/ncu-x.csv`" in text
    assert _devlog(project, "--check") == 0  # a fixed point
    assert _devlog(project) == 0


def test_a_speed_up_the_bench_did_not_record_comes_from_the_same_run(project: Path) -> None:
    # torch_compile was measured beside triton_v2 but not compared at the time: the devlog
    # divides the two rows of the same results file, and shows nothing across files
    spec = project / "kernels/norm/spec.py"
    spec.write_text(
        spec.read_text().replace(
            'compare_with=("torch",)', 'compare_with=("torch", "torch_compile")'
        )
    )
    assert _devlog(project) == 0
    text = (project / "docs/kernels/norm.md").read_text()
    assert "3.00x torch, 2.50x torch_compile (measured side by side)" in text
    assert "| 50.0 | 100 | 0.0 | 3.00 | 2.50 |" in text  # triton_v2, large
    assert "| 25.0 | 100 | 0.0 | 1.50 | 1.25 |" in text  # triton_v1, large
    # decode has no baseline row: nothing is divided
    assert "| triton_v2 | 10.0 | 500.0 | 100 | 0.0 | - | - |" in text


def test_runs_whose_floors_disagree_are_named_beside_the_best(project: Path) -> None:
    # One floor in both runs: no note.  An older run on a machine that measured lower
    # ceilings (a floor six times longer) makes its version look best by % of floor: the
    # page says the floors disagree and names the fastest version of the newest run.
    assert _devlog(project) == 0
    assert "put the floor between" not in (project / "docs/kernels/norm.md").read_text()
    old = project / "kernels/norm/results/b-old.json"
    rows = json.loads(old.read_text())
    rows[0].update(floor_us=300.0, pct_of_floor=75.0)
    old.write_text(json.dumps(rows))
    new = project / "kernels/norm/results/a-new.json"  # triton_v1 measured in the old run only
    rows = [r for r in json.loads(new.read_text()) if r["version"] != "triton_v1"]
    new.write_text(json.dumps(rows))
    assert _devlog(project) == 0
    text = (project / "docs/kernels/norm.md").read_text()
    assert "Best kernel version, per-call time: **triton_v1**, 400.0 us = 75.0%" in text
    assert "put the floor between 50.0 and 300.0 us (500.0% apart" in text
    assert "the fastest kernel version is **triton_v2**, 100.0 us." in text


def test_devlog_check_names_the_stale_block(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _devlog(project) == 0
    results = project / "kernels/norm/results/c-newest.json"
    results.write_text(json.dumps([_row("triton_v2", "decode", 8.0, "2026-12-03T00:00:00Z")]))
    capsys.readouterr()
    assert _devlog(project, "--check") == 1
    err = capsys.readouterr().err
    assert "GEN:results is stale" in err and "GEN:measured:triton_v2 is stale" in err
    assert "GEN:profiles" not in err
    assert _devlog(project, "--check", "--json") == 1
    assert json.loads(capsys.readouterr().out)["kernels"][0]["stale"] == [
        "results",
        "measured:triton_v2",
    ]


def test_devlog_all_skips_kernels_without_generated_blocks(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = project / "kernels" / "plain"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "spec.py").write_text(SPEC_PY.replace('name="norm"', 'name="plain"'))
    assert _devlog(project) == 0
    capsys.readouterr()
    assert cli(["--root", str(project), "devlog", "--check", "--all"]) == 0
    assert "plain: skipped (no devlog)" in capsys.readouterr().err
    assert cli(["--root", str(project), "devlog", "plain"]) == 2  # asked for by name: an error
    err = capsys.readouterr().err
    assert err == (
        "kbopt: error: plain: docs/kernels/plain.md does not exist, so there is nothing to "
        "generate\n"
    )


def test_unknown_block_is_a_clean_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = project / "docs/kernels/norm.md"
    doc.write_text(doc.read_text() + "<!-- GEN:nonsense -->\n<!-- /GEN:nonsense -->\n")
    assert _devlog(project) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbopt: error: unknown generated block GEN:nonsense") and "sweep" in err


def test_old_style_mla_rows_and_committed_profiles() -> None:
    """MLA's first rows carry b, s, t, h at the top level (no `dims`); its sidecars label the
    second launch `combine`, which its devlog.toml names and explains."""
    from kbopt.devlog_profiles import profiles_block
    from kbopt.devlog_results import Context, render
    from kbopt.kernel import load_spec

    spec = load_spec("mla_decode", REPO)
    ctx = Context.for_spec(spec, REPO)
    assert any("dims" not in r for r in ctx.rows)
    out = render("<!-- GEN:measured:triton_v2 -->\n<!-- /GEN:measured:triton_v2 -->\n", ctx)
    assert "- measured, decode (b=32, s=1, t=4096): 522.8 us, 10.2% of floor" in out
    block = profiles_block(spec, ctx.results, ctx.rel, ctx.options)
    assert "| combine | 6.9 us | 0% | 50.5% | 71.8% | Memory | 2 partials per row merged |" in block
    assert "runs serially" in block  # the kernel's own root-cause wording


def test_a_call_that_did_not_count_its_launches_takes_the_rows_left() -> None:
    from kbopt.devlog_profiles import expand_unknown, kernel_name

    known = {"version": "triton_v2", "config": "large", "kernel": "main", "kernels": 1}
    torch = {"version": "torch", "config": "large", "kernel": "main", "kernels": None}
    out = expand_unknown([torch, known], 4, "ncu.csv", "ncu.launches.json")
    assert [(r["version"], r["kernel"]) for r in out] == [
        ("torch", "main"),
        ("torch", "launch1"),
        ("torch", "launch2"),
        ("triton_v2", "main"),
    ]
    with pytest.raises(KbError, match="2 calls did not record how many kernels"):
        expand_unknown([torch, dict(torch, version="torch_compile"), known], 5, "a", "b")
    with pytest.raises(KbError, match="3 ncu rows but 1 launches in b: the two must come"):
        expand_unknown([known], 3, "a", "b")
    name = "void at::<unnamed>::cunn_SoftMaxForwardReg<c10::BFloat16, float, 4>(T3 *, const T1 *)"
    assert kernel_name(name) == "at::cunn_SoftMaxForwardReg"


def test_mla_devlog_is_current() -> None:
    from kbopt.devlog_results import update_devlog
    from kbopt.kernel import load_spec

    report = update_devlog(REPO, load_spec("mla_decode", REPO), check=True)
    assert report.stale == [] and not report.written and "sweep" in report.blocks


def test_add_rmsnorm_devlog_is_current_and_shows_the_saved_profiles() -> None:
    from kbopt.devlog_results import update_devlog
    from kbopt.kernel import load_spec

    report = update_devlog(REPO, load_spec("add_rmsnorm", REPO), check=True)
    assert report.stale == [] and "profiles" in report.blocks
    text = (REPO / "docs" / "kernels" / "add_rmsnorm.md").read_text()
    # the profiles `kbopt profile --json` saved, their links made to work from docs/kernels/
    assert "## Profile: add_rmsnorm triton_v3 | rows=8192, hidden=4096" in text
    assert "](../generated/entries/fuse-passes-over-global-memory.md)" in text
    assert "](docs/knowledge/" not in text


# ---------------------------------------------------------------------- learn

LESSONS = """
[defaults]
config_label = "norm {config} {shape} {dtype}: {what}"

[commands]
bench = "kbopt bench {kernel} --versions {versions}"

[[lesson]]
entry = "split-kv-decode"
before = "triton_v1"
after = "triton_v2"
what = "two passes -> one"
command = "bench"
validate = true
"""


def test_learn_appends_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kbopt.store import Store

    (project / "kernels/norm/lessons.toml").write_text(LESSONS)
    entry = Store(project).find("split-kv-decode")
    assert entry is not None
    before = entry.read_text()
    assert cli(["--root", str(project), "learn", "norm", "--dry-run"]) == 0
    assert entry.read_text() == before
    assert "would append" in capsys.readouterr().out
    assert cli(["--root", str(project), "learn", "norm", "--json"]) == 0
    (action,) = json.loads(capsys.readouterr().out)["actions"]
    assert action["action"] == "appended"
    ev = action["evidence"]
    assert ev["source"] == (
        "kernels/norm/results/a-new.json (rows triton_v1, triton_v2); devlog docs/kernels/norm.md"
    )
    assert ev["command"] == "kbopt bench norm"  # the command the rows record measured them
    assert ev["versions"] == "torch 2.11.0, triton 3.6.0, CUDA 13.0"
    assert ev["rows"] == [
        {
            "config": "norm large rows=8192 hidden=4096 bf16: two passes -> one",
            "before": "200.0 us (25.0% of floor)",
            "after": "100.0 us (50.0% of floor)",
            "change": "-50.0% time",
        }
    ]
    after = entry.read_text()
    assert after != before and "two passes -> one" in after
    assert cli(["--root", str(project), "learn", "norm"]) == 0
    assert "unchanged split-kv-decode (evidence already present)" in capsys.readouterr().out
    assert entry.read_text() == after  # idempotent


def test_learn_takes_the_lessons_command_for_rows_that_record_none_and_knows_edited_sources(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows without a recorded command get the lesson's reproducing command.  Once
    appended, words an editor adds to the block's Source (where the run was made) do not
    make `kbopt learn` cite the same rows a second time."""
    from kbopt.store import Store

    results = project / "kernels/norm/results/a-new.json"
    rows = json.loads(results.read_text())
    results.write_text(json.dumps([{k: v for k, v in r.items() if k != "command"} for r in rows]))
    (project / "kernels/norm/lessons.toml").write_text(LESSONS)
    assert cli(["--root", str(project), "learn", "norm", "--json"]) == 0
    (action,) = json.loads(capsys.readouterr().out)["actions"]
    assert action["evidence"]["command"] == "kbopt bench norm --versions triton_v1,triton_v2"
    entry = Store(project).find("split-kv-decode")
    assert entry is not None
    cited = "kernels/norm/results/a-new.json (rows triton_v1, triton_v2"
    entry.write_text(entry.read_text().replace(cited, cited + "; run on a test machine"))
    edited = entry.read_text()
    assert cli(["--root", str(project), "learn", "norm"]) == 0
    assert "unchanged split-kv-decode (evidence already present)" in capsys.readouterr().out
    assert entry.read_text() == edited


def test_a_lesson_that_measures_the_whole_move_refines_the_expected_gain(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`refines_gain = true`: the block's Source says the move was measured in full and the
    entry's expected gain becomes the running mean of its prior and the measured speed-up
    (here 50% less time: +50%); without it the estimate is left alone."""
    from kbopt.store import Store
    from kbopt.workflow.learn import CATALOG_MOVE, FULL_MOVE

    store = Store(project)
    prior = store.get("split-kv-decode").expected_gain_pct
    (project / "kernels/norm/lessons.toml").write_text(LESSONS)
    assert cli(["--root", str(project), "learn", "norm"]) == 0
    capsys.readouterr()
    assert Store(project).get("split-kv-decode").expected_gain_pct == prior  # not asked to

    (project / "kernels/norm/lessons.toml").write_text(
        LESSONS.replace("validate = true", "validate = true\nrefines_gain = true")
    )
    assert cli(["--root", str(project), "learn", "norm", "--json"]) == 0
    (action,) = json.loads(capsys.readouterr().out)["actions"]
    assert action["action"] == "appended" and action["evidence"]["source"].endswith(FULL_MOVE)
    # the unmarked block of the same rows was replaced, not cited twice
    blocks = [e.source for e in Store(project).get("split-kv-decode").evidence]
    assert [b for b in blocks if "a-new.json" in b] == [action["evidence"]["source"]]
    # n: the measurements of the entry's move on it, this one included (the fixture's entry
    # already holds one catalog move's)
    n = sum(CATALOG_MOVE in b or FULL_MOVE in b for b in blocks)
    assert n == 2
    want = round(prior + (50.0 - prior) / (n + 1), 1)
    assert f"expected gain {prior:g}% -> {want:g}%" in action["refined"]
    assert Store(project).get("split-kv-decode").expected_gain_pct == want
    assert cli(["--root", str(project), "learn", "norm"]) == 0  # present: nothing refined again
    assert "unchanged" in capsys.readouterr().out
    assert Store(project).get("split-kv-decode").expected_gain_pct == want
    (project / "kernels/norm/lessons.toml").write_text(
        LESSONS.replace("validate = true", "refines_gain = 1")
    )
    assert cli(["--root", str(project), "learn", "norm"]) != 0
    assert "refines_gain is true or false" in capsys.readouterr().err


def test_learn_refuses_a_missing_entry(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "kernels/norm/lessons.toml").write_text(
        LESSONS + '\n[[lesson]]\nentry = "no-such-entry"\nbefore = "triton_v1"\n'
        'after = "triton_v2"\nwhat = "x"\n'
    )
    entry = project / "docs/knowledge"
    files = {p: p.read_text() for p in entry.rglob("*.md")}
    assert cli(["--root", str(project), "learn", "norm"]) == 2
    err = capsys.readouterr().err
    assert "no-such-entry" in err and "create the entry first: kbopt new" in err
    assert len(err.strip().splitlines()) == 1
    assert all(p.read_text() == t for p, t in files.items())  # nothing was appended


def test_lessons_file_mistakes_are_clean_errors(project: Path) -> None:
    from kbopt.kernel import clear_cache, load_spec
    from kbopt.learn_lessons import load_lessons

    clear_cache()
    spec = load_spec("norm", project)
    path = project / "kernels/norm/lessons.toml"
    for text, message in (
        ('[[lesson]]\nentry = "x"\n', "needs before, after, what"),
        ('[[lesson]]\nentry="x"\nbefore="a"\nafter="b"\nwhat="w"\ncolour=1\n', "unknown field"),
        ("[[lesson]\n", "not valid TOML"),
        ("", "no [[lesson]]"),
    ):
        path.write_text(text)
        with pytest.raises(KbError, match=message.replace("[", r"\[")):
            load_lessons(spec)


def test_mla_lessons_are_already_in_the_catalog() -> None:
    """`kbopt learn mla_decode` must change nothing: every block is cited already."""
    from kbopt.kernel import load_spec
    from kbopt.learn_lessons import learn
    from kbopt.store import Store

    lessons = (REPO / "kernels/mla_decode/lessons.toml").read_text().count("\n[[lesson]]\n")
    actions = learn(load_spec("mla_decode", REPO), REPO, Store(REPO), dry_run=True)
    assert len(actions) == lessons and {a.action for a in actions} == {"present"}


# ---------------------------------------------------------------------- the ncu target


def test_ncu_target_plan_and_sidecar_records(project: Path) -> None:
    from kbopt.bench import ncu_target as nt
    from kbopt.kernel import clear_cache, load_spec

    clear_cache()
    spec = load_spec("norm", project)
    ns = nt.parse_batch(
        ["norm", "--run", "large:triton_v1,torch", "--run", "rows=4:triton_v2", "--out", "x.json"]
    )
    plan = nt.build_plan(spec, ns.run)
    assert [(p.config.name, p.version) for p in plan] == [
        ("large", "triton_v1"),
        ("large", "torch"),
        ("rows4-hidden4096", "triton_v2"),
    ]
    assert plan[2].config.dims_dict == {"rows": 4, "hidden": 4096}
    for bad, message in (
        ("large", "CONFIG:VERSIONS"),
        ("huge:triton_v1", "not a trial"),
        ("large:", "CONFIG:VERSIONS"),
        ("large:triton_v9", "has no version 'triton_v9'"),
    ):
        with pytest.raises(KbError, match=message):
            nt.build_plan(spec, [bad])
    # how many launches a call made: what it recorded; 1 if it recorded other things only;
    # unknown (None) if it recorded nothing, as a plain-torch baseline does
    assert nt.launch_count({"kernels": 2, "splits": 2}) == 2
    assert nt.launch_count({"n_regs": 40}) == 1
    assert nt.launch_count({}) is None
    assert nt.launch_labels(3) == ["main", "launch1", "launch2"]
    assert nt.launch_labels(2, ["attention", "merge"]) == ["attention", "merge"]
    (baseline,) = nt.launch_records(plan[1], {})
    assert baseline["kernel"] == "main" and baseline["kernels"] is None
    records = nt.launch_records(plan[0], {"kernels": 2, "splits": 4, "metrics": {"x": 1}})
    assert records == [
        {
            "version": "triton_v1",
            "config": "large",
            "dims": {"rows": 8192, "hidden": 4096},
            "kernel": label,
            "launch": i,
            "kernels": 2,
            "splits": 4,
        }
        for i, label in enumerate(("main", "launch1"))
    ]


def test_ncu_target_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from kbopt.bench import ncu_target as nt

    assert nt.main(["only-one"]) == 2
    assert (
        "usage: python -m kbopt.bench.ncu_target SPEC VERSION DIMS_JSON" in capsys.readouterr().err
    )
    assert nt.main(["no_such_kernel", "--run", "decode:v1", "--out", "x.json"]) == 2
    assert "ncu_target: error: no kernel 'no_such_kernel'" in capsys.readouterr().err


def test_a_version_is_compared_with_the_nearest_earlier_one_of_its_own_run() -> None:
    from kbopt import results as res

    def row(version: str, file: str, time_us: float, config: str = "decode") -> dict[str, object]:
        return {
            "version": version,
            "_file": file,
            "config": config,
            "time_us": time_us,
            "status": "ok",
        }

    v7_old, v9_old = row("cute_v7", "old.json", 85.0), row("cute_v9", "old.json", 86.0)
    v7_new, v10_new = row("cute_v7", "new.json", 86.0), row("cute_v10", "new.json", 98.0)
    rows = [v7_old, v9_old, v7_new, v10_new, row("cute_v8", "new.json", 1.0, "speculative")]
    # v9 is the step before v10, but only v7 ran beside it: same run, same config
    assert res.compared_with(rows, v10_new) is v7_new
    assert res.compared_with(rows, v9_old) is v7_old
    # nothing earlier in the same run: the newest row of the step before, from its own run
    assert res.compared_with(rows, row("cute_v10", "other.json", 90.0)) is v9_old
    assert res.compared_with(rows, v7_new) is None  # no cute_v6 anywhere
    assert res.compared_with(rows, row("torch", "new.json", 200.0)) is None  # not a ladder step
