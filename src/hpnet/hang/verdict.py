"""The verdict on everything a stuck job left: :func:`hpnet.hang.judge.judge` over the
dumps, error lines and RAS reports :func:`hpnet.hang.collect.collect` found, joined with
NCCL's logs (:mod:`hpnet.hang.placement`): where each rank named ran, and for a
collective stuck on every rank, the links its NCCL log shows."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hpnet.hang.collect import Evidence
from hpnet.hang.endings import with_exits
from hpnet.hang.judge import judge
from hpnet.hang.model import Cause, HangReport, ranks_text
from hpnet.hang.placement import Place, logged_world, places
from hpnet.hang.stacks import with_stacks

__all__ = ["judge_evidence"]

#: ranks whose place (host, GPU, NIC) the report shows
MAX_PLACES = 16


def judge_evidence(evidence: Evidence, *, world: int | None = None) -> HangReport:
    """:func:`judge` over everything :func:`hpnet.hang.collect.collect` found, with
    where the ranks it names ran (NCCL's logs)."""
    report = judge(
        evidence.dumps,
        evidence.errors,
        log_ranks=evidence.log_ranks,
        world=world,
        unreadable=evidence.unreadable,
        ras=evidence.ras,
        analyses=evidence.analyses,
        desync=evidence.desync,
        logged=logged_world(evidence.nccl),
    )
    report = with_exits(with_stacks(report, evidence.stacks), evidence.exits)
    if not evidence.nccl:
        return report
    where = places(evidence.nccl, world or (len(report.ranks) or None))
    named = [r for c in report.causes for r in (*c.ranks, *c.waiting)]
    shown = [where[r] for r in dict.fromkeys(named) if r in where][:MAX_PLACES]
    causes = tuple(_with_links(c, where) for c in report.causes)
    return dataclasses.replace(
        report, causes=causes, places=tuple(shown), nccl_logs=len(evidence.nccl)
    )


def _with_links(cause: Cause, where: Mapping[int, Place]) -> Cause:
    """A collective stuck on every rank: its fix names the links the ranks' NCCL logs
    show them connected by (a socket fallback where RDMA was meant is a finding)."""
    if cause.kind != "stuck-in-collective":
        return cause
    seen = [where[r] for r in cause.ranks if r in where]
    links = sorted({t for p in seen for t in p.transports if t.startswith("NET/")})
    if not links:
        return cause
    hosts = sorted({p.host_id or p.host or "?" for p in seen})
    nics = sorted({n for p in seen for n in p.nics})
    return dataclasses.replace(
        cause,
        fix=f"the collective did not finish on {ranks_text(cause.ranks)}: their NCCL logs "
        f"connect them over {', '.join(links)} ({', '.join(nics) or 'NICs not listed'}; "
        f"hosts {', '.join(hosts)}): that network path or a GPU; run `hpnet verify` on "
        "their NCCL logs and `hpnet isolate` on their nodes",
    )
