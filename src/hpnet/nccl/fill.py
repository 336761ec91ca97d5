"""What the node says the node-dependent variables should be (pure).

Given a profile and a :class:`~hpnet.detect.NodeInventory`, compute the detected
layer of the resolution: the RDMA ports to use (``NCCL_IB_HCA``), the RoCE GID
index (``NCCL_IB_GID_INDEX``) and the bootstrap / socket interface
(``NCCL_SOCKET_IFNAME``). The value checked is the one the other layers would
give (profile < user < environment). A value that fits the node is confirmed (a
note on it). A profile's value that does not is replaced, and the reason names the
device and the fact that rules it out; a user's or the environment's value is
kept (they win) and a finding says what is wrong with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.nccl.catalog import nccl_int
from hpnet.nccl.gid_select import AUTO_GID_SINCE, nccl_auto_gid_index
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.node.netdevs import Netdev, NetKind
from hpnet.rdma.model import GidKind, PortState, RdmaDevice, RdmaPort

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = [
    "Current",
    "Detected",
    "Finding",
    "auto_gid_choices",
    "choose_transport",
    "detected_values",
    "gid_index",
    "gid_problem",
    "interface_candidates",
    "nccl_family",
    "port_kind",
    "unknown_ports",
    "usable_ports",
    "version_tuple",
]

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


#: ``(value, origin)`` a variable has from the profile, user and environment layers
Current = tuple[str, str]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Detected:
    """One detected value (``value`` None: leave the variable unset) or a
    confirmation of the current value (``confirmation``; ``value`` is the value
    confirmed)."""

    name: str
    value: str | None
    reason: str
    replaces_profile: bool = False
    confirmation: bool = False  # the profile's value fits; ``value`` repeats it


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``"2.21.5+cuda12.4"`` -> ``(2, 21, 5)``; ``"2.21.5-1"`` (a package) too.

    >>> version_tuple("2.21.5-1+cuda12.4"), version_tuple("garbage")
    ((2, 21, 5), None)
    """
    if not version:
        return None
    parts = []
    for piece in version.split("+", 1)[0].split("-", 1)[0].split("."):
        if not (piece.isascii() and piece.isdigit()) or len(piece) > 6:
            break
        parts.append(int(piece))
    return tuple(parts) or None


def nccl_family(value: str | None) -> str:
    """The family NCCL's GID choice uses for ``NCCL_IB_ADDR_FAMILY``: strcmp against
    AF_INET / AF_INET6, anything else is AF_INET (connect.cc ``envIbAddrFamily``)."""
    return value if value in ("AF_INET", "AF_INET6") else "AF_INET"


def gid_index(value: str | None, version: tuple[int, ...] | None) -> int:
    """The index NCCL reads from ``NCCL_IB_GID_INDEX`` (``ncclParamIbGidIndex``:
    strtoll, ``0x3`` is 3; unset, empty or out of range: the default, -1 from 2.21.5,
    0 before). A negative result means "choose automatically" from 2.21.5 on.

    >>> gid_index("0x3", None), gid_index(None, (2, 21, 5)), gid_index("", (2, 18, 3))
    (3, -1, 0)
    """
    default = 0 if version is not None and version < AUTO_GID_SINCE else -1
    return nccl_int(value, default)


def _usable_ports(device: RdmaDevice) -> list[RdmaPort]:
    """ACTIVE ports of a device a process here can open. A port whose state the
    source does not show (``show_gids``, ``rdma link`` of an unknown port, an IPoIB
    interface ``ibdev2netdev`` shows down) is not usable: what a listing does not say
    stays unknown (:func:`unknown_ports` says which listing would tell)."""
    if device.usable_here is False or device.name.startswith("("):
        return []
    return [p for p in device.ports if p.state is PortState.ACTIVE]


#: drivers whose ports are Ethernet whatever a listing prints (soft-RoCE, eRDMA)
_ETHERNET_DRIVERS = frozenset({"rxe", "erdma"})


def _port_kind(device: RdmaDevice, port: RdmaPort) -> str:
    """``ib``, ``roce``, ``erdma``, or ``unknown``: NCCL's IB transport takes only
    ports whose link layer is InfiniBand or Ethernet (net_ib init skips the rest, EFA's
    ``Unspecified`` among them), and a listing that does not print it leaves it unknown."""
    if device.driver == "erdma":
        return "erdma"
    link = port.link_layer or ("Ethernet" if device.driver in _ETHERNET_DRIVERS else None)
    if link == "InfiniBand":
        return "ib"
    if link == "Ethernet":
        return "roce"
    return "unknown"


