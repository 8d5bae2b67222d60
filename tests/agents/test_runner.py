"""Scripted conversations through the real anthropic SDK, asserting real effects."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from kbopt.agents import roles
from kbopt.agents.remote import RemoteContext
from kbopt.agents.runner import AgentConfig, Price, Usage, parse_prices
from kbopt.errors import KbError
from kbopt.lint import lint
from kbopt.search import search
from kbopt.store import Store
from kbopt.template import parse_entry, render_entry
from tests.agents.conftest import TOY_KERNEL, RunnerFactory
from tests.agents.scripted import ScriptedAPI, last_tool_results, text, tool_use


def _new_entry_markdown(project: Path) -> str:
    """A complete, sourced entry: the bundled split-kv entry under a new name and title."""
    base = Store(project).get("split-kv-decode")
    entry = base.model_copy(
        update={"name": "agent-written-split-combine", "title": "Agent-written split combine"}
    )
    return render_entry(entry)


def test_entry_written_by_an_agent_exists_lints_clean_and_is_found(
    project: Path, make_runner: RunnerFactory
) -> None:
    markdown = _new_entry_markdown(project)
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [tool_use("write_entry", {"markdown": markdown})],
                [text("LEARN done.")],
            ]
        }
    )
    runner = make_runner(api)
    result = runner.run_request("Record the split combine finding")
    assert result.text == "LEARN done."
    (reply,) = api.tool_results(roles.ORCHESTRATOR)
    assert not reply["is_error"], reply["content"]
    assert json.loads(reply["content"])["lint"] == "clean"
    path = project / "docs/knowledge/optimizations/agent-written-split-combine.md"
    assert path.is_file()
    assert parse_entry(path.read_text(), name=path.stem).title == "Agent-written split combine"
    store = Store(project)
    assert lint(store) == []
    hits = search("Agent-written split combine", store=store)
    assert "agent-written-split-combine" in [h.id for h in hits]
    # and the generated catalog lists it
    assert "agent-written-split-combine" in (project / "catalog/catalog.json").read_text()


def test_bad_tool_inputs_come_back_as_tool_errors_not_crashes(
    project: Path, make_runner: RunnerFactory
) -> None:
    bad_calls = [
        tool_use("write_entry", {"markdown": 5}),  # wrong type
        tool_use("write_entry", {"markdown": "---\nname: x\n---\n# broken\n"}),  # invalid entry
        tool_use("record_evidence", {"name": "split-kv-decode", "source_type": "local experiment"}),
        tool_use("show_entry", {"name": "no-such-entry"}),
        tool_use("show_entry", {"name": "split-kv-decode", "extra": 1}),  # extra="forbid"
        tool_use("edit_file", {"path": "kernels/toy/toy_v1.py", "old": "a", "new": "b"}),  # A5
        tool_use("no_such_tool", {}),
    ]
    api = ScriptedAPI({roles.ORCHESTRATOR: [bad_calls, [text("gave up cleanly")]]})
    result = make_runner(api).run_request("Try things")
    assert result.text == "gave up cleanly"
    replies = api.tool_results(roles.ORCHESTRATOR)
    assert len(replies) == len(bad_calls)
    assert all(r["is_error"] for r in replies), [r["content"] for r in replies]
    contents = [r["content"] for r in replies]
    assert "markdown" in contents[0]
    assert "<write_entry>:" in contents[1]  # parse problems named with a line
    assert "rows" in contents[2]
    assert "no entry named 'no-such-entry'" in contents[3]
    assert "extra" in contents[4]
    assert "not available to orchestrator" in contents[5]
    assert "not available to orchestrator" in contents[6]
    assert (project / "kernels/toy/toy_v1.py").read_text() == TOY_KERNEL


def test_wrong_delegation_is_refused_with_the_rule(
    project: Path, make_runner: RunnerFactory
) -> None:
    task = "Generate a CuTe DSL kernel for the GEMM operation and benchmark it"
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [tool_use("delegate", {"specialist": roles.TRITON, "task": task})],
                [tool_use("delegate", {"specialist": roles.CUTE, "task": task})],
                [text("done")],
            ],
            roles.CUTE: [[text("## New Version: gemm cute_v1\n### Correctness: PASS")]],
        }
    )
    runner = make_runner(api)
    runner.run_request(task)
    refused, accepted = api.tool_results(roles.ORCHESTRATOR)
    assert refused["is_error"]
    assert "rule cute-domain" in refused["content"]
    assert "kernel-cute-specialist" in refused["content"]
    assert not accepted["is_error"]
    assert "cute_v1" in json.loads(accepted["content"])["report"]
    assert roles.TRITON not in api.roles_called()  # the refused specialist never ran
    assert runner.ctx.state.refusals == [{"specialist": roles.TRITON, "rule": "cute-domain"}]


def test_tileir_pipeline_stage_two_allowed_after_stage_one_wrote_the_kernel(
    project: Path, make_runner: RunnerFactory
) -> None:
    stage2 = "Apply TileIR optimizations to the Triton kernel just written"
    kernel = "import triton\n\n# SwiGLU\n"
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [tool_use("delegate", {"specialist": roles.TILEIR, "task": stage2})],  # too early
                [
                    tool_use(
                        "delegate",
                        {"specialist": roles.TRITON, "task": "Write a SwiGLU Triton kernel"},
                    )
                ],
                [tool_use("delegate", {"specialist": roles.TILEIR, "task": stage2})],
                [text("pipeline done")],
            ],
            roles.TRITON: [
                [tool_use("write_file", {"path": "kernels/toy/swiglu_v1.py", "content": kernel})],
                [text("wrote it")],
            ],
            roles.TILEIR: [[text("TileIR configs added")]],
        }
    )
    make_runner(api).run_request("Generate a TileIR kernel for SwiGLU")
    early, stage1, stage2_reply = api.tool_results(roles.ORCHESTRATOR)
    assert early["is_error"] and "tileir-no-scratch" in early["content"]
    assert not stage1["is_error"] and not stage2_reply["is_error"]
    assert (project / "kernels/toy/swiglu_v1.py").read_text() == kernel
    assert api.roles_called().count(roles.TILEIR) == 1


def _latency(result: dict[str, Any]) -> float:
    out = json.loads(result["content"])
    return float(json.loads(out["stdout"])["rows"][0]["time_us"])


def test_scripted_regression_is_reverted(project: Path, make_runner: RunnerFactory) -> None:
    kernel = "kernels/toy/toy_v1.py"
    bench = {"kernel": "toy", "version": "toy_v1", "config": "decode", "backend": "fake"}
    measured: list[float] = []

    def decide(body: dict[str, Any]) -> list[dict[str, Any]]:
        # The orchestrator analyses the profiling report itself: revert on > 5% slower.
        report = json.loads(last_tool_results(body)[0]["content"])["report"]
        after = float(report.split("latency_us=")[1])
        if after > measured[0] * 1.05:
            return [tool_use("revert_file", {"path": kernel})]
        return [text("kept")]

    def profiler_reports(body: dict[str, Any]) -> list[dict[str, Any]]:
        measured.append(_latency(last_tool_results(body)[0]))
        return [text(f"latency_us={measured[-1]}")]

    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [
                    tool_use(
                        "delegate",
                        {"specialist": roles.PROFILING, "task": "Benchmark toy_v1 (baseline)"},
                    )
                ],
                [tool_use("backup_file", {"path": kernel})],
                [
                    tool_use(
                        "delegate",
                        {
                            "specialist": roles.TRITON,
                            "task": f"Shrink BLOCK in the Triton kernel {kernel} and benchmark it",
                        },
                    )
                ],
                [
                    tool_use(
                        "delegate",
                        {
                            "specialist": roles.PROFILING,
                            "task": "Benchmark toy_v1 after the change",
                        },
                    )
                ],
                decide,
                [text("## Optimization Summary\n...\n- Status: Rolled back")],
            ],
            roles.PROFILING: [
                [tool_use("run_benchmark", bench)],
                profiler_reports,
                [tool_use("run_benchmark", bench)],
                profiler_reports,
            ],
            roles.TRITON: [
                [tool_use("edit_file", {"path": kernel, "old": "BLOCK = 64", "new": "BLOCK = 16"})],
                [tool_use("run_tests", {"path": "tests/toy"})],
                [text("changed; tests pass")],
            ],
        }
    )
    result = make_runner(api).run_autopilot(
        "Primary bottleneck: latency-bound\nEvidence: small grid\nRecommendations:\n"
        "1. [High] Shrink the tile to launch more CTAs\n"
    )
    assert measured == [64.0, 256.0]  # the benchmark really saw the edited file
    tests_run = api.tool_results(roles.TRITON)[1]
    assert json.loads(tests_run["content"])["ok"] is True
    revert = api.tool_results(roles.ORCHESTRATOR)[-1]
    assert not revert["is_error"] and json.loads(revert["content"])["action"] == "restored"
    assert (project / kernel).read_text() == TOY_KERNEL
    assert "Rolled back" in result.text
    assert result.pending_backups == []  # the revert consumed the backup


def test_specialist_cannot_edit_without_backup(project: Path, make_runner: RunnerFactory) -> None:
    kernel = "kernels/toy/toy_v1.py"
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [
                    tool_use(
                        "delegate",
                        {"specialist": roles.TRITON, "task": f"Tune the Triton kernel {kernel}"},
                    )
                ],
                [text("ok")],
            ],
            roles.TRITON: [
                [tool_use("edit_file", {"path": kernel, "old": "BLOCK = 64", "new": "BLOCK = 32"})],
                [text("could not edit")],
            ],
        }
    )
    make_runner(api).run_request("Tune the Triton kernel")
    (reply,) = api.tool_results(roles.TRITON)
    assert reply["is_error"] and "backup_file" in reply["content"]
    assert (project / kernel).read_text() == TOY_KERNEL


def _fake_cluster(tmp_path: Path) -> tuple[Path, Path]:
    """`ssh` and `srun` stand-ins on PATH: they log their argv and run the command locally."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "cluster.log"
    # ssh's options (-o X) come before the destination; the remote line runs in sh.
    (bindir / "ssh").write_text(
        f'#!/bin/sh\necho "ssh $*" >> {log}\n'
        'while [ $# -gt 0 ]; do case "$1" in -o|-p|-i) shift 2;; -*) shift;; *) break;; esac; done\n'
        'host="$1"; shift\nexec sh -c "$*"\n'
    )
    # The allocation is alive (asked before each delegation).
    (bindir / "squeue").write_text(f'#!/bin/sh\necho "squeue $*" >> {log}\necho RUNNING\n')
    (bindir / "srun").write_text(
        f'#!/bin/sh\necho "srun $*" >> {log}\n'
        'while [ $# -gt 0 ]; do case "$1" in --*) shift;; *) break;; esac; done\nexec "$@"\n'
    )
    for f in bindir.iterdir():
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    return bindir, log


