"""Stacks of a stuck job's processes as ``py-spy dump`` (or gdb's ``bt``) prints them:
which call each process waits in (a collective, NCCL, the data loader, a CUDA
synchronisation, its child processes), and what the processes dumped side by side say.

py-spy's format (py-spy ``src/dump.rs``): ``Process <pid>: <command line>``, ``Python
v<version> (<executable>)``, then per thread ``Thread <id> (<idle|active|...>):
"<name>"`` and its frames, innermost first, each ``    <function> (<file>:<line>)``
(``--native``: ``    <function> (<library>)`` or ``    0x<address> (<library>)``). Users
paste one process or several, with or without the header; a frame's ``Arguments:`` and
``Locals:`` (``--locals``) are read past.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.hang.model import HangReport

__all__ = ["Stack", "read_stacks", "stacks_summary", "with_stacks"]

_PROCESS = re.compile(r"Process (\d+): (.+?)\s*$")
_THREAD = re.compile(r'Thread (0x[0-9A-Fa-f]+|\d+) \(([\w+]+)\)(?:: "(.*)")?\s*$')
_FRAME = re.compile(r"^ {4}(\S.*?) \(([^()]+?)(?::(\d+))?\)\s*$")
#: gdb's ``thread apply all bt``: ``Thread 3 (Thread 0x7f.. (LWP 4711) "python"):``, then
#: ``#<n> 0x<pc> in <function> (<args>) from <library>`` or ``... at <file>:<line>``
_GDB_THREAD = re.compile(r'Thread (\d+) \(Thread 0x[0-9a-fA-F]+ \(LWP (\d+)\)(?: "(.*?)")?\):')
_GDB_FRAME = re.compile(
    r"^#\d+ +(?:0x[0-9a-fA-F]+ in )?(\S+?)(?: \[clone [^\]]*\])? ?\(.*?\)"
    r"(?: const)?(?: \[clone [^\]]*\])*(?: \(\))?(?: from (\S+)| at (\S+):(\d+))?\s*$"
)
#: a launcher's prefix before py-spy's own lines (SGLang's ``[time PP2 TP1] ``)
_PREFIX = re.compile(r"^(?:\[[^\]]*\] )?")
#: a log forwarder's before every line, frames too: docker compose's ``<service>  | ``
_FORWARDER = re.compile(r"^[\w.-]+ +\| ?")
#: the calls a process can wait in, by where the frame is: torch's collectives and
#: point-to-point calls (the function named is the call), c10d's native waits, NCCL's API
_C10D = "torch/distributed/distributed_c10d.py"
_NATIVE_WAIT = re.compile(r"^c10d::[\w:]*(?:Work|work)\w*::(?:wait|synchronize)")
_NCCL_CALL = re.compile(r"^nccl[A-Z]\w+$")
_CUDA_SYNC = re.compile(
    r"^(?:synchronize|item|_local_scalar_dense\w*|cuda(?:Stream|Device|Event)Synchronize"
    r"|cudaMemcpy\w*|cuStreamSynchronize|cuCtxSynchronize)$"
)
#: the files of frames that only wait (the standard library, pyzmq's polls, C libraries
#: such as libc.so.6): the call is above them
_WAITING = re.compile(
    r"^(?:threading|queue|selectors|subprocess|socket|multiprocessing/\w+|concurrent/[\w/]+"
    r"|zmq/[\w/]+)\.py$|^lib\w*\.so"
)


#: the waits of a process that started the ranks and waits for them to end (a
#: launcher, SGLang's data-parallel controller): a parent, not a rank
_CHILDREN = frozenset(
    {"process.join", "popen_fork.wait", "popen_spawn_posix.wait", "subprocess.wait"}
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Stack:
    """One dumped process: where its telling thread waits."""

    where: str  # file:line of the process's (or its first thread's) line
    process: str  # "pid 88693 (sglang::scheduler_PP2_TP1)", or "the process at <where>"
    thread: str  # "MainThread", "Thread 4079"
    kind: str  # collective, nccl, data, cuda, elsewhere, unshown (its main thread not dumped)
    call: str  # "all_reduce (torch/distributed/distributed_c10d.py:2050)"
    #: where the main thread is, when it idles while the telling thread works
    #: (py-spy's "active"): "resolve_batch_result (...:169), waiting in queue.get"
    main: str = ""

    def said(self) -> str:
        what = {
            "collective": "waits in",
            "nccl": "waits in NCCL's",
            "data": "waits for data in",
            "cuda": "waits for the GPU in",
        }.get(self.kind, "is in")
        if self.kind == "unshown":
            return f"{self.process}: its main thread is not in the dump"
        if self.kind == "parent":
            return (
                f"{self.process}: {self.thread} waits for its child processes in {self.call}: "
                "a parent of the ranks, not one of them"
            )
        if self.main:
            return (
                f"{self.process}: {self.thread} {what} {self.call} (active when dumped; "
                f"its MainThread, idle, is in {self.main})"
            )
        return f"{self.process}: {self.thread} {what} {self.call}"


@dataclasses.dataclass
class _Thread:
    where: str
    name: str
    status: str = ""  # py-spy's: idle, active, active+gil, ...
    frames: list[tuple[str, str, str | None]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Process:
    where: str
    label: str
    threads: list[_Thread] = dataclasses.field(default_factory=list)


def read_stacks(path: str, lines: Sequence[tuple[int, str]]) -> list[Stack]:
    """Every process a ``py-spy dump`` in these numbered lines shows, in input order."""
    processes: list[_Process] = []
    thread: _Thread | None = None
    for number, forwarded in lines:
        tagged = _FORWARDER.match(forwarded)
        raw = forwarded[tagged.end() :] if tagged else forwarded
        line = raw[_PREFIX.match(raw).end() :]  # type: ignore[union-attr]
        where = f"{path}:{number}"
        if found := _PROCESS.match(line):
            processes.append(_Process(where, _label(found.group(1), found.group(2))))
            thread = None
        elif found := _THREAD.match(line):
            name = found.group(3) or f"Thread {found.group(1)}"
            last = processes[-1] if processes else None
            # a paste of several processes without their headers: a second MainThread
            if last is None or (name == "MainThread" and any(
                t.name == "MainThread" for t in last.threads
            )):  # fmt: skip
                last = _Process(where, f"the process at {where}")
                processes.append(last)
            thread = _Thread(where, name, found.group(2))
            last.threads.append(thread)
        elif found := _GDB_THREAD.match(line):
            if not processes:
                processes.append(_Process(where, f"the process at {where}"))
            thread = _Thread(where, found.group(3) or f"LWP {found.group(2)}")
            processes[-1].threads.append(thread)
        elif thread is not None and (found := _FRAME.match(raw)):
            thread.frames.append((found.group(1), found.group(2), found.group(3)))
        elif found := _GDB_FRAME.match(line):
            if thread is None or (line.startswith("#0 ") and thread.frames):
                # a backtrace without gdb's thread line: a thread of its own
                if not processes:
                    processes.append(_Process(where, f"the process at {where}"))
                thread = _Thread(where, "its thread")
                processes[-1].threads.append(thread)
            function = found.group(1).split("(", 1)[0].rsplit("::", 1)[-1]
            library = (found.group(2) or found.group(3) or "").rsplit("/", 1)[-1]
            thread.frames.append((function, library or "?", found.group(4)))
        elif thread is not None and raw.strip() and not raw.startswith("        "):
            thread = None  # a line of the log after the dump
    return [s for p in processes if (s := _judged(p)) is not None]


#: a rank a worker's command line names (``--rank 1``, ``--local_rank=3``)
_RANK_FLAG = re.compile(r"--(?:local[_-])?rank[= ](\d+)\b")
#: a command line is quoted up to this many characters
_COMMAND_CHARS = 60


def _label(pid: str, command: str) -> str:
    """``pid 4711, --rank 1 (python -m train ...)``: the command line cut short, and the
    rank it passes where it passes one."""
    short = command if len(command) <= _COMMAND_CHARS else command[: _COMMAND_CHARS - 1] + "…"
    rank = _RANK_FLAG.search(command)
    return f"pid {pid}{f', {rank.group(0)}' if rank else ''} ({short})"


def _judged(process: _Process) -> Stack | None:
    """The thread that tells where the process waits: one in a collective or NCCL call,
    else the main thread, else the first."""
    read = [(t, _call(t.frames)) for t in process.threads if t.frames]
    if not read:
        return None
    telling = next((r for r in read if r[1][0] in ("collective", "nccl")), None)
    main = next((r for r in read if r[0].name == "MainThread"), None)
    if telling is None and main is not None and (working := _working(main, read)):
        thread, (kind, call) = working
        return Stack(
            where=process.where, process=process.label, thread=thread.name, kind=kind,
            call=call, main=main[1][1],
        )  # fmt: skip
    telling = telling or main or read[0]
    thread, (kind, call) = telling
    if thread.name.startswith("Thread-") and kind in ("data", "elsewhere"):
        # a helper thread (Python's default name) that waits in nothing: the main
        # thread, where the process is, is not in the dump
        kind = "unshown"
    return Stack(
        where=process.where, process=process.label, thread=thread.name, kind=kind, call=call
    )


def _working(
    main: tuple[_Thread, tuple[str, str]], read: Sequence[tuple[_Thread, tuple[str, str]]]
) -> tuple[_Thread, tuple[str, str]] | None:
    """The thread that works for a main thread py-spy saw idle outside any wait of the
    job (in a queue's get, autograd's engine): the first other thread it saw active,
    where one is (SGLang's forward thread, the autograd engine's device thread)."""
    if main[0].status != "idle" or main[1][0] != "elsewhere":
        return None
    return next(
        (
            r
            for r in read
            if r[0] is not main[0] and r[0].status.startswith("active") and r[1][0] != "parent"
        ),
        None,
    )


#: torch's operator dispatch: a frame there is an op, called from the frame after it
_DISPATCH = re.compile(r"^torch/(?:_ops|overrides|utils/_device)\.py$")


def _call(frames: Sequence[tuple[str, str, str | None]]) -> tuple[str, str]:
    """(kind, call) of a thread's frames, innermost first."""

    def named(function: str, file: str, line: str | None) -> str:
        return f"{function} ({file}:{line})" if line else f"{function} ({file})"

    for function, file, line in frames:
        if file.endswith(_C10D):
            return "collective", named(function, file, line)
        if _NATIVE_WAIT.match(function):
            return "collective", named(function, file, line)
        if _NCCL_CALL.match(function):
            return "nccl", named(function, file, line)
        if _CUDA_SYNC.match(function):
            return "cuda", named(function, file, line)
    waited = None
    dispatched = 0  # innermost frames in torch's operator dispatch
    while dispatched < len(frames) - 1 and _DISPATCH.match(frames[dispatched][1]):
        dispatched += 1
    if dispatched:
        return "elsewhere", f"a torch op called from {named(*frames[dispatched])}"
    for function, file, line in frames:
        if _WAITING.search(file):
            # the outermost wait is the call the program made (queue.get, process.join)
            stem = file.rsplit("/", 1)[-1].split(".", 1)[0]
            waited = f"{stem}.{function}" if file.endswith(".py") else function
            continue
        data = function in ("__next__", "_next_data", "__iter__") or "/data/" in f"/{file}"
        call = named(function, file, line) + (f", waiting in {waited}" if waited else "")
        if waited in _CHILDREN:
            return "parent", call
        return ("data" if data else "elsewhere"), call
    return "elsewhere", named(*frames[0])


