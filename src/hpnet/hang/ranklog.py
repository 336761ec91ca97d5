"""The error lines a stuck job's ranks print, each tied to its rank, group and
collective where the line says so.

PyTorch's ProcessGroupNCCL lines (the watchdog's timeout, the group's last enqueued and
completed work, an NCCL error) are read by :func:`hpnet.artefacts.framework.read_torch`,
the reader ``hpnet verify`` uses (tests/data/hang/WATCHDOG-FORMATS.md cites each
release's code); the global rank is torch's ``[rank3]:`` prefix, else the log's file
name (``rank3.log``). Read here besides:

* a peer gone: gloo's ``Connection closed by peer [addr]:port`` and ``Connection reset
  by peer``, NCCL's ``remote process exited or there was a network error``;
* gloo's own timeout: ``Timed out waiting 3000ms for recv operation to complete``;
* a process group never made (the job never reached a collective): gloo's ``Gloo
  connectFullMesh failed``, the store's ``DistStoreError: wait timeout``;
* a mismatch a rank saw: gloo's ``Received data size doesn't match expected size. Is
  there a distributed collective mismatch in your code?`` (before it aborts), torch's
  ``Detected mismatch between collectives`` (TORCH_DISTRIBUTED_DEBUG=DETAIL);
* a crash, not a hang: ProcessGroupNCCL's watchdog ended by a CUDA error its query of a
  work's events raised (``Process group watchdog thread terminated with exception: CUDA
  error: an illegal memory access was encountered``);
* torchrun's rendezvous (torch.distributed.elastic): its errors, the store's connect
  timeout, a rendezvous it could not close, a launch's random id;
* a wait on the store: c10d's socket read that timed out (``[c10d] waitForInput: poll for
  socket SocketImpl(fd=49, addr=..., remote=host:port) returned 0, likely a timeout`` and
  ``... timed out after 3000ms``, torch/csrc/distributed/c10d/socket.cpp), the store's
  client waiting for a key.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

from hpnet.artefacts.framework import job_rank, read_torch
from hpnet.artefacts.lines import logical_lines
from hpnet.artefacts.model import TorchEvent
from hpnet.render.text import escape_controls

__all__ = [
    "RankError", "file_rank", "line_time", "read_errors",
]  # fmt: skip

#: torch's ``[rank3]:``, the innermost of a launcher's and torch's (artefacts.framework)
_GLOBAL_RANK = re.compile(r"(?:\[rank\d+\]:)*\[rank(\d+)\]:")
#: glog's prefix, as c10's logging writes it: ``[E1127 20:44:45.379324852 File.cpp:612]``
_GLOG_TIME = re.compile(r"\[[EWIF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d(?:\.\d+)?) ")
_FILE_RANK = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)
_TIMEOUT = re.compile(r"Timed out waiting \d+ ?ms for \w+ operation|timed out in (?:a )?collective")
_MISMATCH = re.compile(
    r"collective mismatch|Detected mismatch between collectives|doesn't match expected size"
)
_CLOSED = re.compile(
    r"Connection closed by peer|remote process exited or there was a network error"
    r"|Connection reset by peer"
)
#: the process group could not be made: its ranks never met (gloo's full mesh, the
#: store's key wait, torch's store barrier; torch/csrc/distributed/c10d ProcessGroupGloo
#: and Store errors, distributed_c10d.py's barrier)
_INIT = re.compile(
    r"Gloo connectFullMesh failed|DistStoreError: wait timeout"
    r"|Timed out initializing process group in store based barrier"
    r"|use_libuv was requested but PyTorch was build without libuv support"
)
#: torchrun's rendezvous (torch.distributed.elastic: the agents of every node meet in
#: the store at --rdzv_endpoint before any worker starts) failed: its errors, the c10d
#: client's connect timeout (with the store's address; a terminal's hard wrap may cut the
#: line after the host), and the launch's own random id
#: (launcher/api.py: no --rdzv_id given, each node's agent draws one of its own)
_RENDEZVOUS = re.compile(
    r"(?P<shutdown>has failed to shutdown the rendezvous)"
    r"|Rendezvous(?:Timeout|Connection|Closed)Error"
    r"|The client socket has timed out after \d+ ?m?s while trying to connect to "
    r"\((?P<host>[^,()\s]+)(?:, (?P<port>\d+)\)|\s*$)"
    r"|(?P<random>config has no run_id, generated a random run_id)"
)
#: torch's monitored barrier (ProcessGroupGloo::monitoredBarrier; with
#: TORCH_DISTRIBUTED_DEBUG=DETAIL, ProcessGroupWrapper runs one before every collective):
#: rank 0 names the ranks that did not answer it, ``[Rank 0]: Rank 6 failed to pass
#: monitoredBarrier in 1800000 ms`` (the first), ``Ranks 3, 6 failed ...`` (wait_all_ranks)
_BARRIER = re.compile(r"Ranks? (\d+(?:, \d+)*) failed to pass monitoredBarrier")
#: XLA's rendezvous of the participants of one collective (JAX on GPU): a participant
#: that waited past the warning time says so. 2021's collective_ops_utils.h: ``waiting
#: for 5000ms for and may be stuck: participant for device ordinal 1, ... RendezvousKey{
#: run_id=RunId: 85034, global_devices=[0,1,2,3], num_local_participants=4,
#: collective_op_kind=cross_replica, op_id=534}``; xla/service/rendezvous.cc later:
#: ``[id=0] This thread has been waiting for `<name>` for 20 seconds and may be stuck.
#: Expected 2 threads to join the rendezvous``
_XLA_OLD = re.compile(
    r"waiting for \d+ ?ms for and may be stuck: participant for device ordinal (\d+),.*?"
    r"RendezvousKey\{run_id=RunId: (-?\d+), global_devices=\[([\d, ]*)\], "
    r"num_local_participants=(\d+), collective_op_kind=(\w+), op_id=(\d+)\}"
)
_XLA_NEW = re.compile(
    r"(?:\[id=(\d+)\] )?This thread has been waiting for `([^`]+)` for \d+ seconds and may "
    r"be stuck\. Expected (\d+) threads to join the rendezvous, but not all"
)
#: the watchdog ended by a CUDA error (ProcessGroupNCCL's watchdog queries each work's
#: CUDA events: a kernel's fault surfaces there, wherever it happened), with the group
#: (its GUID where the line has one, as everywhere in hang: artefacts.framework's _PG)
#: and the rank in it the line names (``[PG ID 2 PG GUID 3 Rank 2]``, ``[PG 0 Rank 3]``);
#: torch up to 2.2 said "NCCL watchdog thread terminated with exception", its prefix
#: ``[Rank N]`` the rank in a group it does not name
_CRASH = re.compile(
    r"(?:\[(?:PG (?:ID )?(\S+?)(?: PG GUID (\S+?))?\s?(?:\([^)]*\))? )?Rank (\d+)\] )?"
    r"(?:Process group|NCCL) watchdog thread terminated with exception: (CUDA error: .+?)\s*$"
)
#: c10d's socket, the store's client: a read that waited its timeout out
_STORE_WAIT = re.compile(
    r"\[c10d\] waitForInput: (?:poll for )?socket SocketImpl\(fd=-?\d+, addr=[^,)]*, "
    r"remote=([^)]+)\) (?:returned 0, likely a timeout|timed out after \d+ ?ms)"
)
#: ProcessGroupNCCL's destructor at interpreter exit (torch 2.4 on)
_NO_DESTROY = re.compile(r"destroy_process_group\(\) was not called before program exit")
#: ProcessGroupNCCL's shutdown (destroy_process_group, its destructor) runs ncclCommAbort
#: of each communicator on a thread and waits the group's timeout for it
#: (waitForFutureOrTimeout(fut, options_->timeout, "ProcessGroup abort", ...))
_ABORT_WAIT = re.compile(r"Future for ProcessGroup abort timed out after (\d+) ?ms")
#: the watchdog's teardown after a collective failed or timed out (ProcessGroupNCCL.cpp,
#: with async error handling), and its wait for the Flight Recorder dump that expired
#: (TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC): read only where a file holds no other error line
TEARDOWN = re.compile(r"Some NCCL operations have failed or timed out")
DUMP_WAIT = re.compile(r"timed out after waiting for (\d+) ?ms flight recorder dumps to finish")
#: SGLang's scheduler watchdog: a forward batch did not finish in that many seconds
#: (scheduler.py watchdog_thread; "Scheduler watchdog timeout (..., self.soft=False)" later)
_SGLANG_WATCHDOG = re.compile(r"(?:Scheduler w|W)atchdog timeout \(self\.watchdog_timeout=")
#: the heartbeat monitor's line says how many works the watchdog still held
_PENDING = re.compile(r"workMetaList_\.size\(\)\s?=\s?(\d+)")
#: torch's fingerprint check (TORCH_DISTRIBUTED_DEBUG=DETAIL; hpnet.hang.fingerprint says
#: what it proves): the rank that checked, its collective, and the first rank unlike it
#: (torch 2.0's fingerprints hold no sequence number: ``CollectiveFingerPrint(OpType=X, ...``)
_FINGERPRINTS = re.compile(
    r"Detected mismatch between collectives on ranks\. Rank (\d+) is running collective: "
    r"CollectiveFingerPrint\((?:SequenceNumber=(\d+),? ?)?OpType=(\w+)(.*?)\), but Rank (\d+) "
    r"is running collective: CollectiveFingerPrint\((?:SequenceNumber=(\d+),? ?)?OpType=(\w+)"
    r"(\)|, )"
)
_TENSOR_SHAPE = re.compile(r"^, TensorShape=\[([\d, ]*)\]")
_THEIR_SHAPE = re.compile(r", TensorShape=\[([\d, ]*)\]")  # matched where it must start
#: c10d's ``enum class OpType`` (torch/csrc/distributed/c10d/Work.hpp; the same values in
#: every release that has the check), as opTypeToString names them
OP_TYPES = (
    "BROADCAST", "ALLREDUCE", "ALLREDUCE_COALESCED", "REDUCE", "ALLGATHER", "_ALLGATHER_BASE",
    "ALLGATHER_COALESCED", "GATHER", "SCATTER", "REDUCE_SCATTER", "ALLTOALL_BASE", "ALLTOALL",
    "SEND", "RECV", "RECVANYSOURCE", "BARRIER", "_REDUCE_SCATTER_BASE", "COALESCED",
    "_ALLREDUCE_SPARSE", "REDUCE_SCATTER_TENSOR_COALESCED",
)  # fmt: skip
#: Ray's log deduplication: alike lines of other workers (numbers aside) folded into one
RAY_FOLDED = re.compile(r"\[repeated (\d+)x across cluster\]")
#: what makes a line evidence: the screen keeps this part of a long line
KEY_PHRASE = re.compile(
    "|".join(x.pattern for x in (_TIMEOUT, _MISMATCH, _CLOSED, _INIT, _BARRIER))
    + r"|may be stuck"
    + r"|NCCL error|Watchdog caught|watchdog got stuck|Heartbeat monitor timed out"
    + r"|watchdog thread terminated with exception: CUDA error|waitForInput: "
    + r"|Future for ProcessGroup abort timed out|atchdog timeout \(self\.watchdog_timeout="
)
#: NCCL's error string for a peer that went away (ncclRemoteError, src/misc/utils.cc)
REMOTE_GONE = "remote process exited or there was a network error"
MAX_LOG_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RankError:
    rank: int | None
    where: str  # file:line
    text: str  # the line, control characters escaped, at most 300 characters
    timeout: bool
    peer_closed: bool
    mismatch: bool = False  # the line says the ranks' collectives did not match
    init: bool = False  # the line says the process group could not be made
    pg: str | None = None
    seq: int | None = None
    op: str | None = None
    #: the timed-out work's input element count (``NumelIn=``), where the line says
    numel_in: int | None = None
    last_enqueued: int | None = None
    last_completed: int | None = None
    #: when the line was written, by its glog prefix: seconds, comparable within a job
    #: (month, day and time; glog writes no year)
    at: float | None = None
    #: the Python stack Flight Recorder kept of the rank's failed collective (torch 2.6
    #: on prints it after the watchdog's status line), innermost frame first
    stack: tuple[str, ...] = ()
    #: the rank's watchdog thread got stuck (its heartbeat monitor said so)
    stuck: bool = False
    #: the ranks this rank's monitored barrier says did not pass it
    barrier: tuple[int, ...] = ()
    #: the process was exiting without destroy_process_group()
    exiting: bool = False
    #: XLA: the rendezvous a participant waits at, the participant (a device ordinal, or
    #: its id in the rendezvous), and every participant it expects (where the line says)
    rendezvous: str | None = None
    participant: int | None = None
    participants: tuple[int, ...] = ()
    #: torch's fingerprint check: the first rank unlike this one, and that rank's
    #: collective where the line shows it; else the length of its fingerprint (torch's
    #: first comparison, of lengths, failed: hpnet.hang.fingerprint)
    versus: int | None = None
    versus_seq: int | None = None
    versus_op: str | None = None
    versus_values: int | None = None
    #: that rank's tensors' element count, where the line shows its fingerprint whole
    versus_numel_in: int | None = None
    #: the CUDA error that ended the rank's watchdog (a crash, not a hang), and the
    #: rank's place in the group the line names (its rank there, not the job's)
    crash: str | None = None
    pg_rank: int | None = None
    #: the store (``host:port``) whose reply the rank waited for until its read timed out
    store: str | None = None
    #: the launcher's rendezvous failed (init is set too): the store it could not
    #: connect to (``host:port``), where the line says; or the launch drew a random id
    launcher: bool = False
    endpoint: str | None = None
    random_id: bool = False
    #: the launcher could not close its rendezvous (at the run's end, or after a failure)
    shutdown: bool = False
    #: the group's abort (its communicators' ncclCommAbort, at destroy_process_group()
    #: or its destructor) did not return within this many ms
    abort_wait_ms: int | None = None
    #: the works the rank's watchdog still held, where its heartbeat monitor's line says
    pending: int | None = None
    #: how many more workers' alike lines Ray's log dedup folded into this one
    #: ("[repeated 3x across cluster]": their ranks are not shown)
    repeated: int = 0


def line_time(line: str) -> float | None:
    """The glog prefix's time in seconds (month and day folded in), if the line has one.

    >>> line_time("[rank0]:[E1127 20:44:45.379324852 ProcessGroupNCCL.cpp:612] [Rank 0]")
    31869885.379324853
    >>> line_time("Connection closed by peer") is None
    True
    """
    found = _GLOG_TIME.search(line)
    if not found:
        return None
    month, day, hour, minute = (int(g) for g in found.groups()[:4])
    return ((month * 31 + day) * 24 + hour) * 3600 + minute * 60 + float(found.group(5))


def _line_error(line: str, where: str, named: int | None) -> RankError | None:
    """A line that is not PyTorch's ProcessGroupNCCL text: gloo's and the network's."""
    timeout = bool(_TIMEOUT.search(line) or _SGLANG_WATCHDOG.search(line))
    closed = bool(_CLOSED.search(line))
    mismatch = bool(_MISMATCH.search(line))
    launcher = _RENDEZVOUS.search(line)
    # a launcher's rendezvous that failed: the group could not be made (its id: a fact)
    init = bool(_INIT.search(line)) or bool(
        launcher and not launcher.group("random") and not launcher.group("shutdown")
    )
    barrier = _BARRIER.search(line)
    exiting = bool(_NO_DESTROY.search(line))
    xla = _xla_wait(line)
    crash = _CRASH.search(line)
    store = _STORE_WAIT.search(line)
    abort = _ABORT_WAIT.search(line)
    if not (
        timeout or closed or mismatch or init or barrier or exiting or xla or crash or store
    ) and not (launcher or abort):
        return None
    rank = _GLOBAL_RANK.search(line)
    compared = _compared(line)
    # a fingerprint check names the rank that checked (in its group); torch's own prefix,
    # where the line has one, is that rank's in the job
    checking = compared.pop("rank", named)
    if crash and crash.group(3) is not None:  # the group the line names, and its rank there
        compared.update(pg=crash.group(2) or crash.group(1), pg_rank=int(crash.group(3)))
    return RankError(
        rank=int(rank.group(1)) if rank else checking,
        where=where,
        text=escape_controls(line.strip())[:300],
        timeout=timeout,
        peer_closed=closed,
        mismatch=mismatch,
        init=init,
        at=line_time(line),
        barrier=tuple(int(r) for r in barrier.group(1).split(", ")) if barrier else (),
        exiting=exiting,
        rendezvous=xla[0] if xla else None,
        participant=xla[1] if xla else None,
        participants=xla[2] if xla else (),
        crash=crash.group(4) if crash else None,
        store=store.group(1) if store else None,
        abort_wait_ms=int(abort.group(1)) if abort else None,
        **_launcher(launcher),
        **compared,
    )


