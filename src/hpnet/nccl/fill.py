"""What the node says the node-dependent variables should be (pure).

Given a profile and a :class:`~hpnet.detect.NodeInventory`, compute the detected
layer of the resolution: the RDMA ports to use (``NCCL_IB_HCA``), the RoCE GID
index (``NCCL_IB_GID_INDEX``) and the bootstrap / socket interface
(``NCCL_SOCKET_IFNAME``). A profile value that fits the node is confirmed (a note
on it); one that does not is replaced, and the reason names the device and the
fact that rules it out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.nccl.gid_select import AUTO_GID_SINCE, IB_IGNORES_GID_INDEX_SINCE, nccl_auto_gid_index
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.node.netdevs import Netdev, NetKind
from hpnet.rdma.model import GidKind, PortState, RdmaDevice, RdmaPort

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = ["Detected", "Finding", "choose_transport", "detected_values", "version_tuple"]

#: interface kinds NCCL should prefer for bootstrap and sockets, best first
_PREFERRED = (
    NetKind.BOND,
    NetKind.PHYSICAL,
    NetKind.VLAN,
    NetKind.MACVLAN,
    NetKind.IPVLAN,
    NetKind.IPOIB,
)
#: kinds used only when nothing else is up (a pod's eth0 is a veth)
_FALLBACK = (NetKind.VETH, NetKind.BRIDGE, NetKind.VIRTUAL, NetKind.TUNNEL)
_AVOID_PREFIXES = ("docker", "virbr", "cni", "flannel", "cali", "kube", "lxc", "br-")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """Something the resolution wants the user to know. ``severity``: info or warn."""

    severity: str
    code: str
    message: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Detected:
    """One detected value (``value`` None: leave the variable unset) or a confirmation."""

    name: str
    value: str | None
    reason: str
    replaces_profile: bool = False
    confirmation: bool = False  # the profile's value fits; ``value`` repeats it


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``"2.21.5+cuda12.4"`` -> ``(2, 21, 5)``."""
    if not version:
        return None
    parts = []
    for piece in version.split("+", 1)[0].split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts) or None


def _usable_ports(device: RdmaDevice) -> list[RdmaPort]:
    """ACTIVE ports of a device a process here can open; a port whose state the
    source does not show (``show_gids``, plain ``ibdev2netdev``) is given the
    benefit of the doubt."""
    if device.usable_here is False:
        return []
    return [p for p in device.ports if p.state in (PortState.ACTIVE, PortState.UNKNOWN)]


def _port_kind(device: RdmaDevice, port: RdmaPort) -> str:
    if device.driver == "erdma":
        return "erdma"
    return "ib" if port.link_layer == "InfiniBand" else "roce"


def _ports_of(inventory: NodeInventory, kind: str) -> list[tuple[RdmaDevice, RdmaPort]]:
    return [
        (device, port)
        for device in inventory.rdma_devices
        for port in _usable_ports(device)
        if _port_kind(device, port) == kind
    ]


def choose_transport(profile: Profile, inventory: NodeInventory) -> str:
    """The transport the node supports for this profile: ib, roce, erdma or socket."""
    if profile.transport not in ("auto", "rdma"):
        return profile.transport
    for kind in ("ib", "erdma", "roce") if profile.transport == "auto" else ("ib", "roce"):
        if _ports_of(inventory, kind):
            return kind
    return "socket" if profile.transport == "auto" else "roce"


