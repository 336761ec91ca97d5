"""A rank's worker: the child process in which a rank of ``hpnet check --all`` or
``hpnet isolate`` does its part of the job (the part that imports torch), started by
the rank's hpnet and waited for with a deadline.

The pact between the two: the worker gets the rank's environment without its secrets
(:func:`hpnet.localrun.inheritable_env`), the launcher's rank variables, NCCL's debug
log into a file of the job's folder and ``HPNET_PARENT_PID`` (:func:`worker_env`); it
calls :func:`die_with_parent` first, so that it ends when its hpnet does, however that
ends. A worker says an hpnet error as ``error[code]: ...``
(:meth:`hpnet.errors.HpnetError.render`) on its standard error; that line, else its
last, is the cause its hpnet reports (:meth:`WorkerExit.failure`).

:func:`run_worker` waits for it as ``hpnet isolate`` does: its standard error read as
it comes (rank 0's progress echoed, the last lines kept), killed at the deadline, and
on SIGTERM / SIGHUP (the launcher ending the job) killed on the way out. ``hpnet check
--all`` still starts its worker with ``subprocess.run`` (its tests hold it there).
"""

from __future__ import annotations

import collections
import ctypes
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence

__all__ = ["PARENT", "WorkerExit", "die_with_parent", "run_worker", "worker_env"]

#: the variable that names the worker's hpnet (:func:`die_with_parent`)
PARENT = "HPNET_PARENT_PID"
TAIL_LINES = 40
#: how :meth:`hpnet.errors.HpnetError.render` starts a line: the worker's own error
ERROR_PREFIX = "error["
CAUSE_CHARS = 400
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def worker_env(
    environ: Mapping[str, str], ranks: Mapping[str, str], nccl_log: str
) -> dict[str, str]:
    """The worker's environment: the rank's own without its secrets, the launcher's rank
    variables, NCCL's INIT, NET and ENV lines into ``nccl_log`` (NCCL fills in ``%h``
    and ``%p``: src/debug.cc), which the command reads after, and this process as the
    worker's parent (:func:`die_with_parent`).

    >>> env = worker_env({"PATH": "/bin", "HF_TOKEN": "x"}, {"RANK": "1"}, "/job/nccl.rank1.log")
    >>> sorted(env)
    ['HPNET_PARENT_PID', 'NCCL_DEBUG', 'NCCL_DEBUG_FILE', 'NCCL_DEBUG_SUBSYS', 'PATH', 'RANK']
    """
    from hpnet.localrun import inheritable_env  # noqa: PLC0415

    return {
        **inheritable_env(environ),
        **ranks,
        "NCCL_DEBUG": "INFO",
        "NCCL_DEBUG_SUBSYS": "INIT,NET,ENV",
        "NCCL_DEBUG_FILE": nccl_log,
        PARENT: str(os.getpid()),
    }


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class WorkerExit:
    """How a rank's worker ended, and the last lines it wrote on its standard error."""

    part: str  # what the worker did, in words: "rounds", "cluster benchmark"
    returncode: int
    tail: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def cause(self) -> str:
        """Its own error line (``error[code]: ...``), else its last line that says
        anything (not the launcher's or torch's blank lines), cut to
        :data:`CAUSE_CHARS`.

        >>> said = ("error[bad-baseline]: no", "Warning: x")
        >>> WorkerExit(part="rounds", returncode=2, tail=said).cause
        'error[bad-baseline]: no'
        >>> said = ("Traceback ...", "RuntimeError: boom", "")
        >>> WorkerExit(part="rounds", returncode=1, tail=said).cause
        'RuntimeError: boom'
        """
        said = [line for line in self.tail if line.startswith(ERROR_PREFIX)]
        lines = said or [line for line in self.tail if line.strip()]
        return lines[-1][:CAUSE_CHARS] if lines else ""

    def failure(self, rank: str) -> str:
        """The error's text, for the worker of rank ``rank``.

        >>> said = ("the rounds did not end within 1800 s",)
        >>> WorkerExit(part="rounds", returncode=-9, tail=said).failure("3")
        "rank 3's rounds was killed by SIGKILL: the rounds did not end within 1800 s"
        """
        from hpnet.localrun import RankResult, describe_exit  # noqa: PLC0415

        how = describe_exit(RankResult(rank=int(rank), returncode=self.returncode, log_path=""))
        return f"rank {rank}'s {self.part} {how}: {self.cause}"


def run_worker(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    part: str,
    timeout_seconds: float,
    echo: bool,
) -> WorkerExit:
    """Run a rank's worker (``argv``, ``env``: :func:`worker_env`) until it exits, or
    kill it after ``timeout_seconds`` (its tail then says that ``part`` did not end in
    time). Its standard error is kept (the last :data:`TAIL_LINES` lines) and with
    ``echo`` copied to ours (rank 0's progress); its standard output is dropped.
    SIGTERM / SIGHUP raise :class:`~hpnet.errors.Terminated` here
    (:class:`hpnet.localrun.StopSignals`), and the worker is killed on the way out."""
    from hpnet.localrun import StopSignals  # noqa: PLC0415

    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    proc = subprocess.Popen(
        list(argv), env=dict(env), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, errors="replace",
    )  # fmt: skip
    assert proc.stderr is not None  # noqa: S101 - stderr=PIPE
    deadline = time.monotonic() + timeout_seconds
    timer = threading.Timer(timeout_seconds, proc.kill)
    timer.start()
    try:
        with StopSignals():
            for line in proc.stderr:
                tail.append(line.rstrip("\n"))
                if echo:
                    sys.stderr.write(line)
                    sys.stderr.flush()
            returncode = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if time.monotonic() >= deadline:
        tail.append(f"the {part} did not end within {timeout_seconds:.0f} s")
    return WorkerExit(part=part, returncode=returncode, tail=tuple(tail))


def die_with_parent() -> None:
    """The worker's half of the pact: SIGTERM for this process when the hpnet that
    started it dies (prctl PR_SET_PDEATHSIG, <linux/prctl.h>), and an exit now if it
    already has: a rank its launcher killed leaves no worker behind."""
    parent = os.environ.get(PARENT)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the parent's own handling stands
        return
    if parent is not None and str(os.getppid()) != parent:
        raise SystemExit(143)
