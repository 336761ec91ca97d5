"""NCCL_IB_HCA for the detected layer: the ports a transport can use, what a listing
leaves unknown about them, and the check or choice of the value (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.nccl.fill_model import Current, Detected
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.nccl.rules import (
    Port,
    family_word,
    has_routable_gid,
    port_kind,
    transport_word,
    usable_ports,
)
from hpnet.rdma.model import PortState
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory

__all__ = [
    "check_hca",
    "describe",
    "note_unknown_ports",
    "ports_of",
    "unknown_port_notes",
    "unknown_ports",
]


def unknown_ports(inventory: NodeInventory) -> list[str]:
    """What a listing leaves unknown about ports that might be usable, each with the
    listing that would tell: ``mlx5_0:1: state not shown (ibv_devinfo shows it)``."""
    return [said for _, said in unknown_port_notes(inventory)]


def unknown_port_notes(inventory: NodeInventory) -> list[tuple[str | None, str]]:
    """:func:`unknown_ports`, each with the port it is about (``mlx5_0:1``; None for a
    note about the node's devices as a whole)."""
    if not inventory.source.startswith("listing"):
        return []
    said: list[tuple[str | None, str]] = []
    nodes = inventory.dev_nodes
    if nodes is not None and nodes.uverbs and not inventory.rdma_devices:
        said.append(
            (
                None,
                f"{', '.join(nodes.uverbs)} exist in /dev/infiniband, but the devices behind "
                "them and their ports are not shown (`ibv_devinfo` shows them)",
            )
        )
    if nodes is not None and uverbs_short(inventory):
        said.append(
            (
                None,
                f"/dev/infiniband has {len(nodes.uverbs)} uverbs node(s) "
                f"({', '.join(nodes.uverbs) or 'none'}) for {len(inventory.rdma_devices)} devices: "
                "the others cannot be opened here, and which are which is not shown "
                "(`grep . /sys/class/infiniband_verbs/uverbs*/ibdev` tells)",
            )
        )
    for device in inventory.rdma_devices:
        if device.usable_here is False:
            continue
        if device.name.startswith("("):
            said.append((None, "a device whose name the listing cuts off (run `ibv_devinfo -v`)"))
            continue
        if not device.ports:
            said.append(
                (None, f"{device.name}: its ports are not shown (`ibv_devinfo` shows them)")
            )
            continue
        for port in device.ports:
            name = f"{device.name}:{port.number}"
            kind = port_kind(device, port)
            if port.state is PortState.UNKNOWN:
                said.append((name, f"{name}: state not shown (`ibv_devinfo` or `ibstat` shows it)"))
            elif port.state is not PortState.ACTIVE:
                continue
            elif kind == "unknown" and port.link_layer is None:
                said.append((name, f"{name}: link layer not shown (`ibv_devinfo` shows it)"))
            elif kind in ("roce", "erdma") and not port.gids:
                said.append(
                    (
                        name,
                        f"{name}: an Ethernet port whose GIDs the listing does not show, so no "
                        "RoCE v2 GID is known (`show_gids` or `ibv_devinfo -v` shows them)",
                    )
                )
    return said


def uverbs_short(inventory: NodeInventory) -> bool:
    """``ls /dev/infiniband`` shows fewer uverbs nodes than the listings show devices: some
    devices cannot be opened here, and which ones the listings do not say."""
    nodes = inventory.dev_nodes
    return nodes is not None and len(nodes.uverbs) < len(inventory.rdma_devices)


def ports_of(inventory: NodeInventory, kind: str) -> list[Port]:
    if uverbs_short(inventory):
        return []
    return [
        (device, port)
        for device in inventory.rdma_devices
        for port in usable_ports(device)
        if port_kind(device, port) == kind
    ]


def note_unknown_ports(inventory: NodeInventory, findings: list[Finding]) -> list[str]:
    """What a listing leaves unknown about the ports, as one finding: none of them is
    selected (:func:`unknown_ports` names the listing that would tell); returns it."""
    unknown = unknown_ports(inventory)
    if unknown:
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="listing-incomplete",
                title="the listing does not show what selecting these ports takes, so none "
                "of them is selected: " + "; ".join(unknown[:8]),
            )
        )
    return unknown


def describe(ports: Sequence[Port]) -> str:
    return ", ".join(f"{d.name}:{p.number}" for d, p in ports) or "none"