def unknown_ports(inventory: NodeInventory) -> list[str]:
    """What a listing leaves unknown about ports that might be usable, each with the
    listing that would tell: ``mlx5_0:1: state not shown (ibv_devinfo shows it)``."""
    if not inventory.source.startswith("listing"):
        return []
    said = []
    nodes = inventory.dev_nodes
    if nodes is not None and nodes.uverbs and not inventory.rdma_devices:
        said.append(
            f"{', '.join(nodes.uverbs)} exist in /dev/infiniband, but the devices behind "
            "them and their ports are not shown (`ibv_devinfo` shows them)"
        )
    if nodes is not None and _uverbs_short(inventory):
        said.append(
            f"/dev/infiniband has {len(nodes.uverbs)} uverbs node(s) "
            f"({', '.join(nodes.uverbs) or 'none'}) for {len(inventory.rdma_devices)} devices: "
            "the others cannot be opened here, and which are which is not shown "
            "(`grep . /sys/class/infiniband_verbs/uverbs*/ibdev` tells)"
        )
    for device in inventory.rdma_devices:
        if device.usable_here is False:
            continue
        if device.name.startswith("("):
            said.append("a device whose name the listing cuts off (run `ibv_devinfo -v`)")
            continue
        if not device.ports:
            said.append(f"{device.name}: its ports are not shown (`ibv_devinfo` shows them)")
            continue
        for port in device.ports:
            name = f"{device.name}:{port.number}"
            kind = _port_kind(device, port)
            if port.state is PortState.UNKNOWN:
                said.append(f"{name}: state not shown (`ibv_devinfo` or `ibstat` shows it)")
            elif port.state is not PortState.ACTIVE:
                continue
            elif kind == "unknown" and port.link_layer is None:
                said.append(f"{name}: link layer not shown (`ibv_devinfo` shows it)")
            elif kind in ("roce", "erdma") and not port.gids:
                said.append(
                    f"{name}: an Ethernet port whose GIDs the listing does not show, so no "
                    "RoCE v2 GID is known (`show_gids` or `ibv_devinfo -v` shows them)"
                )
    return said


Port = tuple[RdmaDevice, RdmaPort]


def _uverbs_short(inventory: NodeInventory) -> bool:
    """``ls /dev/infiniband`` shows fewer uverbs nodes than the listings show devices: some
    devices cannot be opened here, and which ones the listings do not say."""
    nodes = inventory.dev_nodes
    return nodes is not None and len(nodes.uverbs) < len(inventory.rdma_devices)


