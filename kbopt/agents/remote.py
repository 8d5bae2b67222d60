"""The Remote Execution Context and the executors that run the agents' commands.

On a SLURM cluster every delegation carries the same context block: the ssh
destination, the ONE allocation (job id) that all specialists share, and the remote
working directory.  Commands are wrapped as

    ssh <host> 'cd <workdir> && srun --jobid=<job> --overlap [srun args] <command>'

so that every specialist runs its steps inside the same allocation (`--overlap` lets
several job steps share it) and files written by one stay on the remote file system
for the next.  Without a context, commands run locally in the project root.

What makes it work on a real cluster: every part of the remote line is quoted for the
remote shell; a `setup` line (modules, a virtual environment) runs before each
command; ssh runs in batch mode (never a password prompt) over one multiplexed
connection (ControlMaster, `control_path`); the allocation is asked for (`squeue`)
before each delegation, so a run stops with one line when it has ended.

`files` says where the project files the agents read and edit live:
- "shared": kbopt runs where it sees the same project directory as `workdir` (a login
  node on the cluster's shared file system): file tools act on it directly;
- "remote": the files exist only on the cluster: the file tools run there too, as
  `ssh <host> 'cd <workdir> && <python> -m kbopt agent tool ...'` (login node, no job
  step), so an edit by one specialist is on the remote file system for the next.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kbopt.errors import KbError

BLOCK_TITLE = "## Remote Execution Context"
ENV_FILE = "KBOPT_REMOTE"  # path of a JSON file holding a RemoteContext
# Every ssh call: never prompt (a password prompt would hang an agent), give up on a dead
# host, notice a dropped connection.
SSH_OPTIONS = (
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=20",
    "-o",
    "ServerAliveInterval=30",
    "-o",
    "ServerAliveCountMax=4",
)
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
# An ssh destination: user@host, host, or an ssh_config alias; never an option ("-o...").
_HOST_RE = re.compile(r"\A[A-Za-z0-9_.@\[\]:%-]+\Z")


class RemoteContext(BaseModel):
    """One cluster, one allocation, one remote project directory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(min_length=1, description="ssh destination, e.g. user@login.cluster")
    job_id: str = Field(pattern=r"^[0-9]+(?:_[0-9]+)?$", description="the shared SLURM allocation")
    workdir: str = Field(min_length=1, description="project root on the remote file system")
    python: str = Field(default="python", description="python interpreter on the cluster")
    files: Literal["shared", "remote"] = Field(
        default="shared", description="where the project files live (see the module docstring)"
    )
    setup: str = Field(
        default="",
        description="shell line run before every remote command, e.g. "
        "'module load cuda/12.4 && source .venv/bin/activate'",
    )
    # ssh connection multiplexing: one TCP/auth handshake, reused by every command.
    multiplex: bool = True
    control_path: str = Field(default="~/.ssh/kbopt-%C", min_length=1)
    srun_args: tuple[str, ...] = ()
    ssh_args: tuple[str, ...] = ()

    @field_validator("host")
    @classmethod
    def _host(cls, v: str) -> str:
        if v.startswith("-") or not _HOST_RE.match(v):
            raise ValueError(f"{v!r} is not an ssh destination (user@host or a host alias)")
        return v

    @field_validator("workdir", "python", "setup", "control_path")
    @classmethod
    def _one_line(cls, v: str) -> str:
        if _CONTROL_CHARS.search(v):
            raise ValueError("must be one line without control characters")
        return v

    @field_validator("srun_args", "ssh_args")
    @classmethod
    def _args(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(_CONTROL_CHARS.search(a) for a in v):
            raise ValueError("arguments must be one line without control characters")
        return v

    # ------------------------------------------------------------------ command lines

    def ssh(self) -> list[str]:
        """`ssh` with its options and the destination; the remote command follows."""
        mux = (
            [
                "-o",
                "ControlMaster=auto",
                "-o",
                f"ControlPath={self.control_path}",
                "-o",
                "ControlPersist=600",
            ]
            if self.multiplex
            else []
        )
        return ["ssh", *SSH_OPTIONS, *mux, *self.ssh_args, self.host]

    def _shell(self, command: str) -> str:
        """The remote shell line: into the project root, the set-up line, then `command`."""
        parts = [f"cd {shlex.quote(self.workdir)}"]
        if self.setup.strip():
            parts.append(f"{{ {self.setup.strip()} ; }}")
        parts.append(command)
        return " && ".join(parts)

    def srun_prefix(self) -> list[str]:
        return ["srun", f"--jobid={self.job_id}", "--overlap", *self.srun_args]

    def wrap(self, argv: list[str]) -> list[str]:
        """The local argv that runs `argv` on the allocation through ssh + srun."""
        return [*self.ssh(), self._shell(shlex.join([*self.srun_prefix(), *argv]))]

    def wrap_login(self, argv: list[str]) -> list[str]:
        """`argv` on the login host in the remote project root (file operations, no job step)."""
        return [*self.ssh(), self._shell(shlex.join(argv))]

    def alive_argv(self) -> list[str]:
        """Asks SLURM for the allocation's state (prints RUNNING while it is usable)."""
        return self.wrap_login(["squeue", "-h", "-j", self.job_id, "-o", "%T"])

    def wrapper_line(self) -> str:
        """The wrapper as a line a person (or Claude Code's Bash) can type, replacing
        <command> (every part quoted for the shell that reads it)."""
        inner = self._shell(shlex.join(self.srun_prefix()) + " <command>")
        return f"{shlex.join(self.ssh())} {shlex.quote(inner)}"

    def block(self) -> str:
        """The block that goes, unchanged, into every delegation."""
        lines = [
            BLOCK_TITLE,
            f"- Host: {self.host}",
            f"- Allocation: SLURM job {self.job_id} (shared by every specialist; "
            "do not allocate another; checked alive before each delegation)",
            f"- Remote project root: {self.workdir} (files: {self.files})",
        ]
        if self.setup.strip():
            lines.append(f"- Set-up (modules, environment), run first: {self.setup.strip()}")
        lines += [
            f"- Wrapper: {self.wrapper_line()}",
            "- ssh: batch mode (no prompts)"
            + (", one multiplexed connection (ControlMaster)" if self.multiplex else ""),
            "- Files written on the remote file system stay there for the next specialist.",
        ]
        return "\n".join(lines)

    @classmethod
    def load(cls, path: Path) -> RemoteContext:
        from kbopt.textio import read_text

        text = read_text(path)  # a regular file, UTF-8: a FIFO or a folder is refused
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise KbError(f"not JSON: {exc.msg}", str(path), exc.lineno) from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise KbError(f"remote context: {where}: {first['msg']}", str(path), 1) from None

    @classmethod
    def from_env(cls) -> RemoteContext | None:
        path = os.environ.get(ENV_FILE)
        return cls.load(Path(path)) if path else None


@dataclass
class CommandResult:
    argv: list[str]  # what was actually executed (wrapped when remote)
    returncode: int
    stdout: str
    stderr: str

    def as_dict(self, limit: int = 20_000) -> dict[str, object]:
        return {
            "command": shlex.join(self.argv),
            "returncode": self.returncode,
            "stdout": _tail(self.stdout, limit),
            "stderr": _tail(self.stderr, limit // 4),
        }


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[...truncated...]\n" + text[-limit:]


class Executor(Protocol):
    python: str
    remote: RemoteContext | None

    def run(self, argv: list[str], *, timeout: float) -> CommandResult: ...

    def exists(self, relpath: str, *, timeout: float = ...) -> bool: ...


class LocalExecutor:
    """Runs commands in the local project root with this interpreter's environment."""

    remote: RemoteContext | None = None

    def __init__(self, root: Path):
        self.root = root
        self.python = sys.executable

    def run(self, argv: list[str], *, timeout: float) -> CommandResult:
        return _run(argv, cwd=self.root, timeout=timeout)

    def exists(self, relpath: str, *, timeout: float = 0.0) -> bool:
        return (self.root / relpath).exists()


class RemoteExecutor:
    """Runs every command through the context's ssh + srun wrapper (one allocation)."""

    def __init__(self, context: RemoteContext, local_root: Path):
        self.remote: RemoteContext | None = context
        self.context = context
        self.local_root = local_root
        self.python = context.python

    def run(self, argv: list[str], *, timeout: float) -> CommandResult:
        return _run(self.context.wrap(argv), cwd=self.local_root, timeout=timeout)

    def run_login(self, argv: list[str], *, timeout: float) -> CommandResult:
        return _run(self.context.wrap_login(argv), cwd=self.local_root, timeout=timeout)

    def check_alive(self, *, timeout: float = 120.0) -> str:
        """The allocation's state; KbError unless SLURM says it is RUNNING."""
        result = _run(self.context.alive_argv(), cwd=self.local_root, timeout=timeout)
        state = result.stdout.strip().splitlines()[-1].strip() if result.stdout.strip() else ""
        if result.returncode == 0 and state == "RUNNING":
            return state
        why = state or (result.stderr.strip().splitlines() or ["no answer"])[-1]
        raise KbError(
            f"the SLURM allocation {self.context.job_id} on {self.context.host} is not running "
            f"({why}; exit {result.returncode}): allocate again and update the Remote Execution "
            "Context"
        )

    def exists(self, relpath: str, *, timeout: float = 120.0) -> bool:
        """Whether `relpath` exists in the project root on the cluster."""
        if self.context.files == "shared":
            return (self.local_root / relpath).exists()
        return self.run_login(["test", "-e", relpath], timeout=timeout).returncode == 0


def _run(argv: list[str], *, cwd: Path, timeout: float) -> CommandResult:
    try:
        proc = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError:
        return CommandResult(argv, 127, "", f"command not found: {argv[0]}")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        return CommandResult(argv, 124, out, f"timed out after {timeout:.0f} s")
    return CommandResult(argv, proc.returncode, proc.stdout, proc.stderr)


def make_executor(root: Path, context: RemoteContext | None) -> Executor:
    return RemoteExecutor(context, root) if context is not None else LocalExecutor(root)