def detected_values(
    profile: Profile,
    inventory: NodeInventory,
    *,
    transport: str,
    layered: Mapping[str, str],
    nccl_version: str | None,
) -> tuple[list[Detected], list[Finding]]:
    """The detected layer. ``layered`` holds the values from the layers the
    detection must respect (profile, user, environment) for the address family."""
    detected: list[Detected] = []
    findings: list[Finding] = []
    version = version_tuple(nccl_version)
    family = layered.get("NCCL_IB_ADDR_FAMILY") or layered.get("NCCL_SOCKET_FAMILY") or "AF_INET"
    selected: list[tuple[RdmaDevice, RdmaPort]] = []
    if transport != "socket" and "NCCL_IB_HCA" in profile.detect:
        selected = _hca(
            profile, inventory, transport, family=family, detected=detected, findings=findings
        )
    if transport in ("roce", "erdma") and "NCCL_IB_GID_INDEX" in profile.detect and selected:
        _gid(
            profile,
            inventory,
            selected,
            family,
            version=version,
            detected=detected,
            findings=findings,
        )
    if transport == "ib" and profile.setting("NCCL_IB_GID_INDEX") and selected:
        _gid_on_infiniband(profile, selected, version, detected, findings)
    if "NCCL_SOCKET_IFNAME" in profile.detect:
        _ifname(profile, inventory, detected, findings)
    return detected, findings


# ---------------------------------------------------------------- NCCL_IB_HCA


def _describe(ports: Sequence[tuple[RdmaDevice, RdmaPort]]) -> str:
    return ", ".join(f"{d.name}:{p.number}" for d, p in ports) or "none"


def _hca(
    profile: Profile,
    inventory: NodeInventory,
    transport: str,
    *,
    family: str,
    detected: list[Detected],
    findings: list[Finding],
) -> list[tuple[RdmaDevice, RdmaPort]]:
    candidates = _ports_of(inventory, transport)
    kind = {"ib": "InfiniBand", "roce": "RoCE", "erdma": "eRDMA"}[transport]
    if transport in ("roce", "erdma"):
        candidates = _with_routable_gid(candidates, family, findings)
    if not candidates:
        unusable = [d.name for d in inventory.rdma_devices if d.usable_here is False]
        why = (
            f" ({', '.join(unusable)} present but not usable here: no ACTIVE port or no "
            "/dev/infiniband/uverbsN node)"
            if unusable
            else ""
        )
        findings.append(
            Finding(
                severity="warn",
                code="no-usable-rdma",
                message=f"no usable {kind} port on this node{why}: NCCL will fall back to "
                "its Socket transport, 4-10x slower",
            )
        )
        return []
    exact = exact_list([(d.name, p.number) for d, p in candidates])
    setting = profile.setting("NCCL_IB_HCA")
    if setting is None:
        detected.append(
            Detected(
                name="NCCL_IB_HCA",
                value=exact,
                reason=f"the ACTIVE {kind} ports a process here can open: {_describe(candidates)}",
            )
        )
        return candidates
    spec = parse_list(setting.value)
    everything = [(d, p) for d in inventory.rdma_devices for p in d.ports]
    chosen = [(d, p) for d, p in everything if spec.matches(d.name, p.number)]
    usable = [pair for pair in chosen if pair in candidates]
    other_kind = [
        (d, p)
        for d, p in chosen
        if p.is_active and d.usable_here is not False and _port_kind(d, p) != transport
    ]
    if usable and not other_kind:
        missed = [pair for pair in candidates if pair not in usable]
        note = f"selects {_describe(usable)} here (ACTIVE, usable)"
        if missed:
            note += f"; leaves out usable {_describe(missed)}"
        detected.append(
            Detected(name="NCCL_IB_HCA", value=setting.value, reason=note, confirmation=True)
        )
        return usable
    problem = (
        f"also selects {_describe(other_kind)}, which is not {kind}"
        if usable
        else f"selects no usable {kind} port here (it matches {_describe(chosen)})"
    )
    detected.append(
        Detected(
            name="NCCL_IB_HCA",
            value=exact,
            replaces_profile=True,
            reason=f"the profile's {setting.value!r} {problem}; {exact} names the ACTIVE "
            f"{kind} ports a process here can open",
        )
    )
    findings.append(
        Finding(
            severity="warn",
            code="profile-hca-mismatch",
            message=f"NCCL_IB_HCA={setting.value} {problem}: using {exact}",
        )
    )
    return candidates