def _ports_of(inventory: NodeInventory, kind: str) -> list[Port]:
    if _uverbs_short(inventory):
        return []
    return [
        (device, port)
        for device in inventory.rdma_devices
        for port in _usable_ports(device)
        if _port_kind(device, port) == kind
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
        if _ports_of(inventory, kind):
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


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class _Gids:
    """What the GID choice depends on, from the layers: the family hpnet selects
    for, and NCCL's own settings for its automatic choice."""

    family: str  # NCCL_IB_ADDR_FAMILY, else NCCL_SOCKET_FAMILY, else AF_INET
    nccl_family: str  # NCCL reads only NCCL_IB_ADDR_FAMILY (connect.cc envIbAddrFamily)
    roce_version: int  # NCCL_IB_ROCE_VERSION_NUM, default 2
    address_range: str | None  # NCCL_IB_ADDR_RANGE


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

    def value(name: str) -> str | None:
        entry = current.get(name)
        return entry[0] if entry else None

    ib_family = value("NCCL_IB_ADDR_FAMILY")
    socket_family = value("NCCL_SOCKET_FAMILY")
    families = ("AF_INET", "AF_INET6")
    gids = _Gids(
        family=next((f for f in (ib_family, socket_family) if f in families), "AF_INET"),
        nccl_family=nccl_family(ib_family),
        # ncclParamIbRoceVersionNum: strtoll, default 2 (connect.cc)
        roce_version=nccl_int(value("NCCL_IB_ROCE_VERSION_NUM"), 2),
        address_range=value("NCCL_IB_ADDR_RANGE"),
    )
    if transport == "socket":
        _socket_fallback(profile, inventory, findings)
    selected: list[Port] = []
    if transport != "socket" and "NCCL_IB_HCA" in profile.detect:
        selected = _hca(
            inventory,
            transport,
            current.get("NCCL_IB_HCA"),
            family=gids.family,
            detected=detected,
            findings=findings,
        )
    if transport in ("roce", "erdma") and "NCCL_IB_GID_INDEX" in profile.detect and selected:
        _gid(
            inventory,
            selected,
            current.get("NCCL_IB_GID_INDEX"),
            gids,
            version=version,
            detected=detected,
            findings=findings,
        )
    gid_now = current.get("NCCL_IB_GID_INDEX")
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
        _ifname(
            inventory,
            current.get("NCCL_SOCKET_IFNAME"),
            value("NCCL_SOCKET_FAMILY"),
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
        if device.uverbs is not None and not device.uverbs.present:
            reasons.append(f"{device.name}: no {device.uverbs.path} in this container")
        elif device.uverbs is not None and device.uverbs.accessible is False:
            reasons.append(f"{device.name}: {device.uverbs.path} cannot be opened")
        elif not any(p.state is PortState.ACTIVE for p in device.ports):
            states = ", ".join(f"port {p.number} {p.state.value}" for p in device.ports)
            reasons.append(f"{device.name}: {states or 'no ports shown'}")
    _note_unknown_ports(inventory, findings)
    findings.append(
        Finding(
            severity="warn",
            code="no-usable-rdma",
            message=f"{len(inventory.rdma_devices)} RDMA device(s) but none usable here "
            f"({'; '.join(reasons) or 'see hpnet detect'}): NCCL will use its Socket transport, "
            "4-10x slower",
        )
    )


def _note_unknown_ports(inventory: NodeInventory, findings: list[Finding]) -> list[str]:
    """What a listing leaves unknown about the ports, as one finding: none of them is
    selected (:func:`unknown_ports` names the listing that would tell); returns it."""
    unknown = unknown_ports(inventory)
    if unknown:
        findings.append(
            Finding(
                severity="warn",
                code="listing-incomplete",
                message="the listing does not show what selecting these ports takes, so none "
                "of them is selected: " + "; ".join(unknown[:8]),
            )
        )
    return unknown


# ---------------------------------------------------------------- NCCL_IB_HCA


def _describe(ports: Sequence[Port]) -> str:
    return ", ".join(f"{d.name}:{p.number}" for d, p in ports) or "none"


def _hca(
    inventory: NodeInventory,
    transport: str,
    now: Current | None,
    *,
    family: str,
    detected: list[Detected],
    findings: list[Finding],
) -> list[Port]:
    """Check or choose NCCL_IB_HCA; returns the ports the final value selects."""
    kind = {"ib": "InfiniBand", "roce": "RoCE", "erdma": "eRDMA"}[transport]
    usable = _ports_of(inventory, transport)
    unroutable: list[Port] = []
    if transport in ("roce", "erdma"):
        unroutable = [pair for pair in usable if not _has_routable_gid(pair[1], family)]
    good = [pair for pair in usable if pair not in unroutable]
    unknown = _note_unknown_ports(inventory, findings)
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
                severity="warn",
                code="no-usable-rdma",
                message=f"no {kind} port the listing shows usable{why}"
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
                + f": {_describe(good)}",
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
            _port_kind(*pair) != transport
            and pair[1].is_active
            and pair[0].usable_here is not False
        )
    ]
    problems = []
    other_kind = [pair for pair in live if _port_kind(*pair) != transport]
    if other_kind:
        problems.append(f"also selects {_describe(other_kind)}, which is not {kind}")
    bad_gid = [pair for pair in live if pair in unroutable]
    if bad_gid:
        problems.append(
            f"also selects {_describe(bad_gid)}, which has no routable RoCE v2 "
            f"{_family_word(family)} GID"
        )
    fine = [pair for pair in live if pair in good]
    if not fine:
        problems = [f"selects no usable {kind} port here (it matches {_describe(chosen)})"]
    if not problems:
        missed = [pair for pair in good if pair not in fine]
        note = f"selects {_describe(fine)} here (ACTIVE, usable)"
        if missed:
            note += f"; leaves out usable {_describe(missed)}"
        detected.append(Detected(name="NCCL_IB_HCA", value=value, reason=note, confirmation=True))
        return fine
    problem = "; ".join(problems)
    if origin != "profile":
        findings.append(
            Finding(
                severity="warn",
                code="hca-mismatch",
                message=f"NCCL_IB_HCA={value} ({origin}) {problem}; the node's usable "
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
            severity="warn",
            code="profile-hca-mismatch",
            message=f"NCCL_IB_HCA={value} {problem}: using {exact}",
        )
    )
    return good