def test_remote_context_goes_to_every_delegation_and_wraps_every_command(
    project: Path, make_runner: RunnerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir, log = _fake_cluster(tmp_path)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    import sys

    remote = RemoteContext(
        host="me@login.cluster", job_id="4242", workdir=str(project), python=sys.executable
    )
    bench = {
        "kernel": "toy",
        "version": "toy_v1",
        "dims": {"b": 32, "s": 1, "t": 4096},
        "backend": "fake",
    }
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [tool_use("delegate", {"specialist": roles.PROFILING, "task": "Benchmark toy_v1"})],
                [
                    tool_use(
                        "delegate",
                        {"specialist": roles.TRITON, "task": "Test the Triton kernel toy_v1.py"},
                    )
                ],
                [text("done")],
            ],
            roles.PROFILING: [[tool_use("run_benchmark", bench)], [text("measured")]],
            roles.TRITON: [[tool_use("run_tests", {"path": "tests/toy"})], [text("pass")]],
        }
    )
    make_runner(api, remote=remote).run_request("Measure and test toy")
    block = remote.block()
    for role in (roles.ORCHESTRATOR, roles.PROFILING, roles.TRITON):
        assert block in api.first_user_message(role)
    assert "SLURM job 4242" in block
    bench_out = json.loads(api.tool_results(roles.PROFILING)[0]["content"])
    assert bench_out["ok"] and _latency(api.tool_results(roles.PROFILING)[0]) == 64.0
    assert bench_out["command"].startswith("ssh -o BatchMode=yes ")
    assert " me@login.cluster " in bench_out["command"]
    assert json.loads(api.tool_results(roles.TRITON)[0]["content"])["ok"]
    lines = log.read_text().splitlines()
    srun_lines = [ln for ln in lines if ln.startswith("srun ")]
    assert len(srun_lines) == 2  # both specialists' commands ...
    assert all("--jobid=4242 --overlap" in ln for ln in srun_lines)  # ... in the one allocation


