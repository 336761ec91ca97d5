"""Framework text around NCCL -> :class:`TorchEvent` and :class:`WrappedError`; pure.

PyTorch (``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``, 2.0-2.7, and
``NCCLUtils.hpp``'s ``C10D_NCCL_CHECK``):

- ``Watchdog caught collective operation timeout: WorkNCCL(SeqNum=N, OpType=OP,
  NumelIn=I, NumelOut=O, Timeout(ms)=T) ran for R milliseconds before timing out.``
- ``ProcessGroupNCCL's watchdog got stuck for S seconds without making progress`` (the
  heartbeat monitor, 2.3+), ``Process group watchdog thread terminated with exception``
- ``Exception (either an error or timeout) detected by watchdog at work: N, last
  enqueued NCCL work: E, last completed NCCL work: C.`` (2.2-2.4), ``Timeout at NCCL
  work: N, last enqueued NCCL work: E, last completed NCCL work: C.`` (2.3-2.5, on a
  timeout) and ``failure detected
  by watchdog at work sequence id: N PG status: last enqueued work: E, last completed
  work: C`` (2.5+)
- ``NCCL error in: FILE:LINE, <ncclGetErrorString>, NCCL version X`` then the result's
  name and ``Last error:`` with NCCL's last WARN on the next lines.

XLA (``xla/service/gpu/nccl_utils.cc``, ``nccl_api.cc``): ``NCCL operation CALL(...)
failed: <error>[ (run with NCCL_DEBUG=INFO for details)][. Last NCCL warning(error) log
entry (may be unrelated) '<text>']``. vLLM and SGLang (``pynccl_wrapper.py``
``NCCL_CHECK``): ``RuntimeError: NCCL error: <error>``; CuPy (DeepSpeed, Chainer):
``NcclError: NCCL_ERROR_X: <error>``; Horovod: ``ncclCommInitRank failed: <error>``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from hpnet.artefacts.lines import Logical
from hpnet.artefacts.model import TorchEvent, WrappedError

__all__ = [
    "NCCL_ERRORS", "PG_PREFIX", "called_from", "caller", "job_rank", "read_torch", "read_wrapped",
]  # fmt: skip

#: ncclGetErrorString (src/misc/utils.cc / init.cc), the texts every wrapper repeats
NCCL_ERRORS = (
    "unhandled cuda error",
    "unhandled system error",
    "internal error",
    "invalid argument",
    "invalid usage",
    "remote process exited or there was a network error",
    "NCCL operation in progress",
    "operation timed out",
)
_ERROR = "|".join(re.escape(e) for e in NCCL_ERRORS)
_RANK = re.compile(r"\[(?:PG[^\]]*?)?Rank (\d+)\]|\[rank(\d+)\]")
_TIMEOUT = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\((?:SeqNum=(\d+)|\.\.\.), OpType=(\w+)"
    r"(?:, NumelIn=(-?\d+), NumelOut=(-?\d+))?, Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds"
)
#: ``Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...) raised the following async
#: exception: NCCL error: <error> ..., NCCL version X`` (ProcessGroupNCCL 2.4+, the error a
#: collective's work caught after it was enqueued)
_ASYNC = re.compile(
    r"WorkNCCL\(SeqNum=(\d+), OpType=(\w+).*?\) raised the following async exception: "
    rf"NCCL error: ({_ERROR})[^,]*?(?:, NCCL version ([\d.]+))?(?:\s|$|\n)"
)
#: a framework's own prefix before the text it logs: Ray's ``(RayWorkerVllm pid=7602)``,
#: SkyPilot's ``(en-hi-spot, pid=18593)`` / ``(worker1, rank=1, pid=2345, ip=10.0.0.2)``,
#: vLLM's / Python logging's ``ERROR 04-07 00:57:46 ray_utils.py:45]``, torchrun's ``[rank0]:``
_PREFIX = re.compile(
    r"^(?:\((?:[\w.-]+,? )?(?:rank=\d+, )?pid=\d+(?:, ip=[\d.]+)?\)\s*)?"
    r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d [\w.]+:\d+\]\s*)?"
    r"(?:\[(?:default)?rank\d+\]:\s*)?"
)
#: the group a ProcessGroupNCCL line names: ``[PG 0 (default_pg) Rank 7]`` (2.4: its
#: name), ``[PG ID 0 PG GUID 0(default_pg) Rank 1]`` (2.5 on: the GUID is the group's
#: name, which Flight Recorder records; the ID counts groups per process, so that two
#: groups of one job can share one, as in NVIDIA/nccl #1610)
#: groups: the ID, the GUID (empty where the group has none: ``[PG ID 4 PG GUID  Rank 2]``),
#: the description
PG_PREFIX = re.compile(r"\[PG (?:ID )?(\S+?)(?: PG GUID (\S*?))?\s?(?:\(([^)]*)\))? Rank \d+\]")
#: the global rank torch's logging puts first (2.2 on): ``[rank3]:``; where a launcher
#: that wraps the stream put its own ``[rankN]:`` outside it (``[rank0]:[rank4]:``, a
#: node's first process), the innermost is torch's, the process's own
_GLOBAL_RANK = re.compile(r"(?:\[rank\d+\]:)*\[rank(\d+)\]:")
_STUCK = re.compile(
    r"ProcessGroupNCCL'\s?s watchdog got stuck for (\d+) seconds"
    # 2.3-2.4's heartbeat monitor, on the rank that saw it first (no time in it)
    r"|Heartbeat monitor timed out! Process will be terminated"
    # 2.5 on, the monitor's last word when the watchdog's heartbeat did not move
    # ("Terminating the process ...", or "... monitor thread is disabled, but would have
    # terminated the process ..."; after a collective timeout its reason is "collective
    # timeout or exception": ProcessGroupNCCL.cpp, HeartbeatMonitor::runLoop's exitReason)
    r"|the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang"
)
_STATUS = re.compile(
    r"(?:(?:detected by watchdog at work|Timeout at NCCL work): (\d+), last enqueued NCCL work: "
    r"(\d+), last completed NCCL work: (-?\d+)|failure detected by watchdog at work sequence "
    r"id: (\d+) PG status: last enqueued work: (\d+), last completed work: (-?\d+))"
)
#: a group's status when its rank was told to dump (tests/data/hang/WATCHDOG-FORMATS.md):
#: 2.4 ``Received a dump signal from this local rank and will start ...`` / ``Received a
#: global dump signal from rank N, ...``, 2.5.1 on ``Received a dump signal due to a
#: collective timeout from ...``, then ``Last enqueued NCCL work: E, last completed NCCL
#: work: C.``: no work number, the group's state when the signal came
_SIGNALLED = re.compile(
    r"Received a (?:global )?dump signal\b.*?Last enqueued NCCL work: (\d+), last completed "
    r"NCCL work: (-?\d+)"
)
_NCCL_ERROR_IN = re.compile(
    rf"NCCL error in: (\S+?):(\d+), ({_ERROR})[^,]*?(?:, NCCL version ([\d.]+))?(?:\s|$|\n)"
)
_ABORTED = re.compile(r"NCCL communicator was aborted|ncclCommAbort|communicator .*aborted")
_XLA = re.compile(
    rf"NCCL operation (\w+)\(.*?\) failed: ({_ERROR})"
    r"(?:.*?Last NCCL warning\(error\) log entry \(may be unrelated\) '(.*?)'\.)?"
)
_RUNTIME = re.compile(rf"(?:RuntimeError|NCCL_CHECK|Error): NCCL error: ({_ERROR})")
_CUPY = re.compile(rf"NcclError: NCCL_ERROR_\w+: ({_ERROR})")
_HOROVOD = re.compile(rf"\b(nccl\w+) failed: ({_ERROR})")
#: TensorRT-LLM's NCCLCHECK: ``Failed, NCCL error <file>:<line> '<error>'``
_TRTLLM = re.compile(rf"NCCL error (\S+):(\d+) '({_ERROR})[^']*'")


#: ``Stack trace of the failed collective: `` (ProcessGroupNCCL.cpp 2.6 on, WorkNCCL::
#: printTraceback, after the watchdog's status line), then one line per frame:
#: ``#<i> <function> from <file>:<line>`` (FlightRecorder's Entry::getTraceback)
_STACK = re.compile(r"Stack trace of the failed collective:\s*$")
_FRAME = re.compile(r"#\d+ (\S+) from (.+):(\d+)$")
_TORCH_API = ("torch/distributed/distributed_c10d.py", "torch/distributed/c10d_logger.py")


def _body(text: str) -> str:
    """``text`` without a framework's logging prefix (:data:`_PREFIX`)."""
    return text[_PREFIX.match(text).end() :]  # type: ignore[union-attr]