def _launcher(found: re.Match[str] | None) -> dict[str, Any]:
    """A launcher's rendezvous line: the store it could not reach, a rendezvous it could
    not close, or a random id."""
    if found is None:
        return {}
    host, port = found.group("host", "port")
    return {
        "launcher": True,
        # a terminal that wrapped the line after the host left the port on the next
        "endpoint": (f"{host}:{port}" if port else host) if host else None,
        "random_id": bool(found.group("random")),
        "shutdown": bool(found.group("shutdown")),
    }


def _compared(line: str) -> dict[str, Any]:
    """A fingerprint check's line: the checking rank's collective and the other rank's
    (or, where torch compared lengths, the number of values in its fingerprint, which
    torch printed as the op, with number 0: a length as an OpType)."""
    found = _FINGERPRINTS.search(line)
    if found is None:
        return {}
    rank, seq, op, rest, versus, their_seq, their_op, tail = found.groups()
    shape = _TENSOR_SHAPE.match(rest)
    # a length read as a fingerprint: number 0 (none at all in torch 2.0's), no tensors
    # where this rank's has some
    lengths = (
        shape is not None and their_seq in ("0", None) and tail == ")" and their_op in OP_TYPES
    )
    dims = [int(d) for d in shape.group(1).split(",") if d.strip()] if shape else None
    theirs = _THEIR_SHAPE.match(line, found.end() - 2) if tail == ", " else None
    their_dims = [int(d) for d in theirs.group(1).split(",") if d.strip()] if theirs else None
    return {
        "rank": int(rank),
        "seq": int(seq) if seq is not None else None,
        "op": op.lower(),
        "numel_in": math.prod(dims) if dims is not None else None,
        "versus": int(versus),
        "versus_seq": None if lengths or their_seq is None else int(their_seq),
        "versus_op": None if lengths else their_op.lower(),
        "versus_values": OP_TYPES.index(their_op) if lengths else None,
        "versus_numel_in": math.prod(their_dims) if their_dims is not None else None,
    }