def test_usage_is_summed_over_every_call_and_priced(
    project: Path, make_runner: RunnerFactory
) -> None:
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [tool_use("delegate", {"specialist": roles.PROFILING, "task": "Measure toy_v1"})],
                [text("done")],
            ],
            roles.PROFILING: [[text("measured")]],
        },
        usage=(1000, 200),
    )
    runner = make_runner(api, model="claude-sonnet-4-6")
    result = runner.run_request("Measure toy")
    assert result.usage.calls == 3
    assert (result.usage.input_tokens, result.usage.output_tokens) == (3000, 600)
    assert result.usage.by_role[roles.PROFILING]["calls"] == 1
    data = result.usage.as_dict("claude-sonnet-4-6", runner.config.prices)
    assert data["cost_usd"] == pytest.approx(3000 * 3 / 1e6 + 600 * 15 / 1e6)
    assert "no price for other-model" in result.usage.line("other-model", {})


def test_max_turns_stops_a_looping_agent(project: Path, make_runner: RunnerFactory) -> None:
    loop = [[tool_use("route_request", {"request": "Write a Triton kernel"})] for _ in range(3)]
    api = ScriptedAPI({roles.ORCHESTRATOR: loop})
    result = make_runner(api, max_turns=3).run_request("loop")
    assert result.stopped == "max_turns"
    assert len(api.requests) == 3


