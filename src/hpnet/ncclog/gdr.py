"""Conclusions about GPUDirect RDMA: inter-node RDMA connections that stage through host
memory, with the reason the log gives (the GPU-NIC distance against
NCCL_NET_GDR_LEVEL, no peer-memory module, reads off, the environment).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.conclusions import transport_line
from hpnet.ncclog.findings import quotes
from hpnet.ncclog.model import LogLine, NcclLog
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.ncclog.report import ProcessRow

__all__ = ["gdr_findings", "path_name"]

#: NCCL's path types (the ``distance`` of GPU Direct RDMA lines and NCCL_NET_GDR_LEVEL's
#: numbers) per release: include/topo.h @2.4.2, include/graph.h @2.4.6-2.5.7 (enum
#: ncclPathDist), graph/topo.h @2.6.4-2.29, include/graph.h @2.30
_PATH_TYPES: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[str, ...]], ...] = (
    ((2, 4, 0), (2, 4, 2), ("PIX", "PXB", "PHB", "SOC")),
    ((2, 4, 6), (2, 5, 99), ("PIX", "PXB", "PHB", "NODE", "SYS")),
    ((2, 6, 0), (2, 7, 99), ("LOC", "NVL", "PIX", "PXB", "PHB", "SYS", "NET")),
    ((2, 8, 0), (2, 11, 99), ("LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS")),
    ((2, 12, 0), (2, 25, 99), ("LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET")),
    ((2, 26, 0), (2, 26, 99), ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "PHB", "SYS")),
    ((2, 27, 3), (2, 27, 3),
     ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "P2C", "PHB", "SYS")),
    ((2, 27, 5), (2, 99, 99),
     ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")),
)  # fmt: skip


def path_name(number: int, version: str | None) -> str | None:
    """The name of NCCL path type ``number`` in release ``version`` (None when the
    release is not known: the numbering changed five times).

    >>> path_name(4, "2.18.3"), path_name(4, "2.27.5"), path_name(4, None)
    ('PXB', 'PIX', None)
    """
    if not version:
        return None
    try:
        release = tuple(int(part) for part in version.split(".")[:3])
    except ValueError:
        return None
    for low, high, names in _PATH_TYPES:
        if low <= release <= high:
            return names[number] if 0 <= number < len(names) else None
    return None


def gdr_findings(log: NcclLog, rows: Sequence[ProcessRow]) -> list[Finding]:
    """GPUDirect RDMA not (fully) used by inter-node RDMA connections, with the reason
    the log gives: the GPU-NIC distance against NCCL_NET_GDR_LEVEL (``distance 4 > 3``),
    no peer-memory module for the HCA (``(no module)`` / ``GPU Direct RDMA Disabled for
    HCA``), GPUDirect reads off (``read 0``), or the environment."""
    by_key = {p.key: p for p in log.processes}
    off = [r for r in rows if r.gdr in ("no", "partial", "receive only", "send only")]
    if not off:
        return []
    processes = [by_key[r.process] for r in off if r.process in by_key]
    distance = [
        (p, d) for p in processes for d in p.gdr if not d.enabled and d.distance is not None
    ]
    module = [(p, d) for p in processes for d in p.gdr if not d.enabled and d.distance is None]
    no_read = [(p, d) for p in processes for d in p.gdr if d.enabled and d.read == 0]
    env = [
        (p, name, value)
        for p in processes
        for name, value in p.env
        if name in ("NCCL_NET_GDR_LEVEL", "NCCL_IB_GDR_LEVEL", "NCCL_NET_GDR_READ")
    ]
    causes = []
    conclusions = [
        f"process {r.process}: {', '.join(r.inter_node)} (GPUDirect RDMA {r.gdr})" for r in off[:3]
    ]
    witnesses: list[LogLine | None] = [
        transport_line(p, "NET/") or transport_line(p, "COLLNET") for p in processes[:2]
    ]
    fix = []
    if distance:
        process, decision = distance[0]
        version = process.nccl_version
        assert decision.distance is not None and decision.level is not None  # noqa: S101
        far, level = path_name(decision.distance, version), path_name(decision.level, version)
        named = f" ({far} > {level})" if far and level else ""
        causes.append(
            f"the NIC is too far from the GPU: NCCL measured path type {decision.distance} "
            f"against NCCL_NET_GDR_LEVEL {decision.level}{named}, so it stages through host "
            "memory (the GPU and NIC are not under a common PCIe switch)"
        )
        fix.append(
            f"raise NCCL_NET_GDR_LEVEL to {far or 'the path type printed'} if that PCIe path "
            "supports peer-to-peer (check `nvidia-smi topo -m`), or use the NIC local to each GPU"
        )
        crossed = sorted({p.key for p, _ in distance if ("NCCL_CROSS_NIC", "1") in p.env})
        if crossed:  # NCCL's default is 2: the same NIC where it can, another where better
            causes.append(
                "NCCL_CROSS_NIC=1 is set: NCCL may build rings that leave a node on one NIC "
                "and enter the next on another, so a GPU can be given a NIC that is not its "
                "own rail's, the far NIC above"
            )
            fix.append("on a rail-optimized fabric unset NCCL_CROSS_NIC (or set 0)")
            witnesses += [by_key[k].line("env:NCCL_CROSS_NIC") for k in crossed[:1]]
        witnesses += [d.line for _, d in distance[:2]]
    if module:
        reasons = sorted({d.reason or "GPU Direct RDMA Disabled for HCA" for _, d in module})
        causes.append(
            "NCCL found no GPUDirect support for the NIC (" + "; ".join(reasons) + "): "
            "neither nvidia_peermem (nv_peer_mem) is loaded nor dma-buf is available"
        )
        fix.append(
            "modprobe nvidia_peermem, or use the open GPU kernel module on Linux >= 5.12 "
            "(dma-buf); `hpnet doctor` (gpudirect.*) checks both"
        )
        witnesses += [d.line for _, d in module[:2]]
    if no_read:
        causes.append(
            "GPUDirect reads are off (read 0): the NIC writes into GPU memory but sends from "
            "host memory (NCCL's default on some PCIe topologies, or NCCL_NET_GDR_READ=0)"
        )
        witnesses += [d.line for _, d in no_read[:1]]
    if env:
        causes.append("the environment sets " + ", ".join(sorted({f"{n}={v}" for _, n, v in env})))
        witnesses += [p.line(f"env:{n}") for p, n, _ in env[:2]]
    if not causes:
        causes.append(
            "the log does not say why (NCCL prints its GPUDirect decisions with "
            "NCCL_DEBUG_SUBSYS=NET): usually no nvidia_peermem / dma-buf for the NIC, or "
            "the NIC too far from the GPU for NCCL_NET_GDR_LEVEL"
        )
        fix.append(
            "rerun with NCCL_DEBUG_SUBSYS=INIT,NET to see the reason; `hpnet doctor` "
            "(gpudirect.*) checks the module, ACS and the GPU-NIC distance"
        )
    return [
        Finding(
            id="gdr-off",
            severity=Severity.WARNING,
            title=f"GPUDirect RDMA not (fully) used on {len(off)} process(es): network "
            "traffic is staged through host memory",
            cause="; ".join(causes),
            fix="; ".join(fix) if fix else "see the cause",
            evidence=quotes(witnesses),
            conclusions=tuple(conclusions),
            count=len(off),
            processes=tuple(r.process for r in off),
        )
    ]
