"""ncclras reports -> :class:`~hpnet.artefacts.model.RasReport`; pure functions of text.

The text layout is NCCL's ``src/ras/client_support.cc`` (v2.24.3-1 .. v2.30.7-1):
``rasClientRunInit`` prints ``NCCL version ... compiled with CUDA``, ``Job summary``
and its table; ``rasClientRunComms`` prints the table ``Group Comms Nodes Ranks Ranks
Ranks Status Errors`` (status NOCOMM/UNKNOWN, INIT, RUNNING, FINALIZE, ABORT; errors
OK, MISMATCH, ERROR, INCOMPLETE and their comma joins), then ``Errors`` (INCOMPLETE,
DEAD, ``#g-c (hash) ERROR``) and ``Warnings`` (TIMEOUT, ``#g-c (hash) MISMATCH`` with
``N ranks have launched up to operation K`` per op since 2.26, one
``collective operation counts`` before). RAS lists the ranks of the *outlier* groups
only (``rasCountIsOutlier``), which may be ahead, not behind (NVIDIA/nccl#1911).
The JSON layout (``SET FORMAT json``, 2.28.7+) is ``rasClientJson*`` in the same file.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence

from hpnet.artefacts.model import Quote, RasComm, RasOpGroup, RasReport

__all__ = ["looks_like_ras_json", "parse_ras_json", "parse_ras_text"]

_VERSION = re.compile(r"^NCCL version (\d+\.\d+\.\d+)\S* compiled with CUDA")
_SUMMARY = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
_GROUP_ROW = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+([\d-]+)\s+(\d+)\s+(\d+)\s+(NOCOMM|UNKNOWN|INIT|RUNNING|FINALIZE|ABORT)"
    r"\s+([A-Z,]+)\s*$"
)
_COMM = re.compile(r"^#(\d+)-(\d+) \(([0-9a-f]+)\) (MISMATCH|ERROR|INCOMPLETE)\s*$")
_OPS = re.compile(r"^\s+Communicator ranks have different (\S+) operation counts")
_LAUNCHED = re.compile(
    r"^\s+(\d+) ranks have (?:launched up to operation (\d+)|not launched any operations)"
)
_ONE_LAUNCHED = re.compile(
    r"^\s+Rank (\d+) has (?:launched up to operation (\d+)|not launched any operations)"
    r"(?: -- GPU \S+(?: \(NVML \d+\))? managed by process (\d+) on node (\S+))?"
)
_RANK = re.compile(
    r"^\s+Rank (\d+) -- (?:GPU \S+(?: \(NVML \d+\))? managed by process (\d+) on node (\S+))?"
)
#: ``The missing rank: 21`` / ``The missing ranks: 3, 7`` under an INCOMPLETE
#: communicator (NCCL's RAS docs, "Sample Output")
_MISSING_LIST = re.compile(r"^\s+The missing ranks?: ([\d, ]+)\s*$")
_DEAD = re.compile(r"^\s+(\d+) job process(?:es are| is) considered dead")
_MISSING = re.compile(r"^\s+Missing communicator data from (\d+) (job process|rank)")
_ASYNC = re.compile(
    r"^\s+(?:Initialization|Asynchronous) errors? on \d+ ranks?|^\s+\d+ ranks reported "
)


@dataclasses.dataclass(slots=True)
class _Open:
    """The communicator whose ``#g-c (hash)`` section is being read."""

    hash: str
    errors: set[str] = dataclasses.field(default_factory=set)
    ops: list[RasOpGroup] = dataclasses.field(default_factory=list)
    err: list[str] = dataclasses.field(default_factory=list)
    missing: list[int] = dataclasses.field(default_factory=list)


