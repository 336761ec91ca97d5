"""Run a :class:`~hpnet.launch.plan.LaunchPlan`: write its files, start its commands
(the engine's launcher on each node, locally or over ssh) as one job, echo their
output with a node prefix, and say which node, rank and host failed first.

The job's fate is :func:`hpnet.localrun.run_ranks`'s: the first command that exits
non-zero ends the others (SIGTERM to each one's session, then SIGKILL), as do a
timeout and Ctrl-C; the engines pass the signal on to their ranks (torchrun's agent
and mpirun end their workers when they are terminated).

Files are written to a new file beside the target (created exclusively, mode set on
the open descriptor) and renamed over it (:mod:`hpnet.outputfile`): a symlink planted
at the target is replaced, never followed. A remote node's secrets go to ssh's stdin
from a file only the user can read (0600, created exclusively in a 0700 directory,
removed as soon as ssh has it open): never through a command line. A program that is
not on PATH is an error that names it before anything starts; torchrun is also looked
for beside this Python, then run as ``python -m torch.distributed.run``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shutil
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from hpnet.errors import InputError
from hpnet.launch.plan import GeneratedFile, LaunchPlan
from hpnet.launch.verdict import NUMPY_WARNING, VERDICT_ENV, read_verdict
from hpnet.outputfile import write_file
from hpnet.secrets import is_secret

if TYPE_CHECKING:
    from hpnet.localrun import RankResult

__all__ = ["EngineFailure", "LaunchOutcome", "engine_failure", "execute", "write_files"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LaunchOutcome:
    #: 0; the failing rank's code (128 + N for signal N) as its engine reported it, else
    #: the failing command's; 124 on timeout
    exit_code: int
    #: the command that failed first and how ("node 1 on gpu2 exited with 1")
    failed: str | None
    detail: str | None  # what its output says about the failing rank
    log_dir: str


def write_files(plan: LaunchPlan) -> None:
    """Write the plan's generated files (hostfile, batch script, manifest, env file)."""
    for file in plan.files:
        try:
            _write_file(file)
        except OSError as exc:
            raise InputError(
                exc.strerror or str(exc),
                code="unwritable",
                where=file.path,
                fix="choose a writable --output-dir",
            ) from None


def _write_file(file: GeneratedFile) -> None:
    """``file`` at its path with its mode (:func:`hpnet.outputfile.write_file`): a
    symlink at the path is replaced, never followed."""
    os.makedirs(os.path.dirname(file.path) or ".", exist_ok=True)
    write_file(file.path, file.content, mode=file.mode)


#: runs on this machine in front of ssh: its stdin becomes the secrets file, which is
#: removed at once (ssh keeps it open); nothing of the user's is in this script
STDIN_FEED = 'exec <"$1" && rm -f -- "$1" && shift && exec "$@"'


def _write_secrets(directory: str, index: int, text: str) -> str:
    """The secrets of one remote command, in a file only the user can read."""
    path = os.path.join(directory, f"node{index}.stdin")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def _program(argv: tuple[str, ...], env: Mapping[str, str], label: str) -> tuple[str, ...]:
    """``argv`` with its program found on ``env``'s PATH, or InputError naming it.
    torchrun is also looked for beside this Python (an unactivated venv), then run as
    ``python -m torch.distributed.run`` (what the torchrun script runs)."""
    path = env.get("PATH", os.defpath)
    if shutil.which(argv[0], path=path):
        return argv
    if argv[0] == "torchrun":
        beside = os.path.join(os.path.dirname(sys.executable), "torchrun")
        if os.access(beside, os.X_OK) and os.path.isfile(beside):
            return (beside, *argv[1:])
        if importlib.util.find_spec("torch") is not None:
            return (sys.executable, "-m", "torch.distributed.run", *argv[1:])
        fix = "install torch (pip install torch) here, or put torchrun on PATH"
    elif argv[0] in _FIXES:
        fix = _FIXES[argv[0]]
    elif os.sep in argv[0]:
        fix = "give the path of an executable file (or a program on PATH)"
    else:
        fix = f"install {argv[0]}, give its full path, or add its directory to PATH"
    problem = "is not an executable file" if os.sep in argv[0] else "is not on PATH here"
    raise InputError(f"{argv[0]} {problem} ({label})", code="not-found", where=argv[0], fix=fix)


_FIXES = {
    "sbatch": "run hpnet launch on a Slurm login node, or --dry-run to get the batch script",
    "srun": "run hpnet launch inside the Slurm allocation, on a node that has srun",
    "mpirun": "install Open MPI (mpirun) on this node, or use --engine torchrun",
    "ssh": "install an ssh client (openssh-client) to reach the other nodes",
}


