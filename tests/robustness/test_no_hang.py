"""No hang: an API server that never answers, Ctrl-C, and `--timeout` all end a run.

A local socket that accepts connections and never replies stands in for a dead or
black-holed `ANTHROPIC_BASE_URL`; `kbopt agent run` must give up on its own (client
read timeout), stop on SIGINT (exit 130) and stop at `--timeout` (exit 124).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


class Silent(str):
    """The server's URL; `connected` is set once a client is waiting on it."""

    connected: threading.Event


@pytest.fixture
def silent_server() -> Iterator[Silent]:
    """http://127.0.0.1:PORT that accepts connections and never sends a byte."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()
    url = Silent(f"http://127.0.0.1:{srv.getsockname()[1]}")
    url.connected = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            held.append(conn)  # never read, never answered, never closed until the end
            url.connected.set()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield url
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    srv.close()


def _start(
    root: Path, url: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    environ = {
        **os.environ,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": url,
        "KBOPT_AGENT_MAX_RETRIES": "0",
        **(env or {}),
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kbopt",
            "--root",
            str(root),
            *extra,
            "agent",
            "run",
            "Write a Triton kernel",
            "--sm",
            "90",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
        preexec_fn=_as_a_terminal_starts_it,
    )


def _as_a_terminal_starts_it() -> None:
    """Ctrl-C at its default, as in a command typed at a terminal.  A child inherits an
    ignored SIGINT, and Python then never raises KeyboardInterrupt: a test run started in
    the background by a non-interactive shell (which ignores SIGINT for background jobs)
    made the Ctrl-C test hang, as `kbopt` started that way rightly ignores Ctrl-C too."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_server_that_never_answers_times_out(empty_kb: Path, silent_server: str) -> None:
    began = time.monotonic()
    proc = _start(empty_kb, silent_server, env={"KBOPT_AGENT_READ_TIMEOUT": "1"})
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, (out, err)
    assert "did not answer" in err and "Traceback" not in err
    assert time.monotonic() - began < 30


def test_ctrl_c_stops_a_waiting_run(empty_kb: Path, silent_server: Silent) -> None:
    # faulthandler: a run still alive after the deadline dumps every thread's stack on
    # SIGABRT, so a hang fails with where it waits instead of a bare timeout (the hangs
    # seen came from test runs started with SIGINT ignored: see _as_a_terminal_starts_it)
    env = {"KBOPT_AGENT_READ_TIMEOUT": "600", "PYTHONFAULTHANDLER": "1"}
    proc = _start(empty_kb, silent_server, env=env)
    assert silent_server.connected.wait(60)  # started, and waiting on the API
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"still running 30 s after Ctrl-C; its stacks:\n{err[-6000:]}")
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err


def test_timeout_option_stops_a_waiting_run(empty_kb: Path, silent_server: str) -> None:
    proc = _start(
        empty_kb, silent_server, "--timeout", "2", env={"KBOPT_AGENT_READ_TIMEOUT": "600"}
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 124, (out, err)
    assert "--timeout" in err and "Traceback" not in err


def test_client_timeouts_come_from_the_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from kbopt.agents.runner import AgentConfig, make_client

    monkeypatch.setenv("KBOPT_AGENT_CONNECT_TIMEOUT", "3")
    monkeypatch.setenv("KBOPT_AGENT_READ_TIMEOUT", "45")
    monkeypatch.setenv("KBOPT_AGENT_MAX_RETRIES", "1")
    client = make_client(api_key="k")
    assert (client.timeout.connect, client.timeout.read, client.max_retries) == (3.0, 45.0, 1)
    client = make_client(api_key="k", config=AgentConfig(connect_timeout_s=1.5, read_timeout_s=9))
    assert (client.timeout.connect, client.timeout.read) == (1.5, 9)


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("KBOPT_AGENT_READ_TIMEOUT", "0"),
        ("KBOPT_AGENT_READ_TIMEOUT", "nan"),
        ("KBOPT_AGENT_CONNECT_TIMEOUT", "-1"),
        ("KBOPT_AGENT_MAX_RETRIES", "many"),
    ],
)
def test_bad_timeout_settings_are_refused(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str
) -> None:
    from kbopt.agents.runner import AgentConfig
    from kbopt.errors import KbError

    monkeypatch.setenv(var, value)
    with pytest.raises(KbError, match=var):
        AgentConfig.from_env()