def parse_ras_text(  # noqa: C901, PLR0915 - one pass over the report's sections
    source: str, lines: Sequence[tuple[int, str]]
) -> RasReport:
    """Read an ncclras text report (``lines``: ``(number, text)``).

    >>> r = parse_ras_text("f", [(1, "NCCL version 2.26.2 compiled with CUDA 12.6")])
    >>> r.nccl_version
    '2.26.2'
    """
    version = None
    summary: tuple[int, int, int] | None = None
    groups: list[tuple[str, str, int, int]] = []
    comms: list[RasComm] = []
    job_errors: list[str] = []
    dead = 0
    evidence: list[Quote] = []
    current: _Open | None = None
    op = "collective"
    after_summary_header = False

    def close() -> None:
        nonlocal current
        if current is not None:
            comms.append(_comm(current))
        current = None

    for number, text in lines:
        quote = Quote(source=source, line=number, text=text)
        if (found := _VERSION.match(text)) and version is None:
            version = found.group(1)
            evidence.append(quote)
            continue
        if text.startswith("(total)") and "per node" in text:
            after_summary_header = True
            continue
        if after_summary_header:
            after_summary_header = False
            if found := _SUMMARY.match(text):
                nodes, _, _, processes, gpus = (int(g) for g in found.groups())
                summary = (nodes, processes, gpus)
            continue
        if found := _GROUP_ROW.match(text):
            groups.append(
                (found.group(7), found.group(8), int(found.group(2)), int(found.group(5)))
            )
            evidence.append(quote)
            continue
        if found := _DEAD.match(text):
            dead = int(found.group(1))
            job_errors.append(text.strip())
            evidence.append(quote)
            continue
        if (found := _MISSING.match(text)) and found.group(2) == "job process":
            job_errors.append(text.strip())
            evidence.append(quote)
            continue
        if found := _COMM.match(text):
            hash_ = found.group(3)
            if current is None or current.hash != hash_:
                close()
                current = _Open(hash=hash_)
            current.errors.add(found.group(4))
            evidence.append(quote)
            continue
        if current is None:
            continue
        if found := _OPS.match(text):
            op = found.group(1)
            evidence.append(quote)
        elif found := _LAUNCHED.match(text):
            ops = current.ops
            ops.append(
                RasOpGroup(op=op, num_ranks=int(found.group(1)), launched=int(found.group(2) or 0))
            )
            evidence.append(quote)
        elif found := _ONE_LAUNCHED.match(text):
            ops = current.ops
            where = (f"{found.group(4)}:{found.group(3)}",) if found.group(3) else ()
            ops.append(
                RasOpGroup(
                    op=op,
                    num_ranks=1,
                    launched=int(found.group(2) or 0),
                    ranks=(int(found.group(1)),),
                    where=where,
                )
            )
            evidence.append(quote)
        elif found := _RANK.match(text):
            ops = current.ops
            rank = int(found.group(1))
            where = (f"{found.group(3)}:{found.group(2)}",) if found.group(2) else ()
            if "INCOMPLETE" in current.errors and not ops:
                missing = current.missing
                missing.append(rank)
            elif ops:  # the ranks RAS lists under the last count it printed
                last = ops[-1]
                ops[-1] = RasOpGroup(
                    op=last.op,
                    num_ranks=last.num_ranks,
                    launched=last.launched,
                    ranks=(*last.ranks, rank),
                    where=(*last.where, *where),
                )
            evidence.append(quote)
        elif found := _MISSING_LIST.match(text):
            missing = current.missing
            missing.extend(int(r) for r in found.group(1).replace(",", " ").split())
            evidence.append(quote)
        elif _ASYNC.match(text):
            err = current.err
            err.append(text.strip())
            evidence.append(quote)
    close()
    return RasReport(
        format="text",
        nccl_version=version,
        num_nodes=summary[0] if summary else None,
        num_processes=summary[1] if summary else None,
        num_gpus=summary[2] if summary else None,
        groups=tuple(groups),
        comms=tuple(comms),
        job_errors=tuple(job_errors),
        dead_processes=dead,
        evidence=tuple(evidence),
    )


def _comm(data: _Open) -> RasComm:
    return RasComm(
        hash=data.hash,
        errors=",".join(sorted(data.errors)),
        op_groups=tuple(data.ops),
        error_lines=tuple(data.err),
        missing_ranks=tuple(data.missing),
    )


