"""Remote SLURM execution that would work on a real cluster, tested two ways:

- against a real OpenSSH server on localhost with fake `srun`/`squeue` reached through
  the context's set-up line (skipped, saying so, where sshd is not installed);
- with a fake `ssh` on PATH that hands the remote line to bash as sshd would (always
  runs): the generated command lines, their quoting, the alive check, remote file
  checks, `kbopt cycle --remote` and `--dry-run --remote`.

The remote project root has a space and a quote in its name, so any unquoted path
breaks.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kbopt.agents import roles
from kbopt.agents.errors import RunAborted
from kbopt.agents.remote import RemoteContext, RemoteExecutor
from kbopt.agents.tools import ToolContext, call_tool
from kbopt.errors import KbError
from kbopt.store import Store
from tests.robustness.fake_cluster import FakeSlurm, Sshd, fake_ssh_bin
from tests.robustness.harness import call, clean_error

JOB = "4242"


@pytest.fixture
def slurm(tmp_path: Path) -> FakeSlurm:
    s = FakeSlurm(tmp_path / "slurm")
    s.set_state(JOB, "RUNNING")
    return s


@pytest.fixture
def remote_root(tmp_path: Path) -> Path:
    root = tmp_path / "remote proj's root"
    (root / "docs" / "knowledge").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "test_remote_only.py").write_text("def test_ok():\n    assert True\n")
    (root / "kernels" / "toy").mkdir(parents=True)
    (root / "kernels" / "toy" / "spec.py").write_text("# only on the cluster\n")
    return root


@pytest.fixture
def local_root(tmp_path: Path) -> Path:
    root = tmp_path / "local"
    (root / "docs" / "knowledge").mkdir(parents=True)
    return root


def _context(remote_root: Path, slurm: FakeSlurm, **extra: object) -> RemoteContext:
    data: dict[str, object] = {
        "host": "me@login",
        "job_id": JOB,
        "workdir": str(remote_root),
        "python": sys.executable,
        "files": "remote",
        "setup": slurm.setup_line,
        **extra,
    }
    return RemoteContext.model_validate(data)


# --------------------------------------------------------------------------- with a fake ssh


@pytest.fixture
def fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder, log = fake_ssh_bin(tmp_path / "sshbin")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def test_commands_run_in_the_allocation_from_the_quoted_root(
    fake_ssh: Path, slurm: FakeSlurm, remote_root: Path, local_root: Path
) -> None:
    ctx = _context(remote_root, slurm, srun_args=("--gpus=1",))
    ex = RemoteExecutor(ctx, local_root)
    r = ex.run(
        [
            sys.executable,
            "-c",
            "import os, sys; print(os.getcwd()); print(sys.argv[1])",
            "a 'b' $HOME ; c",
        ],
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    cwd, arg = r.stdout.splitlines()
    assert cwd == str(remote_root) and arg == "a 'b' $HOME ; c"
    (call_line,) = slurm.calls()
    assert call_line.startswith(f"{remote_root}|") and call_line.endswith("overlap=1")
    # ssh: batch mode, multiplexed, options before the destination
    argv = ctx.wrap(["true"])
    assert argv[0] == "ssh" and argv[-2] == "me@login"
    joined = " ".join(argv[:-1])
    for option in (
        "BatchMode=yes",
        "ControlMaster=auto",
        "ControlPath=~/.ssh/kbopt-%C",
        "ControlPersist=600",
    ):
        assert option in joined


def test_login_commands_and_remote_file_checks(
    fake_ssh: Path, slurm: FakeSlurm, remote_root: Path, local_root: Path
) -> None:
    ex = RemoteExecutor(_context(remote_root, slurm), local_root)
    assert ex.exists("tests/test_remote_only.py") and ex.exists("kernels/toy/spec.py")
    assert not ex.exists("tests/missing.py")
    assert not (local_root / "tests").exists()  # the check did not look here
    assert slurm.calls() == []  # file checks run on the login node, not in a job step


def test_tools_check_remote_files_on_the_cluster(
    fake_ssh: Path, slurm: FakeSlurm, remote_root: Path, local_root: Path
) -> None:
    ctx = ToolContext(
        root=local_root,
        store=Store(local_root),
        executor=RemoteExecutor(_context(remote_root, slurm), local_root),
        role=roles.PROFILING,
    )
    out = call_tool(ctx, "run_tests", {"path": "tests/test_remote_only.py"})
    assert not out.is_error, out.content
    assert json.loads(out.content)["ok"] is True
    out = call_tool(ctx, "run_tests", {"path": "tests/missing.py"})
    assert out.is_error and "no such test path on me@login" in out.content
    out = call_tool(ctx, "run_benchmark", {"kernel": "absent", "version": "v1", "backend": "fake"})
    assert out.is_error and "does not exist on me@login" in out.content


def test_allocation_is_checked_alive(
    fake_ssh: Path, slurm: FakeSlurm, remote_root: Path, local_root: Path
) -> None:
    ex = RemoteExecutor(_context(remote_root, slurm), local_root)
    assert ex.check_alive() == "RUNNING"
    slurm.set_state(JOB, "COMPLETED")
    with pytest.raises(KbError, match=f"allocation {JOB} on me@login is not running \\(COMPLETED"):
        ex.check_alive()
    slurm.set_state(JOB, None)
    with pytest.raises(KbError, match="Invalid job id"):
        ex.check_alive()


def test_delegation_stops_the_run_when_the_allocation_ended(
    fake_ssh: Path, slurm: FakeSlurm, remote_root: Path, local_root: Path
) -> None:
    delegated: list[str] = []
    ctx = ToolContext(
        root=local_root,
        store=Store(local_root),
        executor=RemoteExecutor(_context(remote_root, slurm), local_root),
        role=roles.ORCHESTRATOR,
        delegate_fn=lambda who, task: delegated.append(who) or "done",
    )
    task = {"specialist": roles.TRITON, "task": "Write a Triton kernel for RMSNorm"}
    assert not call_tool(ctx, "delegate", task).is_error and delegated == [roles.TRITON]
    slurm.set_state(JOB, "TIMEOUT")
    with pytest.raises(RunAborted, match="not running"):
        call_tool(ctx, "delegate", task)
    assert delegated == [roles.TRITON]


def test_wrapper_line_typed_in_a_shell_runs_in_the_quoted_root(
    fake_ssh: Path, slurm: FakeSlurm, remote_root: Path
) -> None:
    ctx = _context(remote_root, slurm)
    line = ctx.wrapper_line()
    assert "<command>" in line
    r = subprocess.run(
        line.replace("<command>", "pwd"), shell=True, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(remote_root)
    # A workdir with a quote survives only if it is quoted inside the remote line too.
    assert shlex.split(line)[-1].startswith(f"cd {shlex.quote(str(remote_root))} && ")


def test_block_names_setup_wrapper_and_checks(slurm: FakeSlurm, remote_root: Path) -> None:
    block = _context(remote_root, slurm).block()
    assert block.startswith("## Remote Execution Context")
    assert f"Set-up (modules, environment), run first: {slurm.setup_line}" in block
    assert "checked alive before each delegation" in block and "ControlMaster" in block
    assert f"Wrapper: {_context(remote_root, slurm).wrapper_line()}" in block


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("host", "-oProxyCommand=touch /tmp/x"),
        ("host", "a b"),
        ("workdir", "/x\nrm -rf /"),
        ("setup", "a\nb"),
        ("job_id", "1; rm"),
        ("ssh_args", ["-o\nx"]),
    ],
)
def test_contexts_that_would_inject_are_refused(tmp_path: Path, field: str, value: object) -> None:
    data = {"host": "h", "job_id": "1", "workdir": "/w", field: value}
    path = tmp_path / "ctx.json"
    path.write_text(json.dumps(data))
    with pytest.raises(KbError, match=field):
        RemoteContext.load(path)


def _write_ctx(path: Path, ctx: RemoteContext) -> Path:
    path.write_text(ctx.model_dump_json())
    return path


def test_dry_run_shows_the_remote_block(
    slurm: FakeSlurm, remote_root: Path, local_root: Path, tmp_path: Path
) -> None:
    ctx_file = _write_ctx(tmp_path / "ctx.json", _context(remote_root, slurm))
    r = call(
        local_root,
        "agent",
        "run",
        "Write a Triton kernel",
        "--sm",
        "90",
        "--dry-run",
        "--remote",
        str(ctx_file),
        "--json",
    )
    assert r.rc == 0, r.both
    data = json.loads(r.out)
    assert "## Remote Execution Context" in data["task"] and data["remote"]["job_id"] == JOB
    r = call(
        local_root,
        "agent",
        "run",
        "Write a Triton kernel",
        "--sm",
        "90",
        "--dry-run",
        "--remote",
        str(ctx_file),
    )
    assert "## Remote Execution Context" in r.out and "Wrapper: ssh" in r.out


def test_cycle_remote_runs_kbopt_cycle_in_the_allocation(
    fake_ssh: Path, slurm: FakeSlurm, remote_root: Path, local_root: Path, tmp_path: Path
) -> None:
    ctx_file = _write_ctx(tmp_path / "ctx.json", _context(remote_root, slurm))
    argv = [
        sys.executable,
        "-m",
        "kbopt",
        "--root",
        str(local_root),
        "cycle",
        "toy",
        "--resume",
        "no-such-run",
        "--remote",
        str(ctx_file),
    ]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    # The remote kbopt ran (in the remote root, as a job step) and its answer came back.
    (call_line,) = slurm.calls()
    assert call_line.startswith(f"{remote_root}|{sys.executable} -m kbopt --root . cycle toy ")
    assert "--resume no-such-run" in call_line and "--remote" not in call_line
    assert r.returncode != 0 and "Traceback" not in r.stderr
    # An ended allocation: refused before any step starts.
    slurm.set_state(JOB, "COMPLETED")
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert r.returncode == 2 and "is not running" in r.stderr
    assert len(slurm.calls()) == 1


def test_every_cycle_option_is_forwarded_by_remote() -> None:
    from kbopt.cli import build_parser
    from kbopt.cli.cycle_cmds import REMOTE_CYCLE_OPTIONS

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    cycle = sub.choices["cycle"]
    # --timeout bounds the local command (and with it ssh); it is not the remote one's.
    dests = {a.dest for a in cycle._actions} - {
        "help",
        "json",
        "kernel",
        "remote",
        "timeout_after_command",
    }
    assert dests == {attr for _, attr in REMOTE_CYCLE_OPTIONS}, (
        "forward new cycle options in REMOTE_CYCLE_OPTIONS"
    )


def test_bad_remote_context_file_is_one_line(local_root: Path, tmp_path: Path) -> None:
    bad = tmp_path / "ctx.json"
    bad.write_text('{"host": "-oProxyCommand=x", "job_id": "1", "workdir": "/w"}')
    clean_error(
        call(local_root, "cycle", "toy", "--resume", "x", "--remote", str(bad)), "ssh destination"
    )
    os.mkfifo(tmp_path / "fifo.json")
    clean_error(
        call(local_root, "cycle", "toy", "--resume", "x", "--remote", str(tmp_path / "fifo.json")),
        "FIFO",
    )


# --------------------------------------------------------------------------- with a real sshd


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = Sshd.start(tmp_path_factory.mktemp("sshd"))
    if server is None:
        pytest.skip(
            "OpenSSH's sshd is not installed or cannot start here: the fake-ssh tests above cover the command lines"
        )
    yield server
    server.stop()


def _real_context(sshd: Sshd, remote_root: Path, slurm: FakeSlurm) -> RemoteContext:
    return _context(
        remote_root,
        slurm,
        host=f"{sshd.user}@127.0.0.1",
        ssh_args=tuple(sshd.ssh_args()),
        control_path=str(sshd.control_dir / "%C"),
    )


def test_real_ssh_runs_in_the_allocation_and_multiplexes(
    sshd: Sshd, slurm: FakeSlurm, remote_root: Path, local_root: Path
) -> None:
    ctx = _real_context(sshd, remote_root, slurm)
    ex = RemoteExecutor(ctx, local_root)
    assert ex.check_alive() == "RUNNING"
    r = ex.run([sys.executable, "-c", "import os; print(os.getcwd())"], timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(remote_root)
    assert slurm.calls() and slurm.calls()[0].endswith("overlap=1")
    # One master connection, reused: its control socket exists and answers.
    sockets = list(sshd.control_dir.iterdir())
    assert len(sockets) == 1
    check = subprocess.run(
        ["ssh", "-O", "check", "-o", f"ControlPath={sockets[0]}", "x"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0, check.stderr
    assert ex.exists("tests/test_remote_only.py") and not ex.exists("tests/nope.py")
    slurm.set_state(JOB, "COMPLETED")
    with pytest.raises(KbError, match="not running"):
        ex.check_alive()


def test_real_ssh_wrapper_line_and_cycle(
    sshd: Sshd, slurm: FakeSlurm, remote_root: Path, local_root: Path, tmp_path: Path
) -> None:
    ctx = _real_context(sshd, remote_root, slurm)
    r = subprocess.run(
        ctx.wrapper_line().replace("<command>", "pwd"),
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout.strip() == str(remote_root), r.stderr
    ctx_file = _write_ctx(tmp_path / "ctx.json", ctx)
    argv = [
        sys.executable,
        "-m",
        "kbopt",
        "--root",
        str(local_root),
        "cycle",
        "toy",
        "--resume",
        "no-such-run",
        "--remote",
        str(ctx_file),
    ]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert any("cycle toy" in c and "--resume no-such-run" in c for c in slurm.calls())
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr


def test_remote_forwards_a_set_flag_without_a_value() -> None:
    from kbopt.cli import build_parser
    from kbopt.cli.cycle_cmds import remote_cycle_argv

    parser = build_parser()
    base = ["cycle", "toy", "--target", "pct_of_floor>=90", "--from", "toy_v1"]
    argv = remote_cycle_argv(parser.parse_args([*base, "--require-target"]), "python3")
    assert "--require-target" in argv and "True" not in argv and "False" not in argv
    assert "--require-target" not in remote_cycle_argv(parser.parse_args(base), "python3")