def test_api_errors_end_the_run_with_a_clear_message(
    project: Path, make_runner: RunnerFactory
) -> None:
    api = ScriptedAPI({roles.ORCHESTRATOR: []})  # the stand-in answers HTTP 400
    with pytest.raises(KbError, match="Anthropic API error 400: script has no reply left"):
        make_runner(api).run_request("anything")


def test_autopilot_rejects_a_malformed_analysis_before_calling_the_api(
    project: Path, make_runner: RunnerFactory
) -> None:
    api = ScriptedAPI({})
    with pytest.raises(KbError, match="Primary bottleneck"):
        make_runner(api).run_autopilot("Recommendations:\n1. [Urgent] do it\n")
    assert api.requests == []


def test_autopilot_kickoff_ranks_recommendations_by_impact(
    project: Path, make_runner: RunnerFactory
) -> None:
    api = ScriptedAPI({roles.ORCHESTRATOR: [[text("summary")]]})
    make_runner(api).run_autopilot(
        "Primary bottleneck: memory-bound\nEvidence: Memory bandwidth at 89% of peak\n"
        "Recommendations:\n1. [Low] C\n2. [High] A\n3. [Medium] B\n"
    )
    kickoff = api.first_user_message(roles.ORCHESTRATOR)
    ranked = kickoff.split("by expected impact")[1]
    assert ranked.index("[High] A") < ranked.index("[Medium] B") < ranked.index("[Low] C")
    assert "Optimization Summary" in kickoff


