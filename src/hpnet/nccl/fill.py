"""What the node says the node-dependent variables should be (pure).

Given a profile and a :class:`~hpnet.detect.NodeInventory`, compute the detected
layer of the resolution: the RDMA ports to use (``NCCL_IB_HCA``), the RoCE GID
index (``NCCL_IB_GID_INDEX``) and the bootstrap / socket interface
(``NCCL_SOCKET_IFNAME``), one module each (:mod:`hpnet.nccl.fill_ports`,
:mod:`hpnet.nccl.fill_gid`, :mod:`hpnet.nccl.fill_ifname`), by the node's rules in
:mod:`hpnet.nccl.rules`. The value checked is the one the other layers would
give (profile < user < environment). A value that fits the node is confirmed (a
note on it). A profile's value that does not is replaced, and the reason names the
device and the fact that rules it out; a user's or the environment's value is
kept (they win) and a finding says what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hpnet.nccl.fill_gid import check_gid
from hpnet.nccl.fill_ifname import check_ifname
from hpnet.nccl.fill_model import Current, Detected
from hpnet.nccl.fill_ports import check_hca, note_unknown_ports, ports_of, unknown_ports
from hpnet.nccl.rules import Port, gid_family, version_tuple
from hpnet.rdma.model import PortState
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = [
    "Current",
    "Detected",
    "choose_transport",
    "detected_values",
    "unknown_ports",
]


def choose_transport(profile: Profile, inventory: NodeInventory) -> str:
    """The transport the node supports for this profile: ib, roce, erdma or socket.

    From a listing that shows RDMA devices but not what using them takes (ports, their
    state, link layer or GIDs), ``auto`` cannot choose: sockets would be a guess that
    turns the node's RDMA off. That is an input error naming what is missing.
    """
    if profile.transport not in ("auto", "rdma"):
        return profile.transport
    for kind in ("ib", "erdma", "roce") if profile.transport == "auto" else ("ib", "roce"):
        if ports_of(inventory, kind):
            return kind
    unknown = unknown_ports(inventory)
    if unknown:
        from hpnet.errors import InputError  # noqa: PLC0415 - the error path only

        raise InputError(
            "the listing shows RDMA devices but not whether a process can use them: "
            + "; ".join(unknown[:6]),
            code="listing-incomplete",
            where=inventory.source,
            fix="pass `ibv_devinfo -v` output with --from (for RoCE also `show_gids`, "
            "--from may be repeated), or name the transport with --profile ib|roce|erdma",
        )
    return "socket" if profile.transport == "auto" else "roce"


def detected_values(
    profile: Profile,
    inventory: NodeInventory,
    *,
    transport: str,
    current: Mapping[str, Current],
    nccl_version: str | None,
) -> tuple[list[Detected], list[Finding]]:
    """The detected layer, checking what ``current`` (profile < user < environment)
    would give for each node-dependent variable."""
    detected: list[Detected] = []
    findings: list[Finding] = []
    version = version_tuple(nccl_version)

    variables = {name: value for name, (value, _) in current.items()}
    family = gid_family(variables.get("NCCL_IB_ADDR_FAMILY"), variables.get("NCCL_SOCKET_FAMILY"))
    if transport == "socket":
        _socket_fallback(profile, inventory, findings)
    selected: list[Port] = []
    if transport != "socket" and "NCCL_IB_HCA" in profile.detect:
        selected = check_hca(
            inventory,
            transport,
            current.get("NCCL_IB_HCA"),
            family=family,
            detected=detected,
            findings=findings,
        )
    if transport in ("roce", "erdma") and "NCCL_IB_GID_INDEX" in profile.detect and selected:
        check_gid(
            inventory,
            selected,
            current.get("NCCL_IB_GID_INDEX"),
            family=family,
            variables=variables,
            version=version,
            detected=detected,
            findings=findings,
        )
    gid_now = current.get("NCCL_IB_GID_INDEX")
    if transport in ("roce", "erdma") and gid_now and not selected and unknown_ports(inventory):
        # a listing that does not show the GID tables: the index is neither right nor
        # wrong here, it is not known (hpnet doctor's vars.gid says the same)
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="gid-unchecked",
                title=f"NCCL_IB_GID_INDEX={gid_now[0]} ({gid_now[1]}) is not checked: the "
                "listing does not show the ports' GID tables (`show_gids` or "
                "`ibv_devinfo -v` shows them)",
            )
        )
    if transport == "ib" and gid_now and selected:
        detected.append(
            Detected(
                name="NCCL_IB_GID_INDEX",
                value=gid_now[0],
                confirmation=True,
                reason="these are InfiniBand ports: NCCL routes them by LID and does not use "
                "the GID index there (ncclIbRtrQp sets a GID only on Ethernet ports)",
            )
        )
    if "NCCL_SOCKET_IFNAME" in profile.detect:
        check_ifname(
            inventory,
            current.get("NCCL_SOCKET_IFNAME"),
            variables.get("NCCL_SOCKET_FAMILY"),
            detected,
            findings,
        )
    return detected, findings


def _socket_fallback(profile: Profile, inventory: NodeInventory, findings: list[Finding]) -> None:
    """Say why a node that has RDMA devices ends up on sockets."""
    if profile.transport != "auto" or not inventory.rdma_devices:
        return
    reasons = []
    for device in inventory.rdma_devices:
        if device.driver == "efa":
            reasons.append(
                f"{device.name}: AWS EFA, which NCCL's IB transport does not use (the "
                "aws-ofi-nccl plugin does: without it, sockets)"
            )
        elif device.uverbs is not None and not device.uverbs.present:
            reasons.append(f"{device.name}: no {device.uverbs.path} in this container")
        elif device.uverbs is not None and device.uverbs.accessible is False:
            reasons.append(f"{device.name}: {device.uverbs.path} cannot be opened")
        elif not any(p.state is PortState.ACTIVE for p in device.ports):
            states = ", ".join(f"port {p.number} {p.state.value}" for p in device.ports)
            reasons.append(f"{device.name}: {states or 'no ports shown'}")
    note_unknown_ports(inventory, findings)
    findings.append(
        Finding(
            severity=Severity.WARNING,
            id="no-usable-rdma",
            title=f"{len(inventory.rdma_devices)} RDMA device(s) but none usable here "
            f"({'; '.join(reasons) or 'see hpnet detect'}): NCCL will use its Socket transport, "
            "4-10x slower",
        )
    )
