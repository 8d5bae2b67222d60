"""The Remote Execution Context and the executors that run the agents' commands.

On a SLURM cluster every delegation carries the same context block: the ssh
destination, the ONE allocation (job id) that all specialists share, and the remote
working directory.  Commands are wrapped as

    ssh <host> 'cd <workdir> && srun --jobid=<job> --overlap [srun args] <command>'

so that every specialist runs its steps inside the same allocation (`--overlap` lets
several job steps share it) and files written by one stay on the remote file system
for the next.  Without a context, commands run locally in the project root.

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
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kbopt.errors import KbError

BLOCK_TITLE = "## Remote Execution Context"
ENV_FILE = "KBOPT_REMOTE"  # path of a JSON file holding a RemoteContext


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
    srun_args: tuple[str, ...] = ()
    ssh_args: tuple[str, ...] = ()

    def wrap(self, argv: list[str]) -> list[str]:
        """The local argv that runs `argv` on the allocation through ssh + srun."""
        srun = ["srun", f"--jobid={self.job_id}", "--overlap", *self.srun_args, *argv]
        remote = f"cd {shlex.quote(self.workdir)} && {shlex.join(srun)}"
        return ["ssh", *self.ssh_args, self.host, remote]

    def wrap_login(self, argv: list[str]) -> list[str]:
        """`argv` on the login host in the remote project root (file operations, no job step)."""
        return [
            "ssh",
            *self.ssh_args,
            self.host,
            f"cd {shlex.quote(self.workdir)} && {shlex.join(argv)}",
        ]

    def wrapper_line(self) -> str:
        """The wrapper as a shell prefix a person (or Claude Code's Bash) can type."""
        ssh = shlex.join(["ssh", *self.ssh_args, self.host])
        srun = shlex.join(["srun", f"--jobid={self.job_id}", "--overlap", *self.srun_args])
        return f"{ssh} 'cd {self.workdir} && {srun} <command>'"

    def block(self) -> str:
        """The block that goes, unchanged, into every delegation."""
        return "\n".join(
            [
                BLOCK_TITLE,
                f"- Host: {self.host}",
                f"- Allocation: SLURM job {self.job_id} (shared by every specialist; "
                "do not allocate another)",
                f"- Remote project root: {self.workdir} (files: {self.files})",
                f"- Wrapper: {self.wrapper_line()}",
                "- Files written on the remote file system stay there for the next specialist.",
            ]
        )

    @classmethod
    def load(cls, path: Path) -> RemoteContext:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise KbError(f"cannot read remote context {path}: {exc.strerror}") from None
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


class LocalExecutor:
    """Runs commands in the local project root with this interpreter's environment."""

    remote: RemoteContext | None = None

    def __init__(self, root: Path):
        self.root = root
        self.python = sys.executable

    def run(self, argv: list[str], *, timeout: float) -> CommandResult:
        return _run(argv, cwd=self.root, timeout=timeout)


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
