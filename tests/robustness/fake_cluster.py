"""A stand-in SLURM cluster for the remote tests: `srun` and `squeue` scripts, an
optional local `sshd`, and a fake `ssh` that runs the remote line through bash.

- `FakeSlurm(folder)` writes `bin/srun` and `bin/squeue`.  A job is alive while
  `jobs/<id>` holds RUNNING; `srun --jobid=<id> --overlap CMD...` refuses a job that is
  not, logs `cwd|argv` to `srun.log` and runs CMD.
- `Sshd.start(folder)` runs OpenSSH's sshd on a free localhost port with a fresh host
  key and one client key (None when sshd is not installed or cannot start).
- `fake_ssh_bin(folder)` writes an `ssh` that parses ssh's options like ssh does, logs
  its argv, and hands the remote line to `bash -c`, the way sshd hands it to the
  user's shell: quoting mistakes break it the same way.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SRUN = """#!/bin/bash
# fake srun: --jobid=<id> --overlap [more options] CMD...
jobid=""; overlap=0
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in
    --jobid=*) jobid=${1#--jobid=} ;;
    --overlap) overlap=1 ;;
  esac
  shift
done
state=$(cat "__JOBS__/$jobid" 2>/dev/null)
if [[ $state != RUNNING ]]; then
  echo "srun: error: Unable to confirm allocation for job $jobid: Invalid job id specified" >&2
  exit 1
fi
printf '%s|%s|overlap=%s\\n' "$PWD" "$*" "$overlap" >> "__LOG__"
exec "$@"
"""

SQUEUE = """#!/bin/bash
# fake squeue -h -j <id> -o %T
while [[ $# -gt 0 ]]; do
  case $1 in -j) jobid=$2; shift ;; esac
  shift
done
if [[ -f "__JOBS__/$jobid" ]]; then cat "__JOBS__/$jobid"; exit 0; fi
echo "slurm_load_jobs error: Invalid job id specified" >&2
exit 1
"""

FAKE_SSH = """#!/bin/bash
# fake ssh: options as OpenSSH parses them, then the destination, then the remote line.
printf '%s\\0' "$@" >> "__LOG__"; printf '\\n' >> "__LOG__"
while [[ $# -gt 0 ]]; do
  case $1 in
    -[46AaCfGgKkMNnqsTtVvXxYy]) shift ;;
    -[BbcDEeFIiJLlmOoPpQRSWw]) shift 2 ;;
    -[BbcDEeFIiJLlmOoPpQRSWw]?*) shift ;;
    --) shift; break ;;
    -*) echo "fake ssh: unknown option $1" >&2; exit 255 ;;
    *) break ;;
  esac
done
host=$1; shift
exec bash -c "$*"
"""


@dataclass
class FakeSlurm:
    folder: Path

    def __post_init__(self) -> None:
        self.bin = self.folder / "bin"
        self.jobs = self.folder / "jobs"
        self.log = self.folder / "srun.log"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.jobs.mkdir(exist_ok=True)
        for name, text in (("srun", SRUN), ("squeue", SQUEUE)):
            path = self.bin / name
            path.write_text(
                text.replace("__JOBS__", str(self.jobs)).replace("__LOG__", str(self.log))
            )
            path.chmod(0o755)

    def set_state(self, job: str, state: str | None) -> None:
        path = self.jobs / job
        if state is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(state + "\n")

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    @property
    def setup_line(self) -> str:
        return f"export PATH={self.bin}:$PATH"


def fake_ssh_bin(folder: Path) -> tuple[Path, Path]:
    """(folder holding a fake `ssh`, the log of its argv)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "ssh.log"
    path = folder / "ssh"
    path.write_text(FAKE_SSH.replace("__LOG__", str(log)))
    path.chmod(0o755)
    return folder, log


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Sshd:
    folder: Path
    port: int
    client_key: Path
    proc: subprocess.Popen[bytes]
    control_dir: Path

    @classmethod
    def start(cls, folder: Path) -> Sshd | None:
        sshd = shutil.which("sshd") or (
            "/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None
        )
        keygen = shutil.which("ssh-keygen")
        if sshd is None or keygen is None or shutil.which("ssh") is None:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("host", "client"):
            subprocess.run(
                [keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True
            )
        shutil.copy(folder / "client.pub", folder / "authorized_keys")
        port = _free_port()
        config = folder / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {folder / 'host'}",
                    f"AuthorizedKeysFile {folder / 'authorized_keys'}",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PubkeyAuthentication yes",
                    "StrictModes no",
                    "UsePAM no",
                    "PermitRootLogin yes",
                    f"PidFile {folder / 'sshd.pid'}",
                    "",
                ]
            )
        )
        Path("/run/sshd").mkdir(exist_ok=True) if os.geteuid() == 0 else None
        proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL)
        for _ in range(50):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if proc.poll() is not None:
                    return None
                time.sleep(0.1)
        else:
            proc.kill()
            return None
        # Control sockets have a short path limit: a short folder under /tmp.
        control_dir = Path(tempfile.mkdtemp(prefix="kbssh", dir="/tmp"))
        return cls(folder, port, folder / "client", proc, control_dir)

    @property
    def user(self) -> str:
        import getpass

        return getpass.getuser()

    def ssh_args(self) -> list[str]:
        return [
            "-p",
            str(self.port),
            "-i",
            str(self.client_key),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "LogLevel=ERROR",
        ]

    def stop(self) -> None:
        for sock in self.control_dir.glob("*"):
            subprocess.run(
                ["ssh", "-O", "exit", "-o", f"ControlPath={sock}", "x"], capture_output=True
            )
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.control_dir, ignore_errors=True)