class _Echo:
    """Copy new lines of each command's log to the terminal, prefixed by its label
    when there are several."""

    def __init__(self, paths: list[tuple[str, str]], stream: TextIO) -> None:
        self.paths = paths
        self.offsets = [0] * len(paths)
        self.stream = stream
        self.prefix = len(paths) > 1
        #: the exit code a rank's verdict line carried (launch/verdict.py), if one did
        self.verdict: int | None = None

    def __call__(self, _elapsed: float = 0.0, *, final: bool = False) -> None:
        for index, (label, path) in enumerate(self.paths):
            try:
                with open(path, "rb") as handle:
                    handle.seek(self.offsets[index])
                    data = handle.read()
            except OSError:
                continue
            cut = len(data) if final else data.rfind(b"\n") + 1
            if cut <= 0:
                continue
            self.offsets[index] += cut
            text = data[:cut].decode("utf-8", "replace")
            for line in text.splitlines():
                code = read_verdict(line)
                if code is not None:  # the job's verdict: an exit code, not output
                    self.verdict = max(code, self.verdict or 0)
                    continue
                self.stream.write(f"[{label}] {line}\n" if self.prefix else f"{line}\n")
        self.stream.flush()


def execute(
    plan: LaunchPlan,
    *,
    environ: Mapping[str, str],
    timeout_seconds: float,
    log_dir: str | None = None,
    stream: TextIO | None = None,
) -> LaunchOutcome:
    from hpnet.localrun import RankSpec, describe_exit, run_ranks  # noqa: PLC0415

    # what this machine's ranks inherit: the caller's environment without the secrets
    # the plan withholds or that are secrets by name or value (a local rank must not
    # see what a remote one cannot); ssh itself keeps everything (its agent socket,
    # its config), the remote command gets only what the plan names
    withheld = set(plan.propagation.withheld)
    if plan.engine == "torchrun" or (plan.engine == "slurm" and plan.context == "slurm"):
        # output hpnet relays: a job's verdict comes back as a line (launch/verdict.py),
        # and torch's "Failed to initialize NumPy" warning (torchrun imports torch before
        # hpnet can filter it) is not printed by every launcher
        quiet = ",".join(filter(None, [environ.get("PYTHONWARNINGS"), NUMPY_WARNING]))
        extra = {VERDICT_ENV: "1", "PYTHONWARNINGS": quiet}
        plan = dataclasses.replace(
            plan,
            commands=tuple(dataclasses.replace(c, env={**c.env, **extra}) for c in plan.commands),
        )
    base = {k: v for k, v in environ.items() if k not in withheld and not is_secret(k, v)}
    envs = [dict(environ) if c.remote else {**base, **c.env} for c in plan.commands]
    argvs = [
        _program(c.local_argv(), env, c.label) for c, env in zip(plan.commands, envs, strict=True)
    ]
    write_files(plan)
    directory = log_dir or tempfile.mkdtemp(prefix="hpnet-launch-")
    os.makedirs(directory, exist_ok=True)
    secrets_dir = None
    specs = []
    try:
        for index, (command, env, found) in enumerate(zip(plan.commands, envs, argvs, strict=True)):
            argv = found
            if command.remote_stdin():
                secrets_dir = secrets_dir or tempfile.mkdtemp(prefix="hpnet-secrets-")
                feed = _write_secrets(secrets_dir, index, command.remote_stdin())
                argv = ("/bin/sh", "-c", STDIN_FEED, "hpnet-stdin", feed, *found)
            specs.append(
                RankSpec(
                    rank=index,
                    argv=argv,
                    env=env,
                    log_path=os.path.join(directory, f"{_slug(command.label)}.log"),
                )
            )
        echo = _Echo([(c.label, s.log_path) for c, s in zip(plan.commands, specs, strict=True)],
                     stream or sys.stdout)  # fmt: skip
        try:
            results = run_ranks(specs, timeout_seconds=timeout_seconds, on_tick=echo)
        except OSError as exc:  # a program that vanished or cannot run (permissions)
            raise InputError(
                f"cannot start the job: {exc.strerror or exc}",
                code="not-found",
                where=str(exc.filename or plan.commands[0].argv[0]),
                fix="check that the engine's program is installed and executable",
            ) from None
        finally:
            echo(final=True)
    finally:
        if secrets_dir is not None:
            shutil.rmtree(secrets_dir, ignore_errors=True)
    failed = next(
        (r for r in results if r.returncode not in (0, None) and r.ended_by is None), None
    )
    if failed is None:
        timed_out = any(r.ended_by == "timeout" for r in results)
        if timed_out:
            return LaunchOutcome(
                exit_code=124, failed=None, detail=f"ran past --timeout {timeout_seconds:g} s",
                log_dir=directory,
            )  # fmt: skip
        if log_dir is None:
            shutil.rmtree(directory, ignore_errors=True)
        code = echo.verdict or 0  # rank 0's verdict (hpnet check --all, hpnet isolate)
        return LaunchOutcome(exit_code=code, failed=None, detail=None, log_dir=directory)
    _check_port(plan, results)
    label = plan.commands[failed.rank].label
    reported = engine_failure(_read(failed.log_path))
    # the rank's own code, as the engine reported it (torchrun and mpirun exit 1 for
    # any failing rank); else the command's: 128 + N when signal N killed it
    code = reported.exit_code if reported else _shell_code(failed.returncode)
    return LaunchOutcome(
        exit_code=code,
        failed=f"{label} {describe_exit(failed)}",
        detail=reported.detail if reported else None,
        log_dir=directory,
    )