def _has_routable_gid(port: RdmaPort, family: str) -> bool:
    """Whether a port can route RoCE v2: a known RoCE v2 GID of the family. A table a
    listing does not show (plain ``ibv_devinfo``, ``ibstat``, ``rdma link``) knows none:
    an Ethernet port without a known RoCE v2 GID is not a RoCE HCA."""
    return any(g.is_roce_v2 and _routable(g.kind, family) for g in port.gids)


def _unroutable_finding(ports: list[Port], family: str) -> Finding:
    ports = [pair for pair in ports if pair[1].gids]  # the rest: listing-incomplete says
    return Finding(
        severity="warn",
        code="no-routable-gid",
        message=f"{_describe(ports)} have no routable RoCE v2 {_family_word(family)} GID "
        "(only RoCE v1 or link-local entries): left out of NCCL_IB_HCA",
    )


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
    inventory: NodeInventory,
    selected: list[Port],
    now: Current | None,
    gids: _Gids,
    *,
    version: tuple[int, ...] | None,
    detected: list[Detected],
    findings: list[Finding],
) -> None:
    visible = {n.name for n in inventory.netdevs} if inventory.netdevs else None
    known = [(d, p) for d, p in selected if p.gids]
    if not known:
        return  # no GID tables in the source (plain ibv_devinfo, ibstat): nothing to check
    family = gids.family
    good = [
        {g.index for g in p.gids if _gid_problem(p, g.index, family, visible) is None}
        for _, p in known
    ]
    common = sorted(set.intersection(*good))
    choices = _auto_choices(known, gids)
    auto = {(d.name, p.number): choice for (d, p), choice in choices}
    auto_bad = auto_gid_problems(choices, gids.nccl_family, visible)
    if now is not None:
        value, origin = now
        index = gid_index(value, version)
        if index < 0 and (version is None or version >= AUTO_GID_SINCE):
            # ncclIbGetGidIndex: 'if (*gidIndex >= 0) return' - any negative is automatic
            note = f"{value} is negative: NCCL chooses per port" + _auto_choice(auto, version)
            if not auto_bad:
                detected.append(
                    Detected(name="NCCL_IB_GID_INDEX", value=value, reason=note, confirmation=True)
                )
                return
            better = f"; GID {common[0]} works on every selected port" if common else ""
            findings.append(
                Finding(
                    severity="warn",
                    code="auto-gid-unroutable",
                    message=f"NCCL_IB_GID_INDEX={value} ({origin}) lets NCCL choose, and its "
                    f"choice does not route: {'; '.join(auto_bad)}{better}",
                )
            )
            return
        problems = [
            f"{d.name}:{p.number} {problem}"
            for d, p in known
            if (problem := _gid_problem(p, index, family, visible))
        ]
        if not problems:
            note = f"GID {index} is RoCE v2 {_family_word(family)} on every selected port"
            detected.append(
                Detected(
                    name="NCCL_IB_GID_INDEX",
                    value=value,
                    reason=note + _auto_note(index, auto, version),
                    confirmation=True,
                )
            )
            return
        facts = "; ".join(problems)
        if origin != "profile":
            better = f"; GID {common[0]} works on every selected port" if common else ""
            findings.append(
                Finding(
                    severity="warn",
                    code="gid-mismatch",
                    message=f"NCCL_IB_GID_INDEX={value} ({origin}) does not work on this "
                    f"node ({facts}){better}",
                )
            )
            return
        if common:
            best = common[0]
            detected.append(
                Detected(
                    name="NCCL_IB_GID_INDEX",
                    value=str(best),
                    replaces_profile=True,
                    reason=f"the profile's {value} does not work here ({facts}); GID {best} is "
                    f"RoCE v2 {_family_word(family)} on every selected port"
                    + _gid_examples(known, best)
                    + _auto_note(best, auto, version),
                )
            )
            findings.append(
                Finding(
                    severity="warn",
                    code="profile-gid-mismatch",
                    message=f"NCCL_IB_GID_INDEX={value} does not work on this node "
                    f"({facts}): using {best}",
                )
            )
            return
        findings.append(_no_common_gid(known, good, version, f"({facts})", auto_bad))
        detected.append(_unset_gid(version, f"the profile's {value} does not work here ({facts})"))
        return
    if common:
        best = common[0]
        detected.append(
            Detected(
                name="NCCL_IB_GID_INDEX",
                value=str(best),
                reason=f"GID {best} is RoCE v2 {_family_word(family)} on every selected port"
                + _gid_examples(known, best)
                + _auto_note(best, auto, version),
            )
        )
        return
    findings.append(_no_common_gid(known, good, version, "", auto_bad))
    detected.append(_unset_gid(version, "no single GID index works on every selected port"))