def _rank(text: str) -> int | None:
    found = _RANK.search(text)
    return int(found.group(1) or found.group(2)) if found else None


def read_torch(messages: Iterable[Logical]) -> list[TorchEvent]:
    """PyTorch ProcessGroupNCCL events, in input order.

    >>> from hpnet.artefacts.lines import logical_lines
    >>> line = ("[rank0]:[E1 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
    ...         "operation "
    ...         "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    ...         "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.")
    >>> [(e.what, e.seq, e.op) for e in read_torch(logical_lines("f", [(1, line)]))]
    [('timeout', 5, 'ALLREDUCE')]
    """
    stacks: list[TorchEvent] = []
    events = _read_events(_stacks_apart(messages, stacks))
    for stack in stacks:  # each after the events of the lines before it
        at = bisect.bisect(events, stack.quotes[0].line, key=lambda e: e.quotes[0].line)
        events.insert(at, stack)
    return events


def _stacks_apart(messages: Iterable[Logical], stacks: list[TorchEvent]) -> Iterator[Logical]:
    """``messages`` but a failed collective's stack, which goes to ``stacks``: torch's
    line saying one follows, and the frames after it."""
    stack: TorchEvent | None = None
    for message in messages:
        text = message.text
        if stack is not None:
            if _FRAME.match(frame := _body(text).strip()):
                stack = replace(
                    stack, frames=(*stack.frames, frame), quotes=(*stack.quotes, *message.parts)
                )
                continue
            stacks.append(stack)
            stack = None
        if _STACK.search(text):
            global_rank = _GLOBAL_RANK.search(text)
            stack = TorchEvent(
                what="stack",
                global_rank=int(global_rank.group(1)) if global_rank else None,
                quotes=message.parts,
            )
            continue
        yield message
    if stack is not None:
        stacks.append(stack)