def _check_port(plan: LaunchPlan, results: Sequence[RankResult]) -> None:
    """A failed command whose output says another process holds the rendezvous port:
    the error names the port and how to choose another (torchrun and a torch rank
    say only EADDRINUSE, and exit 1); no rank met another."""
    from hpnet.launch.rendezvous import port_taken, port_taken_error  # noqa: PLC0415

    if plan.master_port is None:
        return
    for result in results:
        if result.returncode in (0, None) or result.ended_by is not None:
            continue
        if port_taken(_read(result.log_path), plan.master_port):
            raise port_taken_error(
                plan.master_port,
                node=plan.commands[result.rank].label,
                log_path=result.log_path,
                chosen=plan.port_chosen,
            )


def _shell_code(returncode: int | None) -> int:
    """A process's status as a shell reports it: 128 + N for signal N."""
    if returncode is None or returncode == 0:
        return 1
    return 128 - returncode if returncode < 0 else returncode


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "command"


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 65536))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


_TORCHRUN_ROOT = re.compile(
    r"Root Cause.*?host\s*:\s*(?P<host>\S+).*?rank\s*:\s*(?P<rank>\d+)\s*\(local_rank:\s*"
    r"(?P<local>\d+)\).*?exitcode\s*:\s*(?P<code>-?\d+)",
    re.DOTALL,
)
_MPI_SIGNAL = re.compile(
    r"process rank (?P<rank>\d+) with PID \d+ on node (?P<host>\S+) exited on signal "
    r"(?P<signal>\d+)(?: \((?P<name>[^)]*)\))?"
)
_MPI_FIRST = re.compile(
    r"The first process to do so was:\s*Process name:\s*\[\[\d+,\d+\],(?P<rank>\d+)\]\s*"
    r"Exit code:\s*(?P<code>-?\d+)"
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class EngineFailure:
    """The failing rank as the engine's output reports it."""

    detail: str  # "rank 1 (local rank 1) on host vm was killed by SIGKILL"
    exit_code: int  # the rank's status, 128 + N for signal N (what a shell reports)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def engine_failure(text: str) -> EngineFailure | None:
    """The failing rank as the engine reported it: torchrun's "Root Cause" block
    (torch ``distributed/elastic/multiprocessing/errors/__init__.py``,
    ``_FAILURE_FORMAT_TEMPLATE``: ``exitcode  : -9`` for a signal), Open MPI's
    "mpirun noticed that process rank N ... exited on signal S" or "The first process
    to do so was ... Exit code: C" (``help-mpirun.txt``).

    >>> engine_failure("Root Cause (first observed failure):\\n[0]:\\n  host      : vm\\n"
    ...                "  rank      : 1 (local_rank: 1)\\n  exitcode  : -9 (pid: 77)\\n")
    EngineFailure(detail='rank 1 (local rank 1) on host vm was killed by SIGKILL', exit_code=137)
    """
    found = _TORCHRUN_ROOT.search(text)
    if found:
        code = int(found.group("code"))
        how = f"was killed by {_signal_name(-code)}" if code < 0 else f"exited with {code}"
        return EngineFailure(
            detail=f"rank {found.group('rank')} (local rank {found.group('local')}) on host "
            f"{found.group('host')} {how}",
            exit_code=_shell_code(code),
        )
    killed = _MPI_SIGNAL.search(text)
    if killed:
        number = int(killed.group("signal"))
        return EngineFailure(
            detail=f"rank {killed.group('rank')} on node {killed.group('host')} was killed by "
            f"{_signal_name(number)}",
            exit_code=128 + number,
        )
    first = _MPI_FIRST.search(text)
    if first:
        code = int(first.group("code"))
        return EngineFailure(
            detail=f"rank {first.group('rank')} exited with {code}", exit_code=_shell_code(code)
        )
    return None