def test_every_role_gets_its_own_prompt_and_only_its_tools(
    project: Path, make_runner: RunnerFactory
) -> None:
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [
                    tool_use(
                        "delegate",
                        {
                            "specialist": roles.PROFILER,
                            "task": roles.profiler_launch(
                                "toy", "toy_v1", {"b": 32, "s": 1, "t": 4096}
                            ),
                        },
                    )
                ],
                [text("done")],
            ],
            roles.PROFILER: [[text("## Profile: toy toy_v1 | b=32, s=1, t=4096")]],
        }
    )
    make_runner(api).run_request("Profile toy")
    offered = {role: [t["name"] for t in body["tools"]] for role, body in api.requests}
    system = api.requests[0][1]["system"]  # the prompt-cache breakpoint covers tools + system
    assert system[0]["cache_control"] == {"type": "ephemeral"}
    assert system[0]["text"] == roles.ROLES[roles.ORCHESTRATOR].system_prompt()
    assert offered[roles.ORCHESTRATOR] == list(roles.ROLES[roles.ORCHESTRATOR].tools)
    assert offered[roles.PROFILER] == list(roles.ROLES[roles.PROFILER].tools)
    assert "edit_file" not in offered[roles.ORCHESTRATOR]
    assert "Profile toy toy_v1 at b=32, s=1, t=4096." in api.first_user_message(roles.PROFILER)


def test_config_from_env_and_price_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBOPT_AGENT_MODEL", "claude-haiku-4-5")
    monkeypatch.setenv("KBOPT_AGENT_MAX_TURNS", "7")
    monkeypatch.setenv("KBOPT_AGENT_PRICES", '{"my-model": [2, 8]}')
    cfg = AgentConfig.from_env(max_tokens=100)
    assert (cfg.model, cfg.max_turns, cfg.max_tokens) == ("claude-haiku-4-5", 7, 100)
    assert cfg.prices["my-model"] == Price(2.0, 8.0)
    assert parse_prices("m=1.5,6") == {"m": Price(1.5, 6.0)}
    with pytest.raises(KbError, match="per million tokens"):
        parse_prices("m=cheap")
    monkeypatch.setenv("KBOPT_AGENT_MAX_TURNS", "zero")
    with pytest.raises(KbError, match="KBOPT_AGENT_MAX_TURNS"):
        AgentConfig.from_env()
    assert Usage().cost(None) is None


def test_kernel_designer_tasks_must_carry_the_optimization_task_contract(
    project: Path, make_runner: RunnerFactory
) -> None:
    from kbopt.contracts.task import OptimizationTask

    good = roles.TASK_EXAMPLE + "\n" + OptimizationTask.parse(roles.TASK_EXAMPLE).designer_prompt()
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [
                    tool_use(
                        "delegate", {"specialist": roles.KERNEL_DESIGNER, "task": "Make it faster"}
                    )
                ],
                [
                    tool_use(
                        "delegate",
                        {
                            "specialist": roles.KERNEL_DESIGNER,
                            "task": "## Optimization Task: k v1 -> v2\n### Optimizations to Apply:\n",
                        },
                    )
                ],
                [tool_use("delegate", {"specialist": roles.KERNEL_DESIGNER, "task": good})],
                [text("done")],
            ],
            roles.KERNEL_DESIGNER: [[text("## New Version: mla_decode triton_v3")]],
        }
    )
    make_runner(api).run_request("Speed up mla_decode")
    free, malformed, accepted = api.tool_results(roles.ORCHESTRATOR)
    assert free["is_error"] and "Optimization Task contract" in free["content"]
    assert malformed["is_error"] and "does not parse" in malformed["content"]
    assert not accepted["is_error"]
    assert api.roles_called().count(roles.KERNEL_DESIGNER) == 1
    # on the API nothing else loads a skill: the preloaded ones come in the system prompt,
    # and the one the launch asks for (`Load /design-triton-kernel`) with the task
    body = next(b for r, b in api.requests if r == roles.KERNEL_DESIGNER)
    system = body["system"][0]["text"] if isinstance(body["system"], list) else body["system"]
    assert "### /design-kernel" in system and roles.SKILLS["design-kernel"].body[:80] in system
    task = api.first_user_message(roles.KERNEL_DESIGNER)
    assert "Load /design-triton-kernel" in task and "### /design-triton-kernel" in task
    assert roles.SKILLS["design-triton-kernel"].body[:80] in task