def _xla_wait(line: str) -> tuple[str, int | None, tuple[int, ...]] | None:
    """An XLA participant's wait at a rendezvous: the rendezvous, the participant and
    those it expects (the key's devices where all are this process's; ids 0..N-1)."""
    if found := _XLA_OLD.search(line):
        devices = tuple(int(d) for d in found.group(3).split(",") if d.strip())
        local = int(found.group(4)) == len(devices)
        key = f"op {found.group(6)} ({found.group(5)}) of run {found.group(2)}"
        return key, int(found.group(1)), devices if local else ()
    if found := _XLA_NEW.search(line):
        who = int(found.group(1)) if found.group(1) else None
        return f"`{found.group(2)}`", who, tuple(range(int(found.group(3))))
    if "Thread is unstuck! Warning above was a false-positive" in line:
        return "", None, ()  # a wait that ended: which one, the line does not say
    return None


def _torch_error(event: TorchEvent, path: str, named: int | None) -> RankError:
    first = event.quotes[0]
    # torch's [rankN]: prefix, else the log file's name, else the line's own [Rank N]
    # where that is the job's rank (the default group's)
    rank = event.global_rank if event.global_rank is not None else named
    if rank is None:
        rank = job_rank(event)
    return RankError(
        rank=rank,
        where=f"{path}:{first.line}",
        text=escape_controls(first.text.strip())[:300],
        timeout=event.what == "timeout",
        peer_closed=event.error == REMOTE_GONE,
        stuck=event.what == "stuck",
        # a stuck watchdog of a group other than the default names its rank in that group
        pg_rank=event.rank if event.what == "stuck" and event.pg not in (None, "0") else None,
        pending=int(found.group(1)) if (found := _PENDING.search(first.text)) else None,
        pg=event.pg,
        seq=event.seq,
        op=event.op.lower() if event.op else None,
        numel_in=event.numel_in,
        last_enqueued=event.last_enqueued,
        last_completed=event.last_completed,
        at=line_time(first.text),
        repeated=max((int(n) for q in event.quotes for n in RAY_FOLDED.findall(q.text)), default=0),
    )


