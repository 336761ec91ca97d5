"""Processes a launcher says ended: which, how (an exit code, or the signal that ended
it) and which it saw fail first (what they say together: :mod:`hpnet.hang.endings`). A
job whose processes ended is over, whatever stalled it before; ranks that wait while a
peer ended wait for one that is gone.

Read from what the launchers print:

- torchrun (torch.distributed.elastic): ``failed (exitcode: -6) local_rank: 1 (pid:
  314) of binary: ...`` (multiprocessing/api.py: the first failure its agent saw on
  that node) and ChildFailedError's table (multiprocessing/errors: ``Failures:`` and
  ``Root Cause (first observed failure):``, each record's ``host``, ``rank : R
  (local_rank: L)`` and ``exitcode : S (pid: P)``);
- torch.multiprocessing's spawn: ``process 1 terminated with signal SIGKILL`` / ``...
  with exit code 1`` (ProcessExitedException: the index is the local rank);
- vLLM's multiprocessing executor: ``Worker VllmWorkerProcess pid 198 died, exit code:
  -6``;
- Open MPI's mpirun: ``mpirun noticed that process rank 3 with PID 4711 on node gpu1
  exited on signal 9 (Killed).`` (the first it saw);
- Slurm's srun: ``srun: error: node1: task 3: Killed`` / ``tasks 0-3: Exited with exit
  code 1`` (task ids are the job's ranks);
- DeepSpeed's per-node launcher (deepspeed/launcher/launch.py, sigkill_handler): ``Killing
  subprocess 4711`` for each of its workers once one failed, then ``[...command...] exits
  with return code = 1``: the failed worker's status, after the command it spawned *last*
  (so that line's ``--local_rank`` is not the failed worker's);
- torchrun's agent stopping the workers left (multiprocessing/api.py): ``Sending process
  4711 closing signal SIGTERM``: the one that ended first is not among them;
- a process's own report of the signal that ends it (UCX's handler: ``[host:pid :0:tid]
  Caught signal 7 (Bus error: ...)``) and the shell's of a child (``run.sh: line 3:
  4711 Killed  python x.py``, ``Segmentation fault (core dumped)``).

An exit status below zero is the signal that ended the process (Python's convention,
which torchrun and vLLM print); a status of 0 is no failure and is not kept. torchrun's
records carry the second the agent saw each failure (``time : 2023-06-03_22:45:01``,
errors/__init__.py: an int timestamp); its Root Cause is the earliest of its own workers'
failures, the lowest rank among those of the same second. Records of several agents (or
of one) are ordered by their times: a failure alone in the earliest second is the first;
several in it are none proven first.
"""

from __future__ import annotations

import dataclasses
import re
import signal
from collections.abc import Sequence
from typing import Any

from hpnet.ncclog.messages import (
    DEEPSPEED_EXITED,
    MPIRUN_SIGNAL,
    SRUN_ENDED,
    TORCHRUN_FAILED,
    VLLM_DIED,
)