def test_remote_files_mode_edits_the_cluster_copy_not_the_local_one(
    project: Path, make_runner: RunnerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """files: remote -> file tools run on the cluster through `kbopt agent tool` over ssh."""
    import shutil
    import sys

    bindir, log = _fake_cluster(tmp_path)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    cluster = tmp_path / "cluster-copy"
    shutil.copytree(project, cluster)
    remote = RemoteContext(
        host="me@login.cluster",
        job_id="77",
        workdir=str(cluster),
        python=sys.executable,
        files="remote",
    )
    kernel = "kernels/toy/toy_v1.py"
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [tool_use("backup_file", {"path": kernel})],
                [
                    tool_use(
                        "delegate",
                        {"specialist": roles.TRITON, "task": f"Tune the Triton kernel {kernel}"},
                    )
                ],
                [tool_use("revert_file", {"path": kernel})],
                [text("done")],
            ],
            roles.TRITON: [
                [tool_use("edit_file", {"path": kernel, "old": "BLOCK = 64", "new": "BLOCK = 32"})],
                [tool_use("read_file", {"path": kernel})],
                [tool_use("edit_file", {"path": "../escape.py", "old": "a", "new": "b"})],
                [text("tuned")],
            ],
        }
    )
    make_runner(api, remote=remote).run_request("Tune toy")
    edit, read, escape = api.tool_results(roles.TRITON)
    assert not edit["is_error"], edit["content"]
    assert "BLOCK = 32" in json.loads(read["content"])["text"]  # read back from the cluster
    assert escape["is_error"] and "outside the project root" in escape["content"]
    assert (project / kernel).read_text() == TOY_KERNEL  # the local copy never changed
    revert = api.tool_results(roles.ORCHESTRATOR)[-1]
    assert json.loads(revert["content"])["action"] == "restored"
    assert (cluster / kernel).read_text() == TOY_KERNEL  # restored on the cluster
    ssh_lines = [ln for ln in log.read_text().splitlines() if ln.startswith("ssh ")]
    tool_lines = [ln for ln in ssh_lines if "agent tool" in ln]
    assert len(tool_lines) == 5  # every file tool ran on the cluster ...
    assert all("squeue" in ln for ln in ssh_lines if ln not in tool_lines)  # ... or alive checks
    assert "srun" not in log.read_text()  # file operations take no job step


def test_limits_on_delegations_and_on_a_specialists_turns(
    project: Path, make_runner: RunnerFactory
) -> None:
    loop = [[tool_use("run_tests", {"path": "tests/toy"})] for _ in range(3)]
    measure = {"specialist": roles.PROFILING, "task": "Measure toy_v1"}
    api = ScriptedAPI(
        {
            roles.ORCHESTRATOR: [
                [tool_use("delegate", measure)],
                [tool_use("delegate", measure)],
                [text("done")],
            ],
            roles.PROFILING: loop,
        }
    )
    runner = make_runner(api, max_turns=3, max_delegations=1)
    result = runner.run_request("Measure toy")
    first, second = api.tool_results(roles.ORCHESTRATOR)
    assert "reached max_turns=3" in json.loads(first["content"])["report"]
    assert second["is_error"] and "delegation limit reached" in second["content"]
    assert result.stopped == "end_turn"  # the orchestrator itself finished
    assert len(runner.ctx.state.delegations) == 1
