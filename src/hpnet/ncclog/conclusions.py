"""Findings of ``hpnet verify``, part two: conclusions no single line states.

One module per concern, each a pure function over the parsed log and the per-process
rows :mod:`hpnet.ncclog.report` computed:

- :mod:`hpnet.ncclog.network` — what carried traffic between hosts (sockets, and why),
  the NCCL_IB_HCA / NCCL_SOCKET_IFNAME lists, device lists that hold host-local bridges;
- :mod:`hpnet.ncclog.gdr` — GPUDirect RDMA off, and the reason the log gives;
- :mod:`hpnet.ncclog.environment` — what the environment NCCL echoes did
  (``NCCL_X set by environment to Y``), NVLink SHARP asked for and not set up;
- this module — NET between GPUs of one host, a host whose GPUs meet only through SHM,
  and the helpers the others share.

Each finding quotes the lines it stands on (``file:line: text``) and words what it
concludes from them as a conclusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.findings import MAX_EVIDENCE, quotes
from hpnet.ncclog.model import LogLine, NcclLog, ProcessLog
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.ncclog.report import ProcessRow

__all__ = [
    "env_of", "placement_findings", "shm_only_findings", "switched_on", "transport_line",
]  # fmt: skip


def env_of(process: ProcessLog) -> dict[str, str]:
    """The variables the process echoed (``NCCL_X set by environment to Y``)."""
    return dict(process.env)


def switched_on(value: str | None) -> bool:
    """An integer switch NCCL reads as on (anything but 0 and empty)."""
    return value is not None and value.strip() not in ("", "0")


def transport_line(process: ProcessLog, prefix: str) -> LogLine | None:
    """The first connection line of the process whose transport starts with ``prefix``."""
    for key, line in process.lines_of("transport:"):
        if key[len("transport:") :].startswith(prefix):
            return line
    return None


# ---------------------------------------------------------------- placement


def placement_findings(
    log: NcclLog,
    *,
    same_host_net: Sequence[tuple[ProcessLog, str]],
    split_by_hostid: Sequence[tuple[ProcessLog, str]],
    indistinct: Sequence[tuple[ProcessLog, str]],
    shared: Sequence[tuple[str, Sequence[ProcessLog]]] = (),
) -> list[Finding]:
    """NET between ranks of one machine: forced (environment), chosen by NCCL's topology,
    or on purpose (NCCL_HOSTID made several NCCL hosts); and NCCL counting more hosts than
    the log's names tell apart. Each entry: (process, the conclusion)."""
    findings = []
    if shared:
        findings.append(
            Finding(
                id="ranks-share-a-gpu",
                severity=Severity.ERROR,
                title="ranks of one communicator run on the same GPU",
                cause="the launcher started more ranks on a host than it has GPUs, or ranks "
                "kept the same device (LOCAL_RANK not used to pick it, CUDA_VISIBLE_DEVICES "
                "the same for all): NCCL refuses a communicator with two ranks on one GPU "
                "('Duplicate GPU detected')",
                fix="one rank per GPU: torch.cuda.set_device(LOCAL_RANK) before init, and "
                "--nproc-per-node equal to the GPUs of a node",
                # each process's first Init START line (else its Abort): the busId it said
                evidence=quotes(
                    p.line("comm-start") or p.line("abort") for _, ps in shared for p in ps
                ),
                conclusions=tuple(text for text, _ in shared[:MAX_EVIDENCE]),
                count=len(shared),
            )
        )
    if same_host_net:
        processes = list({p.key: p for p, _ in same_host_net}.values())
        forcing = sorted(
            {
                f"{name}={value}"
                for p in processes
                for name, value in p.env
                if (name in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE") and switched_on(value))
                or (name == "NCCL_NET")
                or (name == "NCCL_P2P_LEVEL" and value.upper() in ("LOC", "0"))
            }
        )
        witnesses: list[LogLine | None] = [transport_line(p, "NET/") for p in processes[:3]]
        if forcing:
            witnesses = [
                p.line(f"env:{item.split('=', 1)[0]}") for p in processes[:1] for item in forcing
            ] + witnesses
            cause = (
                f"{', '.join(forcing)} in the environment: P2P / SHM between GPUs of one "
                "host are off, so their traffic goes through the NIC or TCP"
            )
            severity = "warning"
            fix = "unset " + ", ".join(sorted({f.split("=", 1)[0] for f in forcing}))
        else:
            cause = (
                "the log shows no setting that forces it, so either NCCL's topology chose it "
                "(ncclTopoCheckNet, 2.12+: both GPUs reach a NIC through a PCIe switch faster "
                "than they reach each other, e.g. no NVLink and no common switch; "
                "NCCL_NET_DISABLE_INTRA=1 turns this off), or P2P / SHM were unusable: "
                "NCCL_P2P_DISABLE / NCCL_SHM_DISABLE / NCCL_NET set without the log echoing "
                "them (NCCL_DEBUG_SUBSYS=ENV shows them), or ranks in containers without a "
                "shared IPC namespace or /dev/shm, or NCCL_HOSTID made NCCL hosts of one "
                "machine (a test of the network path; ENV shows it too)"
            )
            severity = "warning"
            fix = (
                "if the GPUs have NVLink or share a PCIe switch this costs bandwidth: check the "
                "environment and, for containers, run the ranks of one node in one IPC "
                "namespace (docker --ipc=host; Kubernetes: a shared /dev/shm)"
            )
        findings.append(
            Finding(
                id="net-inside-node",
                severity=Severity(severity),
                title="ranks on the same machine talked through the network transport "
                "(not a cross-node link)",
                cause=cause,
                fix=fix,
                evidence=quotes(witnesses),
                conclusions=tuple(text for _, text in same_host_net[:MAX_EVIDENCE]),
                count=len(same_host_net),
            )
        )
    if split_by_hostid:
        findings.append(
            Finding(
                id="fake-hosts",
                severity=Severity.INFO,
                title="NCCL_HOSTID split one machine into several NCCL hosts: their traffic "
                "used the network transport on purpose",
                cause="NCCL_HOSTID differs between ranks of one machine (a test of the "
                "inter-node path)",
                fix="nothing to fix for a test; unset NCCL_HOSTID for real jobs",
                evidence=quotes(p.line("env:NCCL_HOSTID") for p, _ in split_by_hostid),
                conclusions=tuple(text for _, text in split_by_hostid[:MAX_EVIDENCE]),
                count=len(split_by_hostid),
            )
        )
    if indistinct:
        findings.append(
            Finding(
                id="hosts-indistinct",
                severity=Severity.INFO,
                title="NCCL counted more hosts than the log's host names tell apart: "
                "network connections among them are counted as inter-node",
                cause="several machines share a host name (and their lines show no address "
                "that tells them apart), or NCCL_HOSTID split a machine and the log does "
                "not show it (NCCL prints it with NCCL_DEBUG_SUBSYS=ENV): NCCL's nNodes / "
                "localRanks say the ranks under one name run on several NCCL hosts",
                fix="give every machine its own host name; log with "
                "NCCL_DEBUG_SUBSYS=INIT,NET,ENV so that NCCL_HOSTID and the bootstrap "
                "addresses are shown",
                conclusions=tuple(text for _, text in indistinct[:MAX_EVIDENCE]),
                count=len(indistinct),
            )
        )
    return findings


# ---------------------------------------------------------------- inside a host


def shm_only_findings(log: NcclLog, rows: Sequence[ProcessRow]) -> list[Finding]:
    """Hosts whose GPUs exchange data only through host memory: every intra-node
    connection of the host's processes is SHM, none P2P (NCCL's P2P transport refused
    every pair). Not said where the environment turned P2P off (its own finding)."""
    by_key = {p.key: p for p in log.processes}
    hosts: dict[str, list[ProcessRow]] = {}
    for row in rows:
        if row.host is not None:
            hosts.setdefault(row.host, []).append(row)
    hit: list[tuple[str, list[ProcessLog]]] = []
    for host, members in hosts.items():
        labels = {label for row in members for label in row.intra_node}
        if not labels or not all(label.startswith("SHM") for label in labels):
            continue
        processes = [by_key[row.process] for row in members if row.process in by_key]
        # the environment turned P2P off, or NCCL said per pair that it did: said there
        if any(_p2p_off(env_of(p)) or _p2p_refused(p) for p in processes):
            continue
        shown = [p for p in processes if transport_line(p, "SHM")]
        if shown:
            hit.append((host, shown))
    if not hit:
        return []
    return [
        Finding(
            id="intra-node-shm-only",
            severity=Severity.WARNING,
            title="GPUs of one host exchange data only through host memory (SHM), never "
            "peer to peer",
            cause="NCCL connected every pair of GPUs on the host through SHM: its P2P "
            "transport refused each pair (NVML reports no peer access: a VM or container "
            "without it, PCIe ACS or an IOMMU in the way, GeForce cards without P2P over "
            "PCIe, an NVSwitch system whose fabric manager is down). Every hop costs a copy "
            "through host memory: slower than P2P where the GPUs have it, far slower than "
            "NVLink",
            fix="`nvidia-smi topo -m` and `nvidia-smi topo -p2p rw` show what the GPUs can "
            "do; on NVSwitch systems check nvidia-fabricmanager; on bare metal turn ACS off "
            "and the IOMMU to passthrough; where the platform has no P2P, SHM is the path",
            evidence=quotes(
                transport_line(p, "SHM") for _, found in hit for p in found[:MAX_EVIDENCE]
            ),
            conclusions=tuple(
                f"{host}: every intra-node connection the log shows goes via SHM "
                f"({len(found)} process(es) show one)"
                for host, found in hit[:MAX_EVIDENCE]
            ),
            processes=tuple(p.key for _, found in hit for p in found),
        )
    ]


def _p2p_refused(process: ProcessLog) -> bool:
    """NCCL's own line for a pair without P2P ("P2P is disabled between connected GPUs",
    the p2p-disabled-pcie signature's)."""
    return any("P2P is disabled between" in (w.message or w.text) for w in process.warnings)


def _p2p_off(env: dict[str, str]) -> bool:
    """NCCL_P2P_DISABLE on, or NCCL_P2P_LEVEL at LOC (P2P off, as 2.7+ echo the former)."""
    level = env.get("NCCL_P2P_LEVEL", "").strip().upper()
    return switched_on(env.get("NCCL_P2P_DISABLE")) or level in ("LOC", "0")
