"""The error lines a stuck job's ranks print: PyTorch's ProcessGroupNCCL watchdog and
gloo's timeouts, each tied to its rank, group and collective where the line says so.

Formats (tests/data/hang/WATCHDOG-FORMATS.md cites the code of each release):

* the global rank: ``[rank3]:`` before torch's log prefix (torch >= 2.2), else the file
  name (``rank3.log``);
* the group: ``[PG 0 (default_pg) Rank 7]`` (2.4) or ``[PG ID 0 PG GUID 0(default_pg)
  Rank 1]`` (2.5 and later);
* the collective: ``Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808,
  OpType=ALLREDUCE, NumelIn=..., NumelOut=..., Timeout(ms)=600000) ran for 600012
  milliseconds before timing out.``;
* the group's progress: ``Timeout at NCCL work: 7753, last enqueued NCCL work: 7755,
  last completed NCCL work: 7752.`` (2.3-2.5), ``Exception (either an error or timeout)
  detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL
  work: 807.`` (2.4-2.5) and ``failure detected by watchdog at work sequence id: N PG
  status: last enqueued work: E, last completed work: C`` (2.6 on);
* a peer gone: gloo's ``Connection closed by peer [addr]:port``, NCCL's ``remote
  process exited or there was a network error``, ``Connection reset by peer``;
* gloo's own timeout: ``Timed out waiting 3000ms for recv operation to complete``;
* a mismatch a rank saw: gloo's ``Received data size doesn't match expected size. Is
  there a distributed collective mismatch in your code?`` (before it aborts), torch's
  ``Detected mismatch between collectives`` (TORCH_DISTRIBUTED_DEBUG=DETAIL).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from hpnet.render.text import escape_controls

__all__ = ["RankError", "read_errors"]

_RANK = re.compile(r"\[rank(\d+)\]:")
_FILE_RANK = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)
_PG = re.compile(r"\[PG (?:ID )?(\S+)(?: PG GUID (\S+?))?\s?(?:\(([^)]*)\))? Rank (\d+)\]")
_WORK = re.compile(r"WorkNCCL\(SeqNum=(\d+), OpType=(\w+)")
_PROGRESS = re.compile(
    r"(?:Timeout at NCCL work|failure detected by watchdog at work sequence id"
    r"|detected by watchdog at work): (\d+),?"
    r"(?: PG status:)? last enqueued (?:NCCL )?work: (\d+), last completed (?:NCCL )?work: (-?\d+)"
)
_TIMEOUT = re.compile(
    r"Watchdog caught collective operation timeout|Timed out waiting \d+ ?ms for \w+ operation"
    r"|Timeout at NCCL work|timed out in (?:a )?collective"
)
_MISMATCH = re.compile(
    r"collective mismatch|Detected mismatch between collectives|doesn't match expected size"
)
_CLOSED = re.compile(
    r"Connection closed by peer|remote process exited or there was a network error"
    r"|Connection reset by peer|Socket Timeout|unhandled system error"
)
MAX_LOG_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RankError:
    rank: int | None
    where: str  # file:line
    text: str  # the line, control characters escaped, at most 300 characters
    timeout: bool
    peer_closed: bool
    mismatch: bool = False  # the line says the ranks' collectives did not match
    pg: str | None = None
    seq: int | None = None
    op: str | None = None
    last_enqueued: int | None = None
    last_completed: int | None = None


def _line_error(line: str, where: str, file_rank: int | None) -> RankError | None:
    timeout = bool(_TIMEOUT.search(line))
    closed = bool(_CLOSED.search(line))
    work = _WORK.search(line)
    progress = _PROGRESS.search(line)
    mismatch = bool(_MISMATCH.search(line))
    if not (timeout or closed or work or progress or mismatch):
        return None
    rank = _RANK.search(line)
    pg = _PG.search(line)
    return RankError(
        rank=int(rank.group(1)) if rank else file_rank,
        where=where,
        text=escape_controls(line.strip())[:300],
        timeout=timeout,
        peer_closed=closed,
        mismatch=mismatch,
        pg=pg.group(1) if pg else None,
        seq=int(work.group(1)) if work else (int(progress.group(1)) if progress else None),
        op=work.group(2).lower() if work else None,
        last_enqueued=int(progress.group(2)) if progress else None,
        last_completed=int(progress.group(3)) if progress else None,
    )


def file_rank(path: str) -> int | None:
    """The rank a log's file name names (``rank3.log``, ``rank_3.stderr``), if any.

    >>> file_rank("/job/rank3.log"), file_rank("node1-rank_12.stderr"), file_rank("job.log")
    (3, 12, None)
    """
    found = _FILE_RANK.search(Path(path).name)
    return int(found.group(1)) if found else None


def read_errors(path: str, raw: bytes) -> list[RankError]:
    """Every error line of one rank's log (or a job's combined log)."""
    named = file_rank(path)
    out = []
    for number, line in enumerate(raw[:MAX_LOG_BYTES].decode("utf-8", "replace").splitlines(), 1):
        error = _line_error(line, f"{path}:{number}", named)
        if error is not None:
            out.append(error)
    return out