def file_rank(path: str) -> int | None:
    """The rank a log's file name names (``rank3.log``, ``rank_3.stderr``), if any.

    >>> file_rank("/job/rank3.log"), file_rank("node1-rank_12.stderr"), file_rank("job.log")
    (3, 12, None)
    """
    found = _FILE_RANK.search(Path(path).name)
    return int(found.group(1)) if found else None


#: teardown lines kept per file
MAX_TEARDOWN = 64


def _teardown(line: str, where: str, named: int | None) -> RankError:
    rank = _GLOBAL_RANK.search(line)
    return RankError(
        rank=int(rank.group(1)) if rank else named,
        where=where,
        text=escape_controls(line.strip())[:300],
        timeout=False,
        peer_closed=False,
        at=line_time(line),
    )


def read_errors(path: str, raw: bytes) -> list[RankError]:
    """Every error line of one rank's log (or a job's combined log), in input order."""
    named = file_rank(path)
    lines = raw[:MAX_LOG_BYTES].decode("utf-8", "replace").splitlines()
    numbered = list(enumerate(lines, 1))
    found: list[tuple[int, RankError]] = []
    taken: set[int] = set()
    for event in read_torch(logical_lines(path, numbered)):
        if event.what in ("timeout", "status", "nccl-error", "stuck") and event.quotes:
            found.append((event.quotes[0].line, _torch_error(event, path, named)))
            taken.update(q.line for q in event.quotes)
        elif event.what == "stack":  # the rank's line before it: its status, or timeout
            rank = event.global_rank if event.global_rank is not None else named
            for index in range(len(found) - 1, -1, -1):
                if found[index][1].rank == rank:
                    at, known = found[index]
                    found[index] = (at, dataclasses.replace(known, stack=event.frames))
                    break
            taken.update(q.line for q in event.quotes)
    for number, line in numbered:
        if number not in taken and (error := _line_error(line, f"{path}:{number}", named)):
            found.append((number, error))
    errors = [error for _, error in sorted(found, key=lambda pair: pair[0])]
    if not errors:  # the watchdog's teardown lines say that much where nothing else does
        errors = [
            _teardown(line, f"{path}:{number}", named)
            for number, line in numbered
            if TEARDOWN.search(line) or DUMP_WAIT.search(line)
        ][:MAX_TEARDOWN]
    if not any(e.launcher and not e.random_id for e in errors):
        # a random rendezvous id is a fact of a launch, an error only with the failure
        errors = [e for e in errors if not e.random_id]
    return errors