__all__ = ["Exit", "mentions_exit", "read_exits"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Exit:
    """One process a launcher says ended."""

    where: str  # file:line of the line that says how it ended
    text: str  # that line, stripped
    status: int  # its exit code; below zero, the signal that ended it
    reporter: str  # the launcher that said so
    rank: int | None = None  # the job's rank, where the lines say
    local_rank: int | None = None
    pid: int | None = None
    host: str | None = None
    first: bool = False  # the launcher's first observed failure
    name: str | None = None  # what the launcher calls the process (vLLM's worker class)
    time: str | None = None  # the second torchrun's record gives (2023-06-03_22:45:01)
    stopped: bool = False  # a signal the launcher sent to stop a worker left
    #: a scheduler's cancellation of the job: when and why ("at 2025-01-10T15:27:25 due to
    #: its time limit")
    cancelled: str | None = None
    #: what ended it where the line says more than its signal (ROCm's runtime's abort on
    #: a GPU's hardware exception)
    cause: str | None = None

    def who(self) -> str:
        """``rank 3 (pid 4711 on gpu1)``, or what the lines name of the process."""
        place = ", ".join(
            x
            for x in (
                f"pid {self.pid}" if self.pid is not None else "",
                f"on {self.host}" if self.host else "",
                f"local rank {self.local_rank}"
                if self.rank is None and self.local_rank is not None
                else "",
            )
            if x
        )
        name = f"rank {self.rank}" if self.rank is not None else self.name or "a process"
        return f"{name} ({place})" if place else name


_TORCHRUN_LINE = re.compile(TORCHRUN_FAILED)
_TABLE_FAILURES = re.compile(r"^\W*Failures:\s*$")
_TABLE_ROOT = re.compile(r"Root Cause \(first observed failure\):\s*$")
#: a record's own lines (a paste may start at a record, without the table's head)
_TABLE_RECORD = re.compile(r"^\s*\[\d+\]:\s*$")
_TABLE_HOST = re.compile(r"^\s*host\s*: (\S+)\s*$")
_TABLE_RANK = re.compile(r"\brank\s*: (\d+) \(local_rank: (\d+)\)")
_TABLE_EXIT = re.compile(r"\bexitcode\s*: (-?\d+) \(pid: (\d+)\)")
_TABLE_TIME = re.compile(r"^\s*time\s*: (\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d)\s*$")
_AGENT_STOP = re.compile(r"Sending process (\d+) closing signal (SIG[A-Z0-9]+)")
_DS_KILLING = re.compile(r"sigkill_handler\] Killing subprocess (\d+)")
_DS_EXITED = re.compile(DEEPSPEED_EXITED)
#: a record flattened onto one line (a log service that joins a message's lines: "[2]:
#: time : 2024-08-23_22:22:58 host : algo-2 rank : 2 (local_rank: 2) exitcode : -6 (pid:
#: 189) error_file: ..."): its fields read from that line
_FLAT_TIME = re.compile(r"\btime\s*: (\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d)\b")
_FLAT_HOST = re.compile(r"\bhost\s*: (\S+)")
#: Slurm's step daemon ending a step or job (slurmstepd: "*** STEP 55595933.0 ON node1
#: CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT ***"; scancel's has no reason)
_SLURM_CANCELLED = re.compile(
    r"\*\*\* (STEP|JOB) (\S+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Za-z ]+?))? \*\*\*"
)
#: abseil's failure signal handler in the process itself ("*** SIGSEGV received at
#: time=1775734074 on cpu 19 ***", then "PC: @ 0x... (unknown) ncclLocalOpAppend()": the
#: function the signal stopped it in)
_ABSL = re.compile(r"\*\*\* (SIG[A-Z]+) received at time=\d+")
_ABSL_PC = re.compile(r"\bPC: @ +0x[0-9a-fA-F]+ +\S+ +([A-Za-z_][\w:<>~]*)")
#: TVM FFI's SIGSEGV handler (tvm_ffi's backtrace.cc, loaded with FlashInfer by vLLM,
#: SGLang, TensorRT-LLM): "!!!!!!! Segfault encountered !!!!!!!", then the frames,
#: innermost first, the handler's own (libc's sigaction) before the one it stopped in:
#: '  File "misc/cudawrap.cc", line 92, in ncclCuMemHostEnable()'
_TVM = re.compile(r"!!!!!!! Segfault encountered !!!!!!!")
_TVM_FRAME = re.compile(r'^\s*File "([^"]*)", line (\d+), in (.+?)\s*$')
#: CPython's faulthandler, as the fatal signal arrives (faulthandler.c's handlers:
#: "Fatal Python error: Segmentation fault", then the Python stack), and the pid Ray puts
#: before a worker's lines ("(RayWorkerVllm pid=7046) ")
_FAULTHANDLER = re.compile(
    r"Fatal Python error: (Segmentation fault|Bus error|Aborted|Illegal instruction"
    r"|Floating point exception)"
)
_RAY_PID = re.compile(r"^\((?:\w+ )?pid=(\d+)")
#: ROCm's runtime on a GPU's hardware exception, before its std::abort() (ROCR-Runtime
#: core/runtime/runtime.cc, Runtime::HwExceptionHandler: "HW Exception by GPU node-%u
#: (Agent handle: %p) reason :%s", "GPU Hang" or "ECC"): each process with that GPU open
_ROCR_HW = re.compile(
    r"HW Exception by GPU node-(\d+) \(Agent handle: 0x[0-9a-fA-F]+\) reason :(GPU Hang|ECC)"
)
#: a native backtrace's frame, UCX's form ("==== backtrace (tid: 25645) ====", innermost
#: first: " 1 0x000000000006a920 SaveProxy()  /build/nccl/src/proxy.cc:518"); a frame
#: without a source file ("???:0") names no place
_NATIVE_FRAME = re.compile(r"^\s*\d+ +0x[0-9a-fA-F]+ +([A-Za-z_][\w:<>~]*)\(\) +(\S+):(\d+)\s*$")
#: pdsh's prefix of a remote host's lines (DeepSpeed's multi-node launch): ``gpu003: ``
_PDSH = re.compile(r"^([\w.-]+): ")
#: a process's own report of the signal that ends it: UCX's handler (ucs/debug/debug.c,
#: in any process that loaded it: Open MPI, HPC-X), "[host:pid :0:tid] Caught signal 7
#: (Bus error: ...)"; and the shell's report of a child a signal ended ("run.sh: line 3:
#:  4711 Killed  python x.py", or bash's whole line "Segmentation fault (core dumped)")
_UCX = re.compile(r"\[([^\s:\]]+):(\d+) *:\d+:\d+\] Caught signal (\d+) \(")
_SHELL_SIGNALS = {
    "Segmentation fault": signal.SIGSEGV, "Bus error": signal.SIGBUS,
    "Illegal instruction": signal.SIGILL, "Floating point exception": signal.SIGFPE,
    "Aborted": signal.SIGABRT, "Killed": signal.SIGKILL,
}  # fmt: skip
_SHELL = re.compile(
    r"^\s*(?P<alone>" + "|".join(_SHELL_SIGNALS) + r")(?: \(core dumped\))?\s*$"
    r"|: line \d+: +(?P<pid>\d+) +(?P<name>" + "|".join(_SHELL_SIGNALS) + r")(?: |$)"
)
_SPAWN = re.compile(r"\bprocess (\d+) terminated with (?:signal (SIG[A-Z0-9]+)|exit code (\d+))")
_VLLM = re.compile(VLLM_DIED)
_MPIRUN = re.compile(MPIRUN_SIGNAL)
_SRUN = re.compile(SRUN_ENDED)
_SRUN_SIGNALS = {
    "Killed": signal.SIGKILL,
    "Aborted": signal.SIGABRT,
    "Terminated": signal.SIGTERM,
    "Segmentation fault": signal.SIGSEGV,
    "Bus error": signal.SIGBUS,
}
#: a list of task ids as srun prints them (``0-3,5``): at most this many are read
MAX_TASKS = 4096


def _tasks(listed: str) -> list[int]:
    out: list[int] = []
    for part in listed.split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return []
        out += range(int(low), int(high or low) + 1)[: MAX_TASKS - len(out)]
    return out


#: words one of the forms above holds: a file without any is not read line by line
_WORDS = (
    b"exit", b"terminated with", b"srun: error", b"Caught signal", b"Killed",
    b"Segmentation fault", b"Bus error", b"Aborted", b"Illegal instruction", b"Floating point",
    b"closing signal", b"Killing subprocess", b"CANCELLED AT", b"received at time=",
    b"Segfault encountered", b"HW Exception by GPU",
)  # fmt: skip


def mentions_exit(raw: bytes) -> bool:
    """Could ``raw`` hold a report of a process that ended (a cheap test first)?"""
    return any(word in raw for word in _WORDS)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def read_exits(path: str, lines: Sequence[tuple[int, str]]) -> list[Exit]:
    """Every process these numbered lines say ended, in input order (one per process:
    a table that repeats a line's failure adds its rank and host to it); where none is,
    the workers a launcher sent a signal to stop them."""
    found: list[Exit] = []
    #: the first frame of a native backtrace no crash line has taken yet
    frames: list[tuple[str, str, str]] = []
    section = ""  # torchrun's table: "failures" or "root"
    record: dict[str, object] = {}
    for number, line in lines:
        where = f"{path}:{number}"
        text = line.strip()
        if _TABLE_FAILURES.search(line):
            section, record = "failures", {}
        elif section and _TABLE_ROOT.search(line):
            section, record = "root", {}
        elif _TABLE_RECORD.search(line):
            section, record = section or "failures", {}
        # a record's lines (also where a paste starts inside one, before any section)
        elif when := _TABLE_TIME.search(line):
            record["time"] = when.group(1)
        elif host := _TABLE_HOST.search(line):
            record["host"] = host.group(1)
        elif ranked := _TABLE_RANK.search(line):
            record["rank"], record["local_rank"] = int(ranked.group(1)), int(ranked.group(2))
            if exited := _TABLE_EXIT.search(line):  # a record flattened onto one line
                when, host = _FLAT_TIME.search(line), _FLAT_HOST.search(line)
                record.update(time=when and when.group(1), host=host and host.group(1))
                found.append(_record_exit(where, text, exited, record, first=section == "root"))
                record = {}
        elif exited := _TABLE_EXIT.search(line):
            found.append(_record_exit(where, text, exited, record, first=section == "root"))
            record = {}
        elif not _frame(line, found, frames):
            ended = [Exit(where=where, text=text, **fields) for fields in _line_exits(line)]
            if ended and frames and ended[0].reporter == _FAULTHANDLER_NAME:
                ended[0] = _in_frame(ended[0], *frames[0])
            frames = [] if ended else frames
            found += ended
    if any(e.reporter == "torchrun" for e in found):
        # srun started torchrun's agents, a task each: its task ids are agents, not ranks
        found = [
            dataclasses.replace(e, rank=None, name=f"srun's task {e.rank} (a torchrun agent)")
            if e.reporter == "Slurm" and e.rank is not None
            else e
            for e in found
        ]
    # a launcher's stop of its workers is no ending: kept only where no line says one ended
    ended = [e for e in found if e.status != 0 and not e.stopped]
    return _merged(ended or [e for e in found if e.stopped])


def _frame(line: str, found: list[Exit], frames: list[tuple[str, str, str]]) -> bool:
    """Is ``line`` a frame of a crash report (TVM FFI's, a native backtrace, abseil's PC
    line)? It names where the signal stopped the crash it belongs to, in ``found``; a
    native frame before any crash line waits in ``frames`` for faulthandler's line."""
    if (frame := _TVM_FRAME.match(line)) and found and found[-1].reporter == _TVM_NAME:
        found[-1] = _in_frame(found[-1], *frame.groups())
        return True
    if (native := _NATIVE_FRAME.match(line)) and "???" not in native.group(2):
        # UCX prints its frames after its "Caught signal" line, faulthandler its line
        # after them: a frame names the crash before it, or else the next one
        function, where, at = native.groups()
        if found and found[-1].reporter in _NATIVE_REPORTERS:
            found[-1] = _in_frame(found[-1], where, at, function)
        if not frames:
            frames.append((where, at, function))
        return True
    if (pc := _ABSL_PC.search(line)) and found and found[-1].reporter == "abseil's handler":
        # the function the signal stopped it in (unknown: no symbol)
        if pc.group(1) != "unknown" and found[-1].name is None:
            found[-1] = dataclasses.replace(found[-1], name=f"a process (in {pc.group(1)})")
        return True
    return False


def _record_exit(
    where: str, text: str, exited: re.Match[str], record: dict[str, object], *, first: bool
) -> Exit:
    """The process a record of torchrun's table says ended, at its ``exitcode`` line."""
    return Exit(
        where=where,
        text=text,
        status=int(exited.group(1)),
        reporter="torchrun",
        rank=_int(record.get("rank")),
        local_rank=_int(record.get("local_rank")),
        pid=int(exited.group(2)),
        host=_str(record.get("host")),
        first=first,
        time=_str(record.get("time")),
    )


def _line_exits(line: str) -> list[dict[str, Any]]:
    """The processes a line of one of the single-line forms says ended, as an
    :class:`Exit`'s fields besides where and what it says."""
    if found := _TORCHRUN_LINE.search(line):
        status, local, pid = (int(g) for g in found.groups())
        return [{"status": status, "reporter": "torchrun", "local_rank": local, "pid": pid,
                 "first": True}]  # fmt: skip
    if found := _SPAWN.search(line):
        name = found.group(2)
        status = -int(getattr(signal, name, 0)) if name else int(found.group(3))
        return [{"status": status, "reporter": "torch.multiprocessing",
                 "local_rank": int(found.group(1))}]  # fmt: skip
    if found := _VLLM.search(line):
        return [{"status": int(found.group(3)), "reporter": "vLLM", "pid": int(found.group(2)),
                 "name": f"vLLM's {found.group(1)}"}]  # fmt: skip
    if found := _MPIRUN.search(line):
        rank, pid_text, node, signum = found.groups()
        return [{"status": -int(signum), "reporter": "Open MPI", "rank": int(rank),
                 "pid": int(pid_text), "host": node, "first": True}]  # fmt: skip
    if found := _UCX.search(line):
        node, pid_text, signum = found.groups()
        return [{"status": -int(signum), "reporter": "UCX's signal handler",
                 "pid": int(pid_text), "host": node}]  # fmt: skip
    if found := _SHELL.search(line):
        how = found.group("alone") or found.group("name")
        pid_text = found.group("pid")
        return [{"status": -int(_SHELL_SIGNALS[how]), "reporter": "the shell",
                 "pid": int(pid_text) if pid_text else None}]  # fmt: skip
    if found := _AGENT_STOP.search(line):
        status = -int(getattr(signal, found.group(2), signal.SIGTERM))
        return [{"status": status, "reporter": "torchrun's agent", "pid": int(found.group(1)),
                 "stopped": True}]  # fmt: skip
    pdsh = _PDSH.match(line)
    host = pdsh.group(1) if pdsh else None
    if found := _DS_KILLING.search(line):
        return [{"status": -int(signal.SIGTERM), "reporter": "DeepSpeed's launcher",
                 "pid": int(found.group(1)), "host": host, "stopped": True}]  # fmt: skip
    if found := _DS_EXITED.search(line):
        return [{"status": int(found.group(1)), "reporter": "DeepSpeed's launcher",
                 "host": host, "first": True}]  # fmt: skip
    if crash := _crash_report(line):
        return crash
    if found := _SLURM_CANCELLED.search(line):
        what, ident, node, when, why = found.groups()
        reason = f" due to its {why.lower()}" if why else ""
        return [{"status": -int(signal.SIGTERM), "reporter": "Slurm", "host": node,
                 "first": True, "name": f"job {'step ' if what == 'STEP' else ''}{ident}",
                 "cancelled": f"at {when}{reason}"}]  # fmt: skip
    if found := _SRUN.search(line):
        how = found.group(3)
        status = int(found.group(4)) if found.group(4) else -int(_SRUN_SIGNALS[how])
        return [{"status": status, "reporter": "Slurm", "rank": task, "host": found.group(1)}
                for task in _tasks(found.group(2))]  # fmt: skip
    return []


def _crash_report(line: str) -> list[dict[str, Any]]:
    """A process's own report of the signal that ends it (TVM FFI's, faulthandler's,
    ROCm's runtime's, abseil's), as :func:`_line_exits` gives it."""
    if _TVM.search(line):
        return [{"status": -int(signal.SIGSEGV), "reporter": _TVM_NAME}]
    if found := _FAULTHANDLER.search(line):
        ray = _RAY_PID.match(line)
        return [{"status": -int(_SHELL_SIGNALS[found.group(1)]), "reporter": _FAULTHANDLER_NAME,
                 "pid": int(ray.group(1)) if ray else None}]  # fmt: skip
    if found := _ROCR_HW.search(line):
        return [
            {
                "status": -int(signal.SIGABRT),
                "reporter": "ROCm's runtime",
                "cause": f"ROCm's runtime found a hardware exception ({found.group(2)}) on "
                f"HSA node {found.group(1)} (rocm-smi's Node column) and aborted the process: "
                "a GPU or driver fault, not the program's (dmesg on the node says more: "
                "amdgpu errors, a GPU reset)",
            }
        ]
    if (found := _ABSL.search(line)) and hasattr(signal, found.group(1)):
        return [{"status": -int(getattr(signal, found.group(1))),
                 "reporter": "abseil's handler"}]  # fmt: skip
    return []


_TVM_NAME = "TVM FFI's handler"
_FAULTHANDLER_NAME = "Python's faulthandler"
#: the crash reports whose native frames say where the signal stopped the process
_NATIVE_REPORTERS = frozenset({"UCX's signal handler", _FAULTHANDLER_NAME})


def _in_frame(crashed: Exit, where: str, line: str, function: str) -> Exit:
    """A crash report's frame: the first past the handler's own names the function the
    signal stopped it in; the first of NCCL's (its source file or an nccl* function)
    says NCCL was on the stack. A build's path is said from its ``src/``."""
    if "sigaction" in where or "sigaction" in function:
        return crashed
    nccl = function.startswith("nccl") or "/nccl/" in where or where.startswith("misc/")
    where = where.rsplit("/src/", 1)[-1] if "/src/" in where else where
    at = f" ({where}:{line})" if where != "<unknown>" else ""
    function = function.split("(", 1)[0]
    if crashed.name is None:
        inside = f"NCCL's {function}{at}" if nccl else function
        return dataclasses.replace(crashed, name=f"a process (in {inside})")
    if nccl and "NCCL's" not in crashed.name:
        return dataclasses.replace(
            crashed, name=f"{crashed.name[:-1]}, called from NCCL's {function}{at})"
        )
    return crashed


def _merged(found: Sequence[Exit]) -> list[Exit]:
    """One per process (pid and status): the first line's, with the rank, host and
    first-failure mark any other line adds."""
    out: dict[tuple[object, ...], Exit] = {}
    for one in found:
        key = (one.pid, one.status) if one.pid is not None else (one.where, one.rank)
        known = out.get(key)
        if known is None:
            out[key] = one
            continue
        out[key] = dataclasses.replace(
            known,
            rank=known.rank if known.rank is not None else one.rank,
            local_rank=known.local_rank if known.local_rank is not None else one.local_rank,
            host=known.host or one.host,
            first=known.first or one.first,
            time=known.time or one.time,
        )
    return _self_reports_folded(list(out.values()))


#: a process's own report of the signal that ends it, which names no pid (its pid is the
#: launcher's to say: faulthandler, TVM FFI's and abseil's handlers)
_SELF_REPORTERS = frozenset({_FAULTHANDLER_NAME, _TVM_NAME, "abseil's handler"})


def _self_reports_folded(ended: list[Exit]) -> list[Exit]:
    """A crash's own report without a pid is the process a launcher says the same signal
    ended, where exactly one such process is named: one crash, not two (the report adds
    where the signal stopped it); with none or several, it stays apart."""
    # the shell's pid-less report of a signal ROCm's runtime said it sends (its abort on a
    # GPU's hardware exception) is one of those processes
    for status in {e.status for e in ended if e.cause}:  # one shell line, one process
        shell = (e for e in ended if e.reporter == "the shell" and e.pid is None)
        if told := next((e for e in shell if e.status == status), None):
            ended.remove(told)
    for one in [e for e in ended if e.pid is None and e.reporter in _SELF_REPORTERS]:
        same = [e for e in ended if e.pid is not None and e.status == one.status]
        if len(same) == 1:
            at = ended.index(same[0])
            ended[at] = dataclasses.replace(same[0], name=same[0].name or one.name)
            ended.remove(one)
    return ended