def _read_events(messages: Iterable[Logical]) -> list[TorchEvent]:
    events: list[TorchEvent] = []
    pending: TorchEvent | None = None  # "NCCL error in" waiting for its "Last error:"
    want_last = False
    pending_end = 0  # the line of "Last error:"
    for message in messages:
        text = message.text
        if pending is not None and want_last:
            if message.parts[0].line == pending_end + 1:
                events.append(_with_last(pending, message, _body(text)))
            else:  # a blank line after "Last error:": NCCL gave none
                events.append(pending)
            pending, want_last = None, False
            if message.parts[0].line == pending_end + 1:
                continue
        if pending is not None:
            body = _body(text)
            if body.rstrip().endswith("Last error:"):
                want_last = True
                pending = _add_quote(pending, message)
                pending_end = message.parts[-1].line
                continue
            if body.startswith("nccl") and ":" in body:  # ncclRemoteError: A call failed...
                pending = _add_quote(pending, message)
                continue
            if found := re.search(r"Last error:\s*(\S.*)$", text):
                events.append(_with_last(pending, message, found.group(1)))
                pending = None
                continue
            events.append(pending)
            pending = None
        event, waits = _event(message)
        if event is None:
            continue
        if not waits:
            events.append(event)
        elif found := re.search(r"Last error:\s*(\S.*)$", text):  # on the same line
            events.append(_with_last(event, message, found.group(1), add=False))
        else:
            pending = event
    if pending is not None:
        events.append(pending)
    return events