def _with_routable_gid(
    ports: list[tuple[RdmaDevice, RdmaPort]], family: str, findings: list[Finding]
) -> list[tuple[RdmaDevice, RdmaPort]]:
    """RoCE ports that have a routable RoCE v2 GID of ``family``; a port whose GID
    table the source does not show is kept."""
    kept, left = [], []
    for device, port in ports:
        if not port.gids or any(g.is_roce_v2 and _routable(g.kind, family) for g in port.gids):
            kept.append((device, port))
        else:
            left.append((device, port))
    if left:
        findings.append(
            Finding(
                severity="warn",
                code="no-routable-gid",
                message=f"{_describe(left)} have no routable RoCE v2 {_family_word(family)} GID "
                "(only RoCE v1 or link-local entries): left out of NCCL_IB_HCA",
            )
        )
    return kept


# ---------------------------------------------------------------- NCCL_IB_GID_INDEX


def _routable(gid_kind: GidKind, family: str) -> bool:
    if family == "AF_INET6":
        return gid_kind is GidKind.IPV6_GLOBAL
    return gid_kind is GidKind.IPV4_MAPPED


def _gid_problem(port: RdmaPort, index: int, family: str, visible: set[str] | None) -> str | None:
    gid = next((g for g in port.gids if g.index == index), None)
    if gid is None:
        return f"has no GID {index}"
    if gid.kind is GidKind.EMPTY:
        return f"GID {index} is empty"
    if not gid.is_roce_v2:
        return f"GID {index} is {gid.type or 'of unknown type'}, not RoCE v2"
    if not _routable(gid.kind, family):
        wanted = "IPv4-mapped" if family == "AF_INET" else "global IPv6"
        return f"GID {index} is {gid.kind.value}, not {wanted}"
    if visible is not None and gid.netdev and gid.netdev not in visible:
        return f"GID {index} belongs to {gid.netdev}, which is not in this network namespace"
    return None


def _gid(
    profile: Profile,
    inventory: NodeInventory,
    selected: list[tuple[RdmaDevice, RdmaPort]],
    family: str,
    *,
    version: tuple[int, ...] | None,
    detected: list[Detected],
    findings: list[Finding],
) -> None:
    visible = {n.name for n in inventory.netdevs} if inventory.netdevs else None
    good: list[set[int]] = []
    for _, port in selected:
        good.append(
            {g.index for g in port.gids if _gid_problem(port, g.index, family, visible) is None}
        )
    common = sorted(set.intersection(*good)) if good else []
    auto = {(d.name, p.number): nccl_auto_gid_index(p.gids, family=family) for d, p in selected}
    setting = profile.setting("NCCL_IB_GID_INDEX")
    if setting is not None:
        index = int(setting.value)
        problems = [
            f"{d.name}:{p.number} {problem}"
            for d, p in selected
            if (problem := _gid_problem(p, index, family, visible))
        ]
        if not problems:
            note = f"GID {index} is RoCE v2 {_family_word(family)} on every selected port"
            note += _auto_note(index, auto, version)
            detected.append(
                Detected(
                    name="NCCL_IB_GID_INDEX", value=setting.value, reason=note, confirmation=True
                )
            )
            return
        facts = "; ".join(problems)
        if common:
            best = common[0]
            detected.append(
                Detected(
                    name="NCCL_IB_GID_INDEX",
                    value=str(best),
                    replaces_profile=True,
                    reason=f"the profile's {index} does not work here ({facts}); GID {best} is "
                    f"RoCE v2 {_family_word(family)} on every selected port"
                    + _gid_examples(selected, best)
                    + _auto_note(best, auto, version),
                )
            )
            findings.append(
                Finding(
                    severity="warn",
                    code="profile-gid-mismatch",
                    message=f"NCCL_IB_GID_INDEX={index} does not work on this node ({facts}): "
                    f"using {best}",
                )
            )
            return
        findings.append(_no_common_gid(selected, good, version, f"({facts})"))
        detected.append(_unset_gid(version, f"the profile's {index} does not work here ({facts})"))
        return
    if common:
        best = common[0]
        detected.append(
            Detected(
                name="NCCL_IB_GID_INDEX",
                value=str(best),
                reason=f"GID {best} is RoCE v2 {_family_word(family)} on every selected port"
                + _gid_examples(selected, best)
                + _auto_note(best, auto, version),
            )
        )
        return
    findings.append(_no_common_gid(selected, good, version, ""))
    detected.append(_unset_gid(version, "no single GID index works on every selected port"))


