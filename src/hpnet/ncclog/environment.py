"""Conclusions about the environment NCCL echoes (``NCCL_X set by environment to Y``):
the variables that change the path traffic takes, and NVLink SHARP asked for and not
set up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.conclusions import env_of, switched_on, transport_line
from hpnet.ncclog.findings import quotes
from hpnet.ncclog.model import LogLine, NcclLog, ProcessLog
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.ncclog.report import ProcessRow

__all__ = ["env_findings"]

#: what an echoed variable did, when its value is one a user should hear about:
#: (id, severity, title, cause, fix); ``{value}`` is the echoed value
_EnvRule = Callable[[str], "tuple[str, str, str, str, str] | None"]


def _ib_disable(value: str) -> tuple[str, str, str, str, str] | None:
    if not switched_on(value):
        return None
    return (
        "env-ib-disabled",
        "warning",
        f"NCCL_IB_DISABLE={value}: NCCL's RDMA transport is off",
        "with NCCL_IB_DISABLE set, NCCL uses TCP sockets (or a network plugin) between "
        "hosts even where RDMA NICs exist, typically 4-10x slower",
        "unset NCCL_IB_DISABLE (or set it to 0) on nodes with RDMA NICs",
    )


def _p2p_disable(value: str) -> tuple[str, str, str, str, str] | None:
    if not switched_on(value):
        return None
    return (
        "env-p2p-disabled",
        "warning",
        f"NCCL_P2P_DISABLE={value}: GPUs of one host talk through host memory",
        "P2P (NVLink or PCIe peer-to-peer) is off, so ranks on one host use SHM (a copy "
        "through host shared memory) or the network: NVLink GPUs lose most of their "
        "bandwidth",
        "unset NCCL_P2P_DISABLE unless P2P is broken on this platform (then fix that: "
        "`nvidia-smi topo -p2p r`)",
    )


def _p2p_level(value: str) -> tuple[str, str, str, str, str] | None:
    if value.upper() not in ("LOC", "0"):
        return None
    return (
        "env-p2p-disabled",
        "warning",
        f"NCCL_P2P_LEVEL={value}: P2P is off, GPUs of one host talk through host memory",
        "level LOC allows P2P to no other GPU, so ranks on one host use SHM (a copy through "
        "host shared memory) or the network: NVLink GPUs lose most of their bandwidth. "
        "Releases from 2.7 on print NCCL_P2P_DISABLE=1 so too: it sets the level to LOC "
        "(graph/paths.cc ncclGetLevel @v2.7.8-1..v2.28.9-1)",
        "unset NCCL_P2P_LEVEL (and NCCL_P2P_DISABLE) unless P2P is broken on this platform "
        "(then fix that: `nvidia-smi topo -p2p r`)",
    )


def _shm_disable(value: str) -> tuple[str, str, str, str, str] | None:
    if not switched_on(value):
        return None
    return (
        "env-shm-disabled",
        "info",
        f"NCCL_SHM_DISABLE={value}: no shared-memory transport inside a host",
        "where P2P is not possible between two GPUs of one host, NCCL then uses the "
        "network transport between them",
        "unset NCCL_SHM_DISABLE unless /dev/shm is unusable in the container",
    )


def _net(value: str) -> tuple[str, str, str, str, str] | None:
    if value.lower() != "socket":
        return None
    return (
        "env-net-socket",
        "warning",
        f"NCCL_NET={value}: NCCL is told to use TCP sockets",
        "NCCL_NET forces the Socket network module between hosts, even where RDMA NICs exist",
        "unset NCCL_NET on nodes with RDMA NICs",
    )


def _algo(value: str) -> tuple[str, str, str, str, str] | None:
    return (
        "env-algo-forced",
        "info",
        f"NCCL_ALGO={value}: the algorithm is forced",
        "NCCL documents NCCL_ALGO as a debugging and tuning knob: a forced algorithm is used "
        "even where NCCL's tuning would pick a faster one (and fails where it cannot run)",
        "unset NCCL_ALGO for production runs unless a measurement shows it helps",
    )


def _proto(value: str) -> tuple[str, str, str, str, str] | None:
    return (
        "env-proto-forced",
        "info",
        f"NCCL_PROTO={value}: the protocols are restricted",
        "NCCL documents NCCL_PROTO as a debugging knob: restricting protocols costs "
        "latency or bandwidth at some sizes (LL128 off in particular)",
        "unset NCCL_PROTO unless a platform requires it (LL128 corruption on eRDMA without "
        "jumbo frames is one such case)",
    )


def _gid_index(value: str) -> tuple[str, str, str, str, str] | None:
    if value.strip() != "0":
        return None
    return (
        "env-gid-index-0",
        "warning",
        "NCCL_IB_GID_INDEX=0 selects the port's link-local GID",
        "GID 0 of a RoCE port is derived from its MAC address (fe80::/64, RoCE v1 on "
        "mlx5): it is not routable across subnets and lossless RoCE v2 fabrics do not "
        "carry it; RoCE v2 with an IPv4-mapped GID is usually index 3 (or 1 on eRDMA)",
        "pick a RoCE v2 IPv4-mapped index (`show_gids`, or `hpnet env` computes it); on "
        "NCCL >= 2.21.5 leave NCCL_IB_GID_INDEX unset and NCCL chooses",
    )


_ENV_RULES: dict[str, _EnvRule] = {
    "NCCL_IB_DISABLE": _ib_disable,
    "NCCL_P2P_DISABLE": _p2p_disable,
    "NCCL_P2P_LEVEL": _p2p_level,
    "NCCL_SHM_DISABLE": _shm_disable,
    "NCCL_NET": _net,
    "NCCL_ALGO": _algo,
    "NCCL_PROTO": _proto,
    "NCCL_IB_GID_INDEX": _gid_index,
}


def env_findings(log: NcclLog, rows: Sequence[ProcessRow]) -> list[Finding]:
    """Read every ``NCCL_X set by environment to Y`` that changes the path traffic takes.

    The finding quotes the echo and, where the log shows its effect, the lines of that
    effect (SHM connections under NCCL_P2P_DISABLE, sockets under NCCL_IB_DISABLE).
    GID index 0 is judged only where the NICs are RoCE (or not listed): InfiniBand
    ports ignore the index from 2.22.3 and route by LID before.
    """
    findings: list[Finding] = []
    intra = {r.process: r.intra_node for r in rows}
    inter = {r.process: r.inter_node for r in rows}
    for name, rule in _ENV_RULES.items():
        hits: dict[str, list[ProcessLog]] = {}
        for process in log.processes:
            value = env_of(process).get(name)
            if value is None or (
                name == "NCCL_P2P_LEVEL" and "NCCL_P2P_DISABLE" in env_of(process)
            ):
                continue  # P2P off is said once, by NCCL_P2P_DISABLE where it is echoed
            if (
                name == "NCCL_IB_GID_INDEX"
                and process.nics
                and all(n.link == "IB" for n in process.nics)
            ):
                continue
            hits.setdefault(value, []).append(process)
        for value, processes in hits.items():
            judged = rule(value)
            if judged is None:
                continue
            finding_id, severity, title, cause, fix = judged
            effect: list[LogLine | None] = []
            conclusions = []
            if name in ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"):
                effect = [transport_line(p, "SHM") or transport_line(p, "NET/") for p in processes]
                shm = [
                    p.key
                    for p in processes
                    if any(t.startswith("SHM") for t in intra.get(p.key, ()))
                ]
                if shm:
                    conclusions.append(f"{len(shm)} process(es) used SHM inside their host")
            elif name in ("NCCL_IB_DISABLE", "NCCL_NET"):
                effect = [transport_line(p, "NET/Socket") for p in processes]
                tcp = [
                    p.key
                    for p in processes
                    if any(t.startswith("NET/Socket") for t in inter.get(p.key, ()))
                ]
                if tcp:
                    conclusions.append(
                        f"{len(tcp)} process(es) sent to other hosts over NET/Socket"
                    )
            elif name == "NCCL_IB_GID_INDEX":
                roce = [p for p in processes if any(n.link == "RoCE" for n in p.nics)]
                if roce:
                    conclusions.append(
                        f"the NICs of {len(roce)} process(es) are RoCE ports: the index selects "
                        "a GID on each of them"
                    )
                    effect = [p.line("nics:IB") for p in roce]
                else:
                    severity = "info"
                    conclusions.append(
                        "the log does not list the NICs' link layer: on InfiniBand ports the "
                        "index is not used"
                    )
            findings.append(
                Finding(
                    id=finding_id,
                    severity=Severity(severity),
                    title=title,
                    cause=cause,
                    fix=fix,
                    evidence=quotes([p.line(f"env:{name}") for p in processes][:2] + effect[:2]),
                    conclusions=tuple(conclusions),
                    count=len(processes),
                    processes=tuple(p.key for p in processes),
                )
            )
    findings += _nvls(log)
    return findings


def _nvls(log: NcclLog) -> list[Finding]:
    """NVLink SHARP asked for (NCCL_NVLS_ENABLE=1, or NVLS in NCCL_ALGO) and set up on no
    channel: ``0 nvls channels`` (init.cc), with the reason when the log gives one
    (``NVLS multicast support is not available on dev N``)."""
    asked = [
        p
        for p in log.processes
        if switched_on(env_of(p).get("NCCL_NVLS_ENABLE"))
        or "nvls" in env_of(p).get("NCCL_ALGO", "").lower()
    ]
    none = [p for p in asked if p.channels is not None and p.channels[2] == 0]
    if not none:
        return []
    unsupported = [p for p in none if p.nvls_support is False]
    cause = (
        "NCCL reports NVLS multicast as not available on the GPU: no NVSwitch with "
        "multicast (NVLink SHARP needs H100/H200/B200 NVSwitch systems), the Fabric Manager "
        "not running, or a driver / CUDA older than NVLS needs (CUDA 12.1, driver 530)"
        if unsupported
        else "NCCL set up no NVLS channel (the log does not say why: NCCL_DEBUG_SUBSYS=INIT,NVLS "
        "shows it): NVLS needs an NVSwitch system with the Fabric Manager, CUDA >= 12.1, and "
        "is skipped for single-GPU-per-node communicators"
    )
    return [
        Finding(
            id="nvls-not-used",
            severity=Severity.WARNING,
            title="NVLink SHARP (NVLS) was asked for and NCCL set up 0 NVLS channels",
            cause=cause,
            fix="check `nvidia-smi -q | grep -i fabric` and `systemctl status "
            "nvidia-fabricmanager`; unset NCCL_NVLS_ENABLE / NVLS in NCCL_ALGO where the "
            "system has no NVLS",
            evidence=quotes(
                line
                for p in none[:2]
                for line in (
                    p.line("env:NCCL_NVLS_ENABLE") or p.line("env:NCCL_ALGO"),
                    p.line("nvls-support"),
                    p.line("channels"),
                )
            ),
            count=len(none),
            processes=tuple(p.key for p in none),
        )
    ]