def check_hca(
    inventory: NodeInventory,
    transport: str,
    now: Current | None,
    *,
    family: str,
    detected: list[Detected],
    findings: list[Finding],
) -> list[Port]:
    """Check or choose NCCL_IB_HCA; returns the ports the final value selects."""
    kind = transport_word(transport)
    usable = ports_of(inventory, transport)
    unroutable: list[Port] = []
    if transport in ("roce", "erdma"):
        unroutable = [pair for pair in usable if not has_routable_gid(pair[1], family)]
    good = [pair for pair in usable if pair not in unroutable]
    unknown = note_unknown_ports(inventory, findings)
    if not usable:
        broken = [d.name for d in inventory.rdma_devices if d.usable_here is False]
        why = (
            f" ({', '.join(broken)} present but not usable here: no ACTIVE port or no "
            "/dev/infiniband/uverbsN node)"
            if broken
            else ""
        )
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="no-usable-rdma",
                title=f"no {kind} port the listing shows usable{why}"
                if unknown
                else f"no usable {kind} port on this node{why}: NCCL will fall back to "
                "its Socket transport, 4-10x slower",
            )
        )
        return []
    exact = exact_list([(d.name, p.number) for d, p in good])
    if now is None:
        if any(port.gids for _, port in unroutable):
            findings.append(_unroutable_finding(unroutable, family))
        if not good:
            return []
        detected.append(
            Detected(
                name="NCCL_IB_HCA",
                value=exact,
                reason=f"the ACTIVE {kind} ports a process here can open"
                + (" that have a routable RoCE v2 GID" if unroutable else "")
                + f": {describe(good)}",
            )
        )
        return good
    value, origin = now
    spec = parse_list(value)
    every = [(d, p) for d in inventory.rdma_devices for p in d.ports]
    chosen = [(d, p) for d, p in every if spec.matches(d.name, p.number)]
    live = [
        pair
        for pair in chosen
        if pair in usable
        or (
            port_kind(*pair) != transport and pair[1].is_active and pair[0].usable_here is not False
        )
    ]
    problems = []
    other_kind = [pair for pair in live if port_kind(*pair) != transport]
    if other_kind:
        problems.append(f"also selects {describe(other_kind)}, which is not {kind}")
    bad_gid = [pair for pair in live if pair in unroutable]
    if bad_gid:
        problems.append(
            f"also selects {describe(bad_gid)}, which has no routable RoCE v2 "
            f"{family_word(family)} GID"
        )
    fine = [pair for pair in live if pair in good]
    if not fine:
        problems = [f"selects no usable {kind} port here (it matches {describe(chosen)})"]
    if not problems:
        missed = [pair for pair in good if pair not in fine]
        note = f"selects {describe(fine)} here (ACTIVE, usable)"
        if missed:
            note += f"; leaves out usable {describe(missed)}"
        detected.append(Detected(name="NCCL_IB_HCA", value=value, reason=note, confirmation=True))
        return fine
    problem = "; ".join(problems)
    if origin != "profile":
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="hca-mismatch",
                title=f"NCCL_IB_HCA={value} ({origin}) {problem}; the node's usable "
                f"{kind} ports are {exact}",
            )
        )
        return live
    if not good:
        if any(port.gids for _, port in unroutable):
            findings.append(_unroutable_finding(unroutable, family))
        return []
    detected.append(
        Detected(
            name="NCCL_IB_HCA",
            value=exact,
            replaces_profile=True,
            reason=f"the profile's {value!r} {problem}; {exact} names the ACTIVE {kind} ports "
            "a process here can open",
        )
    )
    findings.append(
        Finding(
            severity=Severity.WARNING,
            id="profile-hca-mismatch",
            title=f"NCCL_IB_HCA={value} {problem}: using {exact}",
        )
    )
    return good


def _unroutable_finding(ports: list[Port], family: str) -> Finding:
    ports = [pair for pair in ports if pair[1].gids]  # the rest: listing-incomplete says
    return Finding(
        severity=Severity.WARNING,
        id="no-routable-gid",
        title=f"{describe(ports)} have no routable RoCE v2 {family_word(family)} GID "
        "(only RoCE v1 or link-local entries): left out of NCCL_IB_HCA",
    )
