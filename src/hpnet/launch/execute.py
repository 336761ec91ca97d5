"""Run a :class:`~hpnet.launch.plan.LaunchPlan`: write its files, start its commands
(the engine's launcher on each node, locally or over ssh) as one job, echo their
output with a node prefix, and say which node, rank and host failed first.

The job's fate is :func:`hpnet.localrun.run_ranks`'s: the first command that exits
non-zero ends the others (SIGTERM to each one's session, then SIGKILL), as do a
timeout and Ctrl-C; the engines pass the signal on to their ranks (torchrun's agent
and mpirun end their workers when they are terminated).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from typing import TextIO

from hpnet.errors import InputError
from hpnet.launch.plan import LaunchPlan

__all__ = ["LaunchOutcome", "execute", "explain_failure", "write_files"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LaunchOutcome:
    exit_code: int  # 0, the failing command's code, 124 on timeout, 130 interrupted
    failed: str | None  # the command that failed first ("node 1 (gpu2)", "mpirun")
    detail: str | None  # what its output says about the failing rank
    log_dir: str


def write_files(plan: LaunchPlan) -> None:
    """Write the plan's generated files (hostfile, batch script, manifest, env file)."""
    for file in plan.files:
        try:
            directory = os.path.dirname(file.path)
            if directory:
                os.makedirs(directory, exist_ok=True)
            with open(file.path, "w") as handle:
                handle.write(file.content)
            os.chmod(file.path, file.mode)
        except OSError as exc:
            raise InputError(
                exc.strerror or str(exc),
                code="unwritable",
                where=file.path,
                fix="choose a writable --output-dir",
            ) from None


class _Echo:
    """Copy new lines of each command's log to the terminal, prefixed by its label
    when there are several."""

    def __init__(self, paths: list[tuple[str, str]], stream: TextIO) -> None:
        self.paths = paths
        self.offsets = [0] * len(paths)
        self.stream = stream
        self.prefix = len(paths) > 1

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
    from hpnet.localrun import RankSpec, run_ranks  # noqa: PLC0415

    write_files(plan)
    directory = log_dir or tempfile.mkdtemp(prefix="hpnet-launch-")
    os.makedirs(directory, exist_ok=True)
    # what this machine's ranks inherit: the caller's environment without the secrets
    # the plan withholds (a local rank must not see what a remote one cannot); ssh
    # itself keeps everything (its agent socket, its config), the remote command gets
    # only what the plan names
    withheld = set(plan.propagation.withheld)
    base = {k: v for k, v in environ.items() if k not in withheld}
    specs = []
    for index, command in enumerate(plan.commands):
        env = dict(environ) if command.remote else {**base, **command.env}
        specs.append(
            RankSpec(
                rank=index,
                argv=command.local_argv(),
                env=env,
                log_path=os.path.join(directory, f"{_slug(command.label)}.log"),
            )
        )
    echo = _Echo([(c.label, s.log_path) for c, s in zip(plan.commands, specs, strict=True)],
                 stream or sys.stdout)  # fmt: skip
    try:
        results = run_ranks(specs, timeout_seconds=timeout_seconds, on_tick=echo)
    finally:
        echo(final=True)
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
            import shutil  # noqa: PLC0415

            shutil.rmtree(directory, ignore_errors=True)
        return LaunchOutcome(exit_code=0, failed=None, detail=None, log_dir=directory)
    label = plan.commands[failed.rank].label
    code = failed.returncode if failed.returncode and failed.returncode > 0 else 1
    return LaunchOutcome(
        exit_code=code,
        failed=label,
        detail=explain_failure(_read(failed.log_path)),
        log_dir=directory,
    )


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


def explain_failure(text: str) -> str | None:
    """The failing rank as the engine reported it (torchrun's "Root Cause" block,
    Open MPI's "mpirun noticed ..." / "The first process to do so was" lines).

    >>> explain_failure("Root Cause (first observed failure):\\n[0]:\\n  host      : vm\\n"
    ...                 "  rank      : 1 (local_rank: 1)\\n  exitcode  : -9 (pid: 77)\\n")
    'rank 1 (local rank 1) on host vm exited with -9 (killed by signal 9)'
    """
    found = _TORCHRUN_ROOT.search(text)
    if found:
        code = int(found.group("code"))
        why = f" (killed by signal {-code})" if code < 0 else ""
        return (
            f"rank {found.group('rank')} (local rank {found.group('local')}) on host "
            f"{found.group('host')} exited with {code}{why}"
        )
    signal = _MPI_SIGNAL.search(text)
    if signal:
        name = f" ({signal.group('name')})" if signal.group("name") else ""
        return (
            f"rank {signal.group('rank')} on node {signal.group('host')} was killed by signal "
            f"{signal.group('signal')}{name}"
        )
    first = _MPI_FIRST.search(text)
    if first:
        return f"rank {first.group('rank')} exited with {first.group('code')}"
    return None