def job_rank(event: TorchEvent) -> int | None:
    """The job's rank a line is of: torch's ``[rank3]:`` prefix; else the line's own
    ``[Rank N]``, which is the job's rank only in the default group (in another group it
    is the rank within that group: NeMo-RL #2140's ``[PG ID 6 ... Rank 6]`` was rank 107).
    ``hpnet verify`` and ``hpnet hang`` both take it (hang after a log file's own name)."""
    if event.global_rank is not None:
        return event.global_rank
    return event.rank if event.pg in (None, "0") else None


def called_from(rank: int | None, frames: Sequence[str]) -> str | None:
    """What ``hpnet verify`` and ``hpnet hang`` say of a rank's failed collective's stack.

    >>> called_from(5, ["#0 all_reduce from /t/torch/distributed/distributed_c10d.py:2806",
    ...                 "#2 sync_all from /m/megatron/core/async_utils.py:149"])
    "rank 5's failed collective was called from sync_all (/m/megatron/core/async_utils.py:149)"
    """
    where = caller(frames)
    if where is None:
        return None
    who = "the" if rank is None else f"rank {rank}'s"
    return f"{who} failed collective was called from {where}"


def caller(frames: Sequence[str]) -> str | None:
    """Where the program called the failed collective: the frames of a ``stack`` event
    past torch's collective API and its logging wrapper (``distributed_c10d.py``,
    ``c10d_logger.py``), the first two, paths from ``site-packages`` on.

    >>> caller(["#0 all_reduce from /u/site-packages/torch/distributed/distributed_c10d.py:2806",
    ...         "#1 wrapper from /u/site-packages/torch/distributed/c10d_logger.py:81",
    ...         "#2 sync from /u/dist-packages/megatron/core/async_utils.py:149"])
    'sync (megatron/core/async_utils.py:149)'
    """
    said = []
    for frame in frames:
        found = _FRAME.match(frame)
        if found is None or found.group(2).endswith(_TORCH_API):
            continue
        path = re.split(r"/(?:site|dist)-packages/", found.group(2))[-1]
        said.append(f"{found.group(1)} ({path}:{found.group(3)})")
    return ", called from ".join(said[:2]) or None


def _event(message: Logical) -> tuple[TorchEvent | None, bool]:
    """The event a message starts (with the group and the global rank its line names),
    and whether it waits for a ``Last error:``."""
    event, waits = _bare_event(message)
    if event is None:
        return None, False
    pg = PG_PREFIX.search(message.text)
    rank = _GLOBAL_RANK.search(message.text)
    return replace(
        event,
        pg=(pg.group(2) or pg.group(1)) if pg else None,
        global_rank=int(rank.group(1)) if rank else None,
    ), waits


def _numel(text: str | None) -> int | None:
    """A work's element count, None where torch never set it: ``numelIn_`` starts at -1
    (a ``size_t``: 18446744073709551615) and the works ``endCoalescing`` makes (a batch of
    sends and receives, an uneven list all_gather or reduce_scatter) keep it
    (ProcessGroupNCCL.cpp 2.3-2.8; the count is set by ``collective()``,
    ``collectiveCoalesced()`` and ``pointToPoint()`` only).

    >>> _numel("1024"), _numel("18446744073709551615"), _numel("-1"), _numel(None)
    (1024, None, None, None)
    """
    if text is None:
        return None
    value = int(text)
    return value if 0 <= value < (1 << 63) else None


