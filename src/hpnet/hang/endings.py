"""What the processes a launcher says ended say together (:mod:`hpnet.hang.exits` reads
them): the one that failed first, the rest by how they ended, what the launchers' lines
say besides (two agents on one host, the workers a launcher stopped), and the verdict
with them."""

from __future__ import annotations

import dataclasses
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.hang.model import ranks_text

if TYPE_CHECKING:
    from hpnet.hang.exits import Exit
    from hpnet.hang.model import HangReport

__all__ = ["ended", "exits_summary", "with_exits"]

#: signals that end a process whatever its code was doing: a first failure by one of
#: these is the cause the other ranks' errors follow from (SIGABRT is PyTorch's watchdog
#: after a timeout, SIGTERM the launcher's stop: those follow, they do not lead)
_DEATHS = frozenset({signal.SIGKILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE})


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def ended(status: int) -> str:
    """How a status ended a process, and what that usually means."""
    if status > 0:
        return f"exited with code {status}: the process's own error (its traceback says which)"
    number = -status
    name = _signal_name(number)
    meaning = {
        signal.SIGABRT: "an abort: PyTorch's NCCL watchdog aborts its process when a "
        "collective timed out or NCCL failed (that rank's 'Watchdog caught' or NCCL error "
        "line says which), as a failed C++ assertion does",
        signal.SIGKILL: "killed: by the kernel's OOM killer (`dmesg | grep -i -e oom -e "
        "killed` on its node) or by the launcher or scheduler (a time limit, a cancelled job)",
        signal.SIGTERM: "stopped by the launcher or scheduler: launchers end the other "
        "processes once one failed, so this is seldom the first failure",
        signal.SIGSEGV: "a crash in native code (the driver, NCCL, a compiled extension): "
        "its stderr and a core dump say where",
        signal.SIGBUS: "a bus error: most often /dev/shm out of room (a container's 64 MB "
        "default) under NCCL's or the data loader's shared memory",
        signal.SIGINT: "interrupted (Ctrl-C, or a launcher passing it on)",
    }.get(number, "")  # type: ignore[call-overload]
    return f"ended by {name} (exit code {status})" + (f": {meaning}" if meaning else "")


def _how(exit: Exit) -> str:
    """How a process ended: its status's meaning, or what its line says ended it."""
    if exit.cause:
        return f"ended by {_signal_name(-exit.status)} (exit code {exit.status}): {exit.cause}"
    return ended(exit.status)


def _first(exits: Sequence[Exit]) -> tuple[Exit | None, list[Exit]]:
    """The process that failed first, or None, and where torchrun's records tie in
    their earliest second, the processes that do (none of them proven first). Times
    order the records only where a Root Cause record is in the lines: without it, an
    earlier failure may be in the records not shown."""
    timed = [e for e in exits if e.time and not e.stopped]
    if any(e.first for e in timed):  # a Root Cause record is in the lines: its times order
        # SIGTERM is the agent's stop of the workers left after a failure: it follows one
        ended = [e for e in timed if e.status != -signal.SIGTERM] or timed
        earliest = min(str(e.time) for e in ended)
        at = [e for e in ended if e.time == earliest]
        return (at[0], []) if len(at) == 1 else (None, at)
    return next((e for e in exits if e.first), None), []


def _who(exits: Sequence[Exit]) -> str:
    ranks = sorted({e.rank for e in exits if e.rank is not None})
    if len(ranks) == len(exits):
        return ranks_text(ranks)
    if len(exits) > 1 and all(e.who() == "a process" for e in exits):
        return f"{len(exits)} processes"
    more = f" and {len(exits) - 4} more" if len(exits) > 4 else ""
    return ", ".join(e.who() for e in exits[:4]) + more