def looks_like_ras_json(text: str) -> bool:
    """The start of RAS's JSON document (``rasClientJsonStart``: ``nccl_version`` first)."""
    head = text.lstrip()[:200]
    return head.startswith("{") and '"nccl_version"' in head


def parse_ras_json(source: str, text: str) -> RasReport:
    """Read RAS's JSON status (2.28.7+); raises ValueError when it is not that document.

    Per rank: ``status`` {init_state, async_error, finalize_called, destroy_flag,
    abort_flag} and ``collective_counts`` {op: count}; ``missing_ranks`` with
    ``unresponsive`` / ``considered_dead``.
    """
    document = json.loads(text)
    if not isinstance(document, dict) or "communicators" not in document:
        raise ValueError("not an ncclras JSON report (no communicators)")
    comms = []
    groups = []
    for entry in document.get("communicators") or []:
        ranks = entry.get("ranks") or []
        errors = set()
        statuses = set()
        err_lines = []
        for rank in ranks:
            status = rank.get("status") or {}
            if status.get("abort_flag"):
                statuses.add("ABORT")
            elif status.get("finalize_called") or status.get("destroy_flag"):
                statuses.add("FINALIZE")
            elif status.get("init_state", 0) == 0:
                statuses.add("RUNNING")
            else:
                statuses.add("INIT")
            if status.get("async_error", 0) not in (0, 7) or status.get("init_state", 0) not in (
                0,
                7,
            ):
                errors.add("ERROR")
                err_lines.append(
                    f"rank {rank.get('rank')} on {rank.get('host')} pid {rank.get('pid')}: "
                    f"init_state {status.get('init_state')}, "
                    f"async_error {status.get('async_error')}"
                )
        op_groups: list[RasOpGroup] = []
        for op in sorted({k for r in ranks for k in (r.get("collective_counts") or {})}):
            counts: dict[int, list[int]] = {}
            for rank in ranks:
                counts.setdefault(int((rank.get("collective_counts") or {}).get(op, 0)), []).append(
                    int(rank.get("rank", -1))
                )
            if len(counts) > 1:
                errors.add("MISMATCH")
                for launched, members in sorted(counts.items(), key=lambda kv: -len(kv[1])):
                    op_groups.append(
                        RasOpGroup(
                            op=op, num_ranks=len(members), launched=launched, ranks=tuple(members)
                        )
                    )
        missing = entry.get("missing_ranks") or []
        if missing:
            errors.add("INCOMPLETE")
        if len(statuses) > 1:
            errors.add("MISMATCH")
        status_text = (
            max(statuses, key=["INIT", "RUNNING", "FINALIZE", "ABORT"].index)
            if statuses
            else "NOCOMM"
        )
        comms.append(
            RasComm(
                hash=str(entry.get("hash", "")),
                nranks=entry.get("size"),
                status=status_text,
                errors=",".join(sorted(errors)) or "OK",
                op_groups=tuple(op_groups),
                error_lines=tuple(err_lines),
                missing_ranks=tuple(int(m.get("rank", -1)) for m in missing),
                dead_ranks=tuple(
                    int(m.get("rank", -1))
                    for m in missing
                    if (m.get("status") or {}).get("considered_dead")
                ),
            )
        )
        groups.append(
            (status_text, ",".join(sorted(errors)) or "OK", 1, int(entry.get("size") or 0))
        )
    version = document.get("nccl_version")
    return RasReport(
        format="json",
        nccl_version=str(version).split("+", 1)[0] if version else None,
        groups=tuple(groups),
        comms=tuple(comms),
        dead_processes=sum(len(c.dead_ranks) for c in comms),
        job_errors=tuple(
            f"{len(c.dead_ranks)} rank(s) of {c.hash} considered dead"
            for c in comms
            if c.dead_ranks
        ),
        evidence=(Quote(source=source, line=1, text=text.lstrip().splitlines()[0]),),
    )