def _bare_event(message: Logical) -> tuple[TorchEvent | None, bool]:
    text = message.text
    if found := _TIMEOUT.search(text):
        return TorchEvent(
            what="timeout",
            rank=_rank(text),
            seq=int(found.group(1)) if found.group(1) else None,  # "WorkNCCL(..., " pasted
            op=found.group(2),
            numel_in=_numel(found.group(3)),
            numel_out=_numel(found.group(4)),
            timeout_ms=int(found.group(5)),
            ran_ms=int(found.group(6)),
            quotes=message.parts,
        ), False
    if found := _STUCK.search(text):
        return TorchEvent(
            what="stuck",
            rank=_rank(text),
            stuck_seconds=int(found.group(1)) if found.group(1) else None,
            quotes=message.parts,
        ), False
    if found := _STATUS.search(text):
        groups = [g for g in found.groups() if g is not None]
        return TorchEvent(
            what="status",
            rank=_rank(text),
            seq=int(groups[0]),
            last_enqueued=int(groups[1]),
            last_completed=int(groups[2]),
            quotes=message.parts,
        ), False
    if found := _SIGNALLED.search(text):  # a group's status when told to dump: no work
        return TorchEvent(
            what="status",
            rank=_rank(text),
            last_enqueued=int(found.group(1)),
            last_completed=int(found.group(2)),
            quotes=message.parts,
        ), False
    # an async exception names its work; "NCCL error in:" does not (both: group 3 the
    # error, group 4 the NCCL version)
    work = _ASYNC.search(text + "\n")
    if found := work or _NCCL_ERROR_IN.search(text + "\n"):
        return TorchEvent(
            what="nccl-error",
            rank=_rank(text),
            seq=int(work.group(1)) if work else None,
            op=work.group(2) if work else None,
            error=found.group(3),
            nccl_version=found.group(4),
            quotes=message.parts,
        ), True
    return None, False


def _add_quote(event: TorchEvent, message: Logical) -> TorchEvent:
    from dataclasses import replace  # noqa: PLC0415

    return replace(event, quotes=(*event.quotes, *message.parts))


def _with_last(
    event: TorchEvent, message: Logical, text: str | None = None, *, add: bool = True
) -> TorchEvent:
    from dataclasses import replace  # noqa: PLC0415

    quotes = (*event.quotes, *message.parts) if add else event.quotes
    return replace(event, last_error=(text or message.text).strip(), quotes=quotes)


def read_wrapped(messages: Iterable[Logical]) -> list[WrappedError]:
    """NCCL errors as XLA and the Python wrappers report them (one per message).

    >>> from hpnet.artefacts.lines import logical_lines
    >>> text = "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO)"
    >>> [(w.via, w.error) for w in read_wrapped(logical_lines("f", [(1, text)]))]
    [('wrapper', 'unhandled cuda error')]
    """
    found_errors: list[WrappedError] = []
    call_hint: str | None = None
    via_hint = "wrapper"
    for message in messages:
        text = message.text
        if "sglang/" in text:  # SGLang's own copy of vLLM's pynccl_wrapper.py
            via_hint = "sglang"
        elif "vllm/" in text or ("pynccl_wrapper.py" in text and via_hint != "sglang"):
            via_hint = "vllm"
        elif "tensorrt_llm" in text:
            via_hint = "tensorrt-llm"
        if hint := re.search(r", in (nccl\w+)\b", text):
            call_hint = hint.group(1)
        if found := _XLA.search(text):
            found_errors.append(
                WrappedError(
                    via="xla",
                    call=found.group(1),
                    error=found.group(2),
                    last_error=found.group(3) or None,
                    quotes=message.parts,
                )
            )
        elif found := _RUNTIME.search(text):
            found_errors.append(
                WrappedError(
                    via=via_hint, call=call_hint, error=found.group(1), quotes=message.parts
                )
            )
        elif found := _CUPY.search(text):
            found_errors.append(
                WrappedError(via="cupy", call=call_hint, error=found.group(1), quotes=message.parts)
            )
        elif found := _TRTLLM.search(text):
            via = "tensorrt-llm" if "tensorrt_llm" in text else via_hint
            found_errors.append(
                WrappedError(via=via, call=call_hint, error=found.group(3), quotes=message.parts)
            )
        elif (found := _HOROVOD.search(text)) and "NCCL operation" not in text:
            found_errors.append(
                WrappedError(
                    via="wrapper", call=found.group(1), error=found.group(2), quotes=message.parts
                )
            )
    return found_errors