def _auto_choices(ports: Sequence[Port], gids: _Gids) -> list[tuple[Port, int | None]]:
    return [
        (
            (device, port),
            nccl_auto_gid_index(
                port.gids,
                family=gids.nccl_family,
                roce_version=gids.roce_version,
                address_range=gids.address_range,
            ),
        )
        for device, port in ports
    ]


def auto_gid_choices(
    ports: Sequence[Port], variables: Mapping[str, str]
) -> list[tuple[Port, int | None]]:
    """The GID NCCL >= 2.21.5 picks on each RoCE port when ``NCCL_IB_GID_INDEX`` is
    negative or unset, read with the NCCL_IB_ADDR_FAMILY / NCCL_IB_ROCE_VERSION_NUM /
    NCCL_IB_ADDR_RANGE in ``variables`` as NCCL reads them."""
    gids = _Gids(
        family="AF_INET",
        nccl_family=nccl_family(variables.get("NCCL_IB_ADDR_FAMILY")),
        roce_version=nccl_int(variables.get("NCCL_IB_ROCE_VERSION_NUM"), 2),
        address_range=variables.get("NCCL_IB_ADDR_RANGE"),
    )
    return _auto_choices(ports, gids)


def auto_gid_problems(
    choices: Sequence[tuple[Port, int | None]], family: str, visible: set[str] | None
) -> list[str]:
    """What is wrong with NCCL's automatic picks (a RoCE v1 GID, a link-local or
    empty one, one of a netdev outside this namespace), one line per bad port."""
    found = []
    for (device, port), choice in choices:
        if choice is None:
            continue
        problem = _gid_problem(port, choice, family, visible)
        if problem:
            found.append(f"{device.name}:{port.number}: {problem}")
    return found


def _family_word(family: str) -> str:
    return "IPv4-mapped" if family == "AF_INET" else "global IPv6"


def _gid_examples(selected: list[Port], index: int) -> str:
    shown = []
    for device, port in selected[:2]:
        gid = next(g for g in port.gids if g.index == index)
        address = gid.ipv4 or gid.gid
        shown.append(f"{device.name}: {address}" + (f" on {gid.netdev}" if gid.netdev else ""))
    return " (" + "; ".join(shown) + (", ..." if len(selected) > 2 else "") + ")"


def _auto_choice(
    auto: Mapping[tuple[str, int], int | None], version: tuple[int, ...] | None
) -> str:
    if version is not None and version < AUTO_GID_SINCE:
        return f"; NCCL {'.'.join(map(str, version))} predates the automatic choice (2.21.5)"
    return " (" + ", ".join(f"{d}:{p}->{c}" for (d, p), c in auto.items()) + ")"


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
    selected: list[Port],
    good: list[set[int]],
    version: tuple[int, ...] | None,
    facts: str,
    auto_bad: Sequence[str] = (),
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
        )
        + (f"; NCCL's own choice is wrong on {'; '.join(auto_bad)}" if auto and auto_bad else ""),
    )


def _unset_gid(version: tuple[int, ...] | None, why: str) -> Detected:
    auto = version is not None and version >= AUTO_GID_SINCE
    return Detected(
        name="NCCL_IB_GID_INDEX",
        value=None,
        replaces_profile=True,
        reason=why + ("; unset, NCCL >= 2.21.5 chooses per port" if auto else "; left unset"),
    )


# ---------------------------------------------------------------- NCCL_SOCKET_IFNAME