@pytest.mark.parametrize("where", ["kbopt.cli.quick.answer", "kbopt.cli.build_parser"])
def test_ctrl_c_before_the_command_runs_is_one_line(
    where: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ctrl-C while the quick path or the parser is still loading, before any command's own
    # handler is in place: the same one-line exit 130 as during a command
    from kbopt.cli import main

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(where, interrupted)
    assert main(["vocab", "--json"]) == 130
    assert capsys.readouterr().err == "kbopt: interrupted\n"


def test_a_timeout_wrapped_by_a_library_is_still_a_timeout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The alarm can land inside a library that turns every exception into its own (on a
    loaded CI machine `--timeout 2` fired while pydantic built a validator at start-up and
    surfaced as a SchemaError traceback): the chain's timeout decides, exit 124, one line."""
    from kbopt import cli
    from kbopt.cli import catalog_cmds

    def slow_start(args: object) -> int:
        try:
            raise cli.CommandTimeout
        except BaseException as exc:
            raise RuntimeError("Error building validator") from exc

    monkeypatch.setattr(catalog_cmds, "cmd_vocab", slow_start)
    assert cli.main(["--timeout", "30", "vocab"]) == 124
    err = capsys.readouterr().err
    assert "--timeout" in err and "Traceback" not in err

    def plain_bug(args: object) -> int:
        raise RuntimeError("a bug, not a timeout")

    monkeypatch.setattr(catalog_cmds, "cmd_vocab", plain_bug)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["--timeout", "30", "vocab"])


HALF_BUILT = """
import sys
from kbopt import cli
from kbopt.cli import catalog_cmds

class HalfBuilt:  # as an HTTP client interrupted in its constructor
    def __del__(self):
        raise AttributeError("'HalfBuilt' object has no attribute '_state'")

keep = []

def slow_start(args):
    keep.append(HalfBuilt())
    raise cli.CommandTimeout

catalog_cmds.cmd_vocab = slow_start
sys.argv = ["kbopt", "--timeout", "30", "vocab"]
cli.run()
"""


def test_after_a_timeout_the_command_ends_without_destructor_tracebacks(tmp_path: Path) -> None:
    """On a loaded CI machine `--timeout 2` fired inside the Anthropic client's constructor,
    and at exit the half-built client's destructor printed a traceback under the one-line
    reason: the command drops such reports once it has given up."""
    script = tmp_path / "half_built.py"
    script.write_text(HALF_BUILT, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert proc.returncode == 124, proc.stderr
    assert "--timeout" in proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


_HALF_BUILT = """
import sys
import kbopt.cli as cli

class HalfBuilt:  # an HTTP client the alarm interrupted in its constructor
    def __del__(self):
        raise AttributeError("'HalfBuilt' object has no attribute '_state'")

def fake_main(argv=None):
    if sys.argv[1] == "alarm":
        try:
            cli._on_alarm(14, None)
        except cli.CommandTimeout:
            pass
    HalfBuilt()  # collected at once, while the command is still unwinding
    return 124 if sys.argv[1] == "alarm" else 0

cli.main = fake_main
cli.run()
"""


@pytest.mark.parametrize("case", ["alarm", "no-alarm"])
def test_a_half_built_object_s_destructor_is_silent_after_the_timeout_only(case: str) -> None:
    """Under load, an object the --timeout alarm left half-built was collected before the
    command returned, and its destructor's traceback reached stderr.  After the alarm such
    reports are dropped wherever they happen; without it they still show."""
    done = subprocess.run(
        [sys.executable, "-c", _HALF_BUILT, case], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == (124 if case == "alarm" else 0)
    shown = "Exception ignored" in done.stderr
    assert shown == (case == "no-alarm"), done.stderr