def _family_word(family: str) -> str:
    return "IPv4-mapped" if family == "AF_INET" else "global IPv6"


def _gid_examples(selected: list[tuple[RdmaDevice, RdmaPort]], index: int) -> str:
    shown = []
    for device, port in selected[:2]:
        gid = next(g for g in port.gids if g.index == index)
        address = gid.ipv4 or gid.gid
        shown.append(f"{device.name}: {address}" + (f" on {gid.netdev}" if gid.netdev else ""))
    return " (" + "; ".join(shown) + (", ..." if len(selected) > 2 else "") + ")"


def _auto_note(
    index: int, auto: Mapping[tuple[str, int], int | None], version: tuple[int, ...] | None
) -> str:
    same = all(choice == index for choice in auto.values())
    if version is not None and version >= AUTO_GID_SINCE:
        if same:
            return (
                f"; NCCL {'.'.join(map(str, version))} would choose GID {index} itself if "
                "NCCL_IB_GID_INDEX were left unset"
            )
        return f"; left unset, NCCL {'.'.join(map(str, version))} would choose " + ", ".join(
            f"{dev}:{port}->{choice}" for (dev, port), choice in auto.items()
        )
    if same:
        return f"; NCCL >= 2.21.5 would choose GID {index} itself if left unset"
    return ""


def _no_common_gid(
    selected: list[tuple[RdmaDevice, RdmaPort]],
    good: list[set[int]],
    version: tuple[int, ...] | None,
    facts: str,
) -> Finding:
    per_port = ", ".join(
        f"{d.name}:{p.number}->{sorted(g) or 'none'}"
        for (d, p), g in zip(selected, good, strict=True)
    )
    auto = version is not None and version >= AUTO_GID_SINCE
    return Finding(
        severity="warn",
        code="no-common-gid",
        message="no one GID index is RoCE v2 and routable on every selected port"
        + (f" {facts}" if facts else "")
        + f" (usable indexes per port: {per_port}); "
        + (
            "NCCL_IB_GID_INDEX is left unset so that NCCL chooses per port"
            if auto
            else "with NCCL older than 2.21.5 select fewer HCAs or fix the GID tables"
        ),
    )


def _unset_gid(version: tuple[int, ...] | None, why: str) -> Detected:
    auto = version is not None and version >= AUTO_GID_SINCE
    return Detected(
        name="NCCL_IB_GID_INDEX",
        value=None,
        replaces_profile=True,
        reason=why + ("; unset, NCCL >= 2.21.5 chooses per port" if auto else "; left unset"),
    )


def _gid_on_infiniband(
    profile: Profile,
    selected: list[tuple[RdmaDevice, RdmaPort]],
    version: tuple[int, ...] | None,
    detected: list[Detected],
    findings: list[Finding],
) -> None:
    setting = profile.setting("NCCL_IB_GID_INDEX")
    if setting is None:
        return
    index = int(setting.value)
    empty = [
        f"{d.name}:{p.number}"
        for d, p in selected
        if not any(g.index == index and g.kind is not GidKind.EMPTY for g in p.gids)
    ]
    if version is not None and version >= IB_IGNORES_GID_INDEX_SINCE:
        note = f"NCCL {'.'.join(map(str, version))} ignores NCCL_IB_GID_INDEX on InfiniBand ports"
        detected.append(
            Detected(name="NCCL_IB_GID_INDEX", value=setting.value, reason=note, confirmation=True)
        )
        return
    if empty:
        detected.append(
            Detected(
                name="NCCL_IB_GID_INDEX",
                value=None,
                replaces_profile=True,
                reason=f"these are InfiniBand ports and GID {index} is empty on "
                f"{', '.join(empty)}: NCCL older than 2.22.3 would use it; left unset",
            )
        )
        findings.append(
            Finding(
                severity="warn",
                code="gid-index-on-infiniband",
                message=f"NCCL_IB_GID_INDEX={index} names an empty GID on the InfiniBand ports "
                f"{', '.join(empty)}; it is left unset (NCCL >= 2.22.3 ignores it on IB)",
            )
        )