def _candidate(netdev: Netdev, family: str, addresses_known: bool) -> bool:
    if not netdev.is_up or netdev.kind is NetKind.LOOPBACK:
        return False
    if addresses_known:
        # "any": NCCL_SOCKET_FAMILY unset, where NCCL takes IPv4 and IPv6 alike
        # (ncclEnvSocketFamily() is -1 and findInterfaces filters no family)
        wanted = {"AF_INET": {"inet"}, "AF_INET6": {"inet6"}}.get(family, {"inet", "inet6"})
        return any(
            a.family in wanted and not a.address.startswith("fe80") for a in netdev.addresses
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
    inventory: NodeInventory,
    now: Current | None,
    socket_family: str | None,
    detected: list[Detected],
    findings: list[Finding],
) -> None:
    if "netdevs" in inventory.not_collected:
        return  # a listing says nothing of interfaces
    family = socket_family if socket_family in ("AF_INET", "AF_INET6") else "AF_INET"
    addresses_known = "addresses" not in inventory.not_collected
    candidates = sorted(
        (n for n in inventory.netdevs if _candidate(n, family, addresses_known)), key=_rank
    )
    if now is not None and len(now[0]) <= 1:
        # ncclFindInterfaces: 'if (env && strlen(env) > 1)', else the automatic choice
        value, origin = now
        findings.append(
            Finding(
                severity="warn",
                code="ifname-ignored",
                message=f"NCCL_SOCKET_IFNAME={value!r} ({origin}) is one character or less: "
                "NCCL ignores it and picks the interface itself",
            )
        )
        if origin != "profile":
            return
        now = None
    if not candidates:
        up = "up with an address" if addresses_known else "up (addresses are not recorded)"
        findings.append(
            Finding(
                severity="warn",
                code="no-socket-interface",
                message=f"no interface is {up}: NCCL cannot bootstrap "
                "('Bootstrap : no socket interface found')",
            )
        )
        return
    best = candidates[0]
    unknown = "" if addresses_known else " (addresses are not known from a recorded tree)"
    if now is None:
        detected.append(
            Detected(
                name="NCCL_SOCKET_IFNAME",
                value=f"={best.name}",
                reason=f"{best.name} is up ({_netdev_word(best)}){unknown}; unset, NCCL would "
                "pick by its own rules (ib* first, then any but docker and lo)",
            )
        )
        return
    value, origin = now
    spec = parse_list(value)
    matched = [n for n in candidates if spec.matches(n.name)]
    loopback = [
        n.name
        for n in inventory.netdevs
        if n.kind is NetKind.LOOPBACK and n.is_up and spec.matches(n.name)
    ]
    if matched and loopback:
        # the bootstrap takes the first match in getifaddrs order (bootstrap.cc asks
        # ncclFindInterfaces for one interface), and lo comes first there
        findings.append(
            Finding(
                severity="warn",
                code="ifname-loopback",
                message=f"NCCL_SOCKET_IFNAME={value} ({origin}) also selects "
                f"{', '.join(loopback)}, which NCCL's bootstrap may take first; "
                f"={matched[0].name} names one interface",
            )
        )
    if not matched and loopback:
        # ncclOsFindInterfaces takes any running interface the list names, lo included
        findings.append(
            Finding(
                severity="warn",
                code="ifname-loopback",
                message=f"NCCL_SOCKET_IFNAME={value} ({origin}) selects only {', '.join(loopback)}"
                f": NCCL uses it, but other nodes cannot reach this one there; ={best.name} would",
            )
        )
        return
    if not matched:
        problem = (
            "matches no interface that is up with an address here"
            if addresses_known
            else "matches no interface that is up here (addresses are not recorded)"
        )
        if origin != "profile":
            findings.append(
                Finding(
                    severity="warn",
                    code="ifname-mismatch",
                    message=f"NCCL_SOCKET_IFNAME={value} ({origin}) {problem}; ={best.name} would",
                )
            )
            return
        detected.append(
            Detected(
                name="NCCL_SOCKET_IFNAME",
                value=f"={best.name}",
                replaces_profile=True,
                reason=f"the profile's {value!r} {problem}; {best.name} is up "
                f"({_netdev_word(best)})",
            )
        )
        findings.append(
            Finding(
                severity="warn",
                code="profile-ifname-mismatch",
                message=f"NCCL_SOCKET_IFNAME={value} {problem}: using ={best.name}",
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
                message=f"NCCL_SOCKET_IFNAME={value} also matches {', '.join(avoid)}",
            )
        )
    detected.append(
        Detected(name="NCCL_SOCKET_IFNAME", value=value, reason=note, confirmation=True)
    )


def _netdev_word(netdev: Netdev) -> str:
    inet = [a.address for a in netdev.addresses if a.family == "inet"]
    return netdev.kind.value + (f", {inet[0]}" if inet else "")


# ---------------------------------------------------------------- for hpnet doctor

usable_ports = _usable_ports
port_kind = _port_kind
gid_problem = _gid_problem


def interface_candidates(inventory: NodeInventory, family: str = "AF_INET") -> list[Netdev]:
    """Interfaces NCCL can bootstrap on, best first (see :func:`_rank`)."""
    known = "addresses" not in inventory.not_collected
    return sorted((n for n in inventory.netdevs if _candidate(n, family, known)), key=_rank)