#: the kinds of a process that waits for the job: in a collective, in NCCL, or for the
#: GPU (an NCCL job's hung collective holds the host where it next synchronises)
_WAITS = ("collective", "nccl", "cuda")


def stacks_summary(stacks: Sequence[Stack]) -> str:
    """What the dumped processes say together: those away from where the others wait,
    processes in different calls, or each one's call."""
    waiting = [s for s in stacks if s.kind in _WAITS]
    others = [s for s in stacks if s.kind not in (*_WAITS, "unshown", "parent")]
    aside = [s.said() for s in stacks if s.kind in ("unshown", "parent")]
    together = _together(waiting, others, stacks) if waiting or others else None
    return "the stacks: " + "; ".join([*([together] if together else []), *aside[:3]])


def _where(waiting: Sequence[Stack]) -> str:
    """Where processes wait: ``in all_reduce``, ``for the GPU in synchronize``."""
    places = {
        ("for the GPU in " if s.kind == "cuda" else "in ") + s.call.split(" (", 1)[0]
        for s in waiting
    }
    return " / ".join(sorted(places))


def _together(waiting: Sequence[Stack], others: Sequence[Stack], stacks: Sequence[Stack]) -> str:
    shown = [s for s in stacks if s.kind not in ("unshown", "parent")]
    calls = sorted({s.call.split(" (", 1)[0] for s in waiting})
    if waiting and others:
        gpu = any(s.kind == "cuda" for s in waiting)
        return (
            f"{'; '.join(s.said() for s in others)}: not waiting {_where(waiting)} as "
            f"{len(waiting)} other dumped process(es) are"
            + (
                " (GPU work they queued, an NCCL collective among it, has not finished)"
                if gpu
                else ""
            )
            + ": where they are one job, the others wait for it"
        )
    if len(calls) > 1:
        return (
            f"the dumped processes wait in different calls ({', '.join(calls)}): "
            f"{'; '.join(s.said() for s in waiting)}"
        )
    said = "; ".join(s.said() for s in shown[:4])
    more = f" and {len(shown) - 4} more" if len(shown) > 4 else ""
    if waiting and all(s.kind == "cuda" for s in waiting):
        return (
            f"{said}{more}: GPU work it queued (an NCCL collective among it, where the job "
            "queued one) has not finished; a dump of every rank says which one the others "
            "wait for"
        )
    if waiting:
        return (
            f"{said}{more}: a collective whose peers the dump does not show; a dump "
            "of every rank says which one has not entered it"
        )
    if len(shown) > 1 and len({s.call for s in shown}) == 1:
        return (
            f"the {len(shown)} dumped processes are all in {shown[0].call}: none stands "
            "apart; a dump of every rank says which one the others wait for"
        )
    return (
        f"{said}{more}: not in a collective; where the job's other ranks wait in "
        "one, they wait for this (a dump of every rank shows it)"
    )


def with_stacks(report: HangReport, stacks: Sequence[Stack]) -> HangReport:
    """The verdict with what the dumped stacks say: its headline where nothing else
    spoke (no dump, no error line: a job judged by its stacks alone is not known to be
    well), else after it."""
    if not stacks:
        return report
    summary = stacks_summary(stacks)
    if report.status == "no-hang" and not report.dumps:
        status, headline = "unknown", summary
    else:
        status, headline = report.status, f"{report.headline}; {summary}"
    return dataclasses.replace(report, status=status, headline=headline, stacks=tuple(stacks))