# ---------------------------------------------------------------- NCCL_SOCKET_IFNAME


def _candidate(netdev: Netdev, family: str) -> bool:
    if not netdev.is_up or netdev.kind is NetKind.LOOPBACK:
        return False
    if netdev.addresses:
        wanted = "inet6" if family == "AF_INET6" else "inet"
        return any(
            a.family == wanted and not a.address.startswith("fe80") for a in netdev.addresses
        )
    return True  # a recorded tree does not hold addresses: an up interface may do


def _rank(netdev: Netdev) -> tuple[int, str]:
    avoided = netdev.name.startswith(_AVOID_PREFIXES)
    if netdev.kind in _PREFERRED and not avoided:
        return (_PREFERRED.index(netdev.kind), netdev.name)
    if netdev.kind in _FALLBACK and not avoided:
        return (10 + _FALLBACK.index(netdev.kind), netdev.name)
    return (20, netdev.name)


def _ifname(
    profile: Profile,
    inventory: NodeInventory,
    detected: list[Detected],
    findings: list[Finding],
) -> None:
    family_setting = profile.setting("NCCL_SOCKET_FAMILY")
    family = family_setting.value if family_setting else "AF_INET"
    candidates = sorted((n for n in inventory.netdevs if _candidate(n, family)), key=_rank)
    if "netdevs" in inventory.not_collected:
        return  # a listing says nothing of interfaces
    if not candidates:
        findings.append(
            Finding(
                severity="warn",
                code="no-socket-interface",
                message="no interface is up with an address: NCCL cannot bootstrap "
                "('Bootstrap : no socket interface found')",
            )
        )
        return
    best = candidates[0]
    no_address_note = "" if best.addresses else " (addresses are not known from a recorded tree)"
    setting = profile.setting("NCCL_SOCKET_IFNAME")
    if setting is None:
        detected.append(
            Detected(
                name="NCCL_SOCKET_IFNAME",
                value=f"={best.name}",
                reason=f"{best.name} is up ({_netdev_word(best)}){no_address_note}; unset, NCCL "
                "would pick by its own rules (ib* first, then any but docker and lo)",
            )
        )
        return
    spec = parse_list(setting.value)
    matched = [n for n in candidates if spec.matches(n.name)]
    if not matched:
        detected.append(
            Detected(
                name="NCCL_SOCKET_IFNAME",
                value=f"={best.name}",
                replaces_profile=True,
                reason=f"the profile's {setting.value!r} matches no interface that is up with an "
                f"address here; {best.name} is ({_netdev_word(best)}){no_address_note}",
            )
        )
        findings.append(
            Finding(
                severity="warn",
                code="profile-ifname-mismatch",
                message=f"NCCL_SOCKET_IFNAME={setting.value} matches no usable interface here: "
                f"using ={best.name}",
            )
        )
        return
    note = "matches " + ", ".join(f"{n.name} ({_netdev_word(n)})" for n in matched)
    avoid = [n.name for n in matched if _rank(n)[0] >= 10]
    if avoid and len(matched) > 1:
        note += (
            f"; as a prefix it also takes {', '.join(avoid)}: write ={matched[0].name} to "
            "name one interface exactly"
        )
        findings.append(
            Finding(
                severity="info",
                code="ifname-prefix-ambiguous",
                message=f"NCCL_SOCKET_IFNAME={setting.value} also matches {', '.join(avoid)}",
            )
        )
    detected.append(
        Detected(name="NCCL_SOCKET_IFNAME", value=setting.value, reason=note, confirmation=True)
    )


def _netdev_word(netdev: Netdev) -> str:
    inet = [a.address for a in netdev.addresses if a.family == "inet"]
    return netdev.kind.value + (f", {inet[0]}" if inet else "")