def exits_summary(exits: Sequence[Exit]) -> str:
    """The processes that ended: the first the launcher saw fail, then the rest by how
    they ended, and what the launchers' lines say besides."""
    first, tied = _first(exits)
    said = []
    if first is not None and first.cancelled:
        said.append(
            f"{first.reporter} cancelled {first.name}{f' on {first.host}' if first.host else ''} "
            f"{first.cancelled} ({first.where}): it sends the processes SIGTERM, then SIGKILL "
            "once its KillWait has passed; the job was stopped, no line says a process failed"
        )
    elif first is not None:
        at = f" at {first.time}" if first.time else ""
        said.append(
            f"{first.who()} failed first as {first.reporter} saw it{at}, "
            f"{_how(first)} ({first.where})"
        )
    elif tied:
        how = ended(tied[0].status) if len({e.status for e in tied}) == 1 else "each its own way"
        said.append(
            f"{_who(tied)} failed in the same second ({tied[0].time}) as torchrun recorded "
            f"them, {how} ({tied[0].where}): torchrun's Root Cause is one of them, not one "
            "proven first (each process's own stderr, or TORCHELASTIC_ERROR_FILE's "
            "tracebacks, say which)"
        )
    rest: dict[tuple[int, str | None], list[Exit]] = {}
    stops: dict[tuple[str, int], list[Exit]] = {}
    for other in exits:
        if other.stopped:
            stops.setdefault((other.reporter, other.status), []).append(other)
        elif other is not first and other not in tied:
            rest.setdefault((other.status, other.cause), []).append(other)
    for (status, cause), same in rest.items():
        alike = first is not None and (status, cause) == (first.status, first.cause)
        how = "the same way" if alike else _how(same[0])
        untimed = (first or tied) and any(e.reporter == "torchrun" and not e.time for e in same)
        said.append(
            f"{_who(same)}{' also' if first is not None else ''} {how} ({same[0].where})"
            + (" (a record whose time is not in the lines)" if untimed else "")
        )
    for (reporter, status), sent in stops.items():
        pids = [str(e.pid) for e in sent if e.pid is not None]
        shown = ", ".join(pids[:6]) + (f" and {len(pids) - 6} more" if len(pids) > 6 else "")
        said.append(
            f"{reporter}{f' on {sent[0].host}' if sent[0].host else ''} sent "
            f"{_signal_name(-status)} to pid(s) {shown} ({sent[0].where}): {_STOPS[reporter]}"
        )
    if first is None and not tied and any(e.reporter == "torchrun" for e in exits):
        said.append("torchrun's first observed failure (its Root Cause record) is not in the lines")
    return "; ".join(said + _besides(exits, first))


#: what a launcher's stop of its workers says
_STOPS = {
    "torchrun's agent": "it stops the workers still alive once one ended (or once it was "
    "stopped itself)",
    "DeepSpeed's launcher": "it kills every worker of its node, the failed one too, once one "
    "failed (or once it was stopped itself); its line '... exits with return code = N' says "
    "how the failed one ended",
}


def _besides(exits: Sequence[Exit], first: Exit | None) -> list[str]:
    """What the launchers' lines say beyond each process: two agents on one host; the
    worker that ended before torchrun's agent stopped the others, and DeepSpeed's."""
    said = []
    agents: dict[tuple[str, int], set[int]] = {}
    for e in exits:
        if e.reporter == "torchrun" and e.host and e.local_rank is not None and e.rank is not None:
            agents.setdefault((e.host, e.local_rank), set()).add(e.rank)
    for (host, local), ranks in agents.items():
        if len(ranks) > 1:
            said.append(
                f"{ranks_text(sorted(ranks))} are each local rank {local} on {host}: "
                f"{len(ranks)} torchrun agents ran on that host (a node's launcher started "
                "more than once there, as srun does without --ntasks-per-node=1, or hosts "
                "that share one name), and their workers share its GPUs"
            )
            break
    stops = [e for e in exits if e.stopped and e.reporter == "torchrun's agent"]
    if stops and first is None and all(e.stopped for e in exits):
        pids = sorted(e.pid for e in stops if e.pid is not None)
        gaps = [p for p in range(pids[0], pids[-1] + 1) if p not in pids] if pids else []
        said.append(
            "torchrun's agent signals only the workers still alive: the one that ended first "
            "is not among them"
            + (f" (pid {gaps[0]} is missing from their run of pids)" if len(gaps) == 1 else "")
            + "; its line 'failed (exitcode: N) local_rank: L (pid: P)' says which and how"
        )
    if any(e.reporter == "DeepSpeed's launcher" and e.first for e in exits):
        said.append(
            "DeepSpeed's launcher prints the command it spawned last beside the status, so "
            "the --local_rank in that line need not be the failed worker's"
        )
    return said


def with_exits(report: HangReport, exits: Sequence[Exit]) -> HangReport:
    """The verdict with the processes that ended: its headline where nothing else spoke
    (the job's processes ended), else after it (the ranks that wait may wait for
    one that is gone)."""
    if not exits:
        return report
    summary = exits_summary(exits)
    first, _ = _first(exits)
    if report.status == "no-hang" and not report.dumps and not report.stacks:
        status, headline = "unknown", f"processes of the job ended: {summary}"
    elif (first is not None and -first.status in _DEATHS) or any(e.cause for e in exits):
        # the first failure the launcher saw is a death no rank's own code chose (not
        # the watchdog's abort, not the launcher's stop), or a GPU's hardware exception
        # ended processes: the others' lines follow it
        status = report.status
        headline = f"processes of the job ended: {summary}; the ranks' own lines: {report.headline}"
    else:
        status, headline = report.status, f"{report.headline}; processes ended: {summary}"
    return dataclasses.replace(report, status=status, headline=headline, exits=tuple(exits))
