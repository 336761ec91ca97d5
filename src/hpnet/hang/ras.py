"""What an NCCL RAS report (``ncclras``, read by :mod:`hpnet.artefacts.ras`) says of a
stuck job, as :class:`~hpnet.hang.judge.Cause`s; pure.

RAS names communicators by hash and ranks within them, not process groups: a cause
from RAS is of "communicator <hash>". Its rules (NCCL's RAS docs, src/ras/):

* a dead process (unreachable over RAS's network) and the ranks an INCOMPLETE
  communicator is missing: **gone** where RAS counts a process dead, else **silent**;
* a MISMATCH of operation counts: the ranks at the lower count never launched the next
  operation — **never-entered**. RAS lists only the outlier ranks, which may be the ones
  ahead (NVIDIA/nccl#1911): the ranks behind are then named by their number only. One
  query is a snapshot: counts that move on the next query are a busy job, not a hang.
"""

from __future__ import annotations

from collections.abc import Sequence

from hpnet.artefacts.model import RasComm, RasOpGroup, RasReport
from hpnet.hang.model import Cause

__all__ = ["ras_causes"]

SNAPSHOT = (
    "one RAS query is a snapshot: query again (ncclras); counts that still differ and do "
    "not move are a hang"
)


def _ranks(ranks: Sequence[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _quotes(report: RasReport, comm: RasComm) -> tuple[str, ...]:
    """The report's lines about ``comm``: its ``#g-c (hash)`` line and those under it."""
    out: list[str] = []
    inside = False
    for quote in report.evidence:
        text = quote.text.strip()
        if text.startswith("#") and "(" in text:
            inside = f"({comm.hash})" in text
        if inside:
            out.append(f"{quote.source}:{quote.line}: {text}")
    return tuple(out[:6])


def _missing(report: RasReport, comm: RasComm) -> Cause | None:
    if not comm.missing_ranks:
        return None
    dead = report.dead_processes > 0
    ranks = tuple(sorted(comm.missing_ranks))
    said = "dead (unreachable over RAS's network)" if dead else "not answering RAS"
    return Cause(
        kind="gone" if dead else "silent",
        pg=f"comm {comm.hash}",
        pg_desc="RAS",
        seq=0,
        collective="",
        ranks=ranks,
        waiting=(),
        evidence=(*report.job_errors[:2], *_quotes(report, comm)),
        fix=f"{_ranks(ranks)} of communicator {comm.hash}: its process is {said}; look at it "
        "on its host (dmesg, nvidia-smi, py-spy dump) and replace the node if it is gone",
        summary=f"{_ranks(ranks)} of communicator {comm.hash} {'is' if len(ranks) == 1 else 'are'} "
        f"{said}: the communicator is {comm.errors}",
    )


def _behind(report: RasReport, comm: RasComm) -> Cause | None:
    by_op: dict[str, list[RasOpGroup]] = {}
    for group in comm.op_groups:
        by_op.setdefault(group.op, []).append(group)
    for op, groups in by_op.items():
        if len(groups) < 2:
            continue
        low = min(groups, key=lambda g: g.launched)
        high = max(groups, key=lambda g: g.launched)
        named = low.ranks
        who = _ranks(named) if named else f"{low.num_ranks} ranks (RAS lists the ranks ahead only)"
        ahead = f"{_ranks(high.ranks)}" if high.ranks else f"{high.num_ranks} ranks"
        return Cause(
            kind="never-entered",
            pg=f"comm {comm.hash}",
            pg_desc="RAS",
            seq=low.launched + 1,
            collective=op,
            ranks=tuple(named),
            waiting=tuple(high.ranks),
            evidence=(*_quotes(report, comm), SNAPSHOT),
            fix=f"the ranks at {op} {low.launched} are stuck before the next one: dump their "
            "Python stacks on their hosts (py-spy dump --pid PID)",
            summary=f"{who} launched {op} operations up to {low.launched}, {ahead} up to "
            f"{high.launched}, in communicator {comm.hash}",
        )
    return None


def ras_causes(reports: Sequence[RasReport]) -> list[Cause]:
    """Every cause the RAS reports show: missing or dead ranks first, then counts."""
    causes: list[Cause] = []
    for report in reports:
        for comm in report.comms:
            causes += [c for c in (_missing(report, comm), _behind(report, comm)) if c]
    return causes
