"""The node-dependent NCCL rules that ``hpnet env`` and ``hpnet doctor`` share (pure).

Each rule is a plain function of data (an :class:`~hpnet.rdma.model.RdmaDevice`, a
port, a GID table, netdevs, a variable's text) that answers one question the way
NCCL answers it: which ports NCCL can open, what kind of port it is, whether a GID
routes and in which family, which GID indexes work on every port, which interfaces
NCCL can bootstrap on, which NCCL release a version string names, and the words
hpnet prints for a transport. :mod:`hpnet.nccl.fill` (the detected layer of ``hpnet
env``) and the doctor's checks both call these, so that a rule has one definition.

Sources, NVIDIA/nccl at v2.29.2 unless said: ``src/transport/net_ib/init.cc``
(device and port discovery), ``src/transport/net_ib/connect.cc`` (``ncclIbGetGidIndex``,
``envIbAddrFamily``, ``ncclIbRtrQp``; ``src/transport/net_ib.cc`` before 2.23),
``src/misc/socket.cc`` (``ncclFindInterfaces``, ``findInterfaces``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from hpnet.nccl.catalog import nccl_int
from hpnet.nccl.gid_select import AUTO_GID_SINCE, nccl_auto_gid_index
from hpnet.node.netdevs import Netdev, NetKind
from hpnet.rdma.model import GidKind, PortState, RdmaDevice, RdmaPort

__all__ = [
    "FAMILIES",
    "TRANSPORT_WORDS",
    "VARIABLE_NAME",
    "VARIABLE_NAME_PATTERN",
    "Port",
    "auto_gid_choices",
    "auto_gid_problems",
    "common_gid_indexes",
    "family_word",
    "gid_family",
    "gid_index",
    "gid_problem",
    "good_gid_indexes",
    "has_routable_gid",
    "interface_candidates",
    "interface_rank",
    "is_interface_candidate",
    "is_variable_name",
    "nccl_family",
    "port_kind",
    "routable",
    "socket_family",
    "transport_word",
    "usable_ports",
    "version_tuple",
]

#: one port of one device
Port = tuple[RdmaDevice, RdmaPort]

#: the address families NCCL accepts in NCCL_IB_ADDR_FAMILY and NCCL_SOCKET_FAMILY
FAMILIES = ("AF_INET", "AF_INET6")

#: what hpnet calls each transport a port can carry (:func:`port_kind`'s words)
TRANSPORT_WORDS: Mapping[str, str] = {"ib": "InfiniBand", "roce": "RoCE", "erdma": "eRDMA"}

#: a name a POSIX shell can export and unset (``name`` in POSIX XBD 3.235); the one
#: definition every reader of ``NAME=value`` uses, so that no name carries shell syntax
VARIABLE_NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
VARIABLE_NAME = re.compile(VARIABLE_NAME_PATTERN + r"\Z")

#: drivers whose ports are Ethernet whatever a listing prints (soft-RoCE, eRDMA)
_ETHERNET_DRIVERS = frozenset({"rxe", "erdma"})

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


def is_variable_name(name: str) -> bool:
    """Whether ``name`` is a shell variable name (:data:`VARIABLE_NAME`).

    >>> is_variable_name("NCCL_IB_HCA"), is_variable_name("NCCL_X$(id)"), is_variable_name("A\\n")
    (True, False, False)
    """
    return VARIABLE_NAME.match(name) is not None


def transport_word(kind: str) -> str:
    """The word hpnet prints for a transport (:data:`TRANSPORT_WORDS`).

    >>> transport_word("roce"), transport_word("ib")
    ('RoCE', 'InfiniBand')
    """
    return TRANSPORT_WORDS[kind]


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


# ---------------------------------------------------------------- ports


def usable_ports(device: RdmaDevice) -> list[RdmaPort]:
    """ACTIVE ports of a device a process here can open (net_ib init.cc takes only
    ports whose ``ibv_query_port`` state is ``IBV_PORT_ACTIVE``). A port whose state
    the source does not show (``show_gids``, ``rdma link`` of an unknown port, an IPoIB
    interface ``ibdev2netdev`` shows down) is not usable: what a listing does not say
    stays unknown. A device without its uverbs node here, or whose name a listing cut
    off (``(mlx5_...``), has none.

    >>> up = RdmaPort(number=1, state=PortState.ACTIVE)
    >>> down = RdmaPort(number=2, state=PortState.DOWN)
    >>> [p.number for p in usable_ports(RdmaDevice(name="mlx5_0", driver="mlx5", ports=(up, down)))]
    [1]
    """
    if device.usable_here is False or device.name.startswith("("):
        return []
    return [p for p in device.ports if p.state is PortState.ACTIVE]


def port_kind(device: RdmaDevice, port: RdmaPort) -> str:
    """``ib``, ``roce``, ``erdma``, or ``unknown``. NCCL's IB transport takes only ports
    whose link layer is InfiniBand or Ethernet (net_ib init.cc skips the rest, EFA's
    ``Unspecified`` among them); a listing that does not print it leaves it unknown,
    except for drivers whose ports are always Ethernet (rxe, erdma).

    >>> port = RdmaPort(number=1, state=PortState.ACTIVE, link_layer="Ethernet")
    >>> port_kind(RdmaDevice(name="mlx5_0", driver="mlx5"), port)
    'roce'
    >>> port_kind(RdmaDevice(name="erdma_0", driver="erdma"), port)
    'erdma'
    """
    if device.driver == "erdma":
        return "erdma"
    if device.driver == "efa":
        # the efa kernel driver reports the link layer unspecified (efa_query_port),
        # whatever an old ibv_devinfo prints for it ("InfiniBand"): NCCL's IB transport
        # skips the port; aws-ofi-nccl (libfabric) is what uses EFA
        return "unknown"
    link = port.link_layer or ("Ethernet" if device.driver in _ETHERNET_DRIVERS else None)
    if link is None and any(g.is_roce_v2 for g in port.gids):
        # a RoCE v2 GID exists only on an Ethernet port: the kernel gives an InfiniBand
        # port IB_GID_TYPE_IB entries alone (drivers/infiniband/core/cache.c), so a
        # show_gids table that prints "v2" rows shows the link layer too
        link = "Ethernet"
    if link == "InfiniBand":
        return "ib"
    if link == "Ethernet":
        return "roce"
    return "unknown"


# ---------------------------------------------------------------- GIDs


def nccl_family(value: str | None) -> str:
    """The family NCCL's automatic GID choice uses for ``NCCL_IB_ADDR_FAMILY``:
    ``envIbAddrFamily`` (connect.cc) compares with strcmp against ``AF_INET`` /
    ``AF_INET6``, anything else is AF_INET. NCCL_SOCKET_FAMILY plays no part here.

    >>> nccl_family("AF_INET6"), nccl_family("af_inet6"), nccl_family(None)
    ('AF_INET6', 'AF_INET', 'AF_INET')
    """
    return value if value in FAMILIES else "AF_INET"


def gid_family(ib_family: str | None, socket_family: str | None) -> str:
    """The family a GID must have for hpnet to call it routable: NCCL_IB_ADDR_FAMILY,
    else NCCL_SOCKET_FAMILY (each only when NCCL accepts its value), else AF_INET.

    NCCL's own choice reads only NCCL_IB_ADDR_FAMILY (:func:`nccl_family`); hpnet
    also honours NCCL_SOCKET_FAMILY, which says the user's network is IPv6, when it
    chooses an index itself (NCCL.md: the socket family also steers RoCE GID choice).

    >>> gid_family(None, "AF_INET6"), gid_family("AF_INET", "AF_INET6"), gid_family("x", None)
    ('AF_INET6', 'AF_INET', 'AF_INET')
    """
    return next((f for f in (ib_family, socket_family) if f in FAMILIES), "AF_INET")


def gid_index(value: str | None, version: tuple[int, ...] | None) -> int:
    """The index NCCL reads from ``NCCL_IB_GID_INDEX`` (``ncclParamIbGidIndex``:
    strtoll, ``0x3`` is 3; unset, empty or out of range: the default, -1 from 2.21.5,
    0 before). A negative result means "choose automatically" from 2.21.5 on
    (``ncclIbGetGidIndex``: ``if (*gidIndex >= 0) return``).

    >>> gid_index("0x3", None), gid_index(None, (2, 21, 5)), gid_index("", (2, 18, 3))
    (3, -1, 0)
    """
    default = 0 if version is not None and version < AUTO_GID_SINCE else -1
    return nccl_int(value, default)


def routable(gid_kind: GidKind, family: str) -> bool:
    """Whether a GID of this kind routes RoCE v2 in ``family``: IPv4-mapped for AF_INET,
    a global IPv6 address for AF_INET6 (a link-local ``fe80::`` GID does not cross a
    router; connect.cc's ``ncclIbGidIsLinkLocal`` rejects it too).

    >>> routable(GidKind.IPV4_MAPPED, "AF_INET"), routable(GidKind.IPV4_MAPPED, "AF_INET6")
    (True, False)
    >>> routable(GidKind.IPV6_LINK_LOCAL, "AF_INET6")
    False
    """
    if family == "AF_INET6":
        return gid_kind is GidKind.IPV6_GLOBAL
    return gid_kind is GidKind.IPV4_MAPPED


def family_word(family: str) -> str:
    """What a routable GID of ``family`` is called in hpnet's messages.

    >>> family_word("AF_INET"), family_word("AF_INET6")
    ('IPv4-mapped', 'global IPv6')
    """
    return "IPv4-mapped" if family == "AF_INET" else "global IPv6"


def has_routable_gid(port: RdmaPort, family: str) -> bool:
    """Whether a port can route RoCE v2: a known RoCE v2 GID of the family. A table a
    listing does not show (plain ``ibv_devinfo``, ``ibstat``, ``rdma link``) knows none:
    an Ethernet port without a known RoCE v2 GID is not a RoCE HCA.

    >>> from hpnet.rdma.gid import make_gid
    >>> gid = make_gid(3, "::ffff:10.0.0.5", "RoCE v2", "eth0")
    >>> has_routable_gid(RdmaPort(number=1, state=PortState.ACTIVE, gids=(gid,)), "AF_INET")
    True
    """
    return any(g.is_roce_v2 and routable(g.kind, family) for g in port.gids)


def gid_problem(port: RdmaPort, index: int, family: str, visible: set[str] | None) -> str | None:
    """Why GID ``index`` of ``port`` cannot carry RoCE v2 traffic in ``family``, or None
    when it can: absent, empty, not RoCE v2 (NCCL_IB_ROCE_VERSION_NUM defaults to 2),
    not routable (:func:`routable`), or its netdev is not in this network namespace
    (``visible``: the netdevs here, None when unknown; ``ibv_modify_qp`` then fails
    with ENODEV).

    >>> from hpnet.rdma.gid import make_gid
    >>> v1 = make_gid(2, "::ffff:10.0.0.5", "IB/RoCE v1", "eth0")
    >>> gid_problem(RdmaPort(number=1, state=PortState.ACTIVE, gids=(v1,)), 2, "AF_INET", None)
    'GID 2 is IB/RoCE v1, not RoCE v2'
    """
    gid = next((g for g in port.gids if g.index == index), None)
    if gid is None:
        return f"has no GID {index}"
    if gid.kind is GidKind.EMPTY:
        return f"GID {index} is empty"
    if not gid.is_roce_v2:
        return f"GID {index} is {gid.type or 'of unknown type'}, not RoCE v2"
    if not routable(gid.kind, family):
        return f"GID {index} is {gid.kind.value}, not {family_word(family)}"
    if visible is not None and gid.netdev and gid.netdev not in visible:
        return f"GID {index} belongs to {gid.netdev}, which is not in this network namespace"
    return None


def good_gid_indexes(port: RdmaPort, family: str, visible: set[str] | None) -> set[int]:
    """The indexes of ``port`` that :func:`gid_problem` finds nothing wrong with.

    >>> from hpnet.rdma.gid import make_gid
    >>> v2 = make_gid(3, "::ffff:10.0.0.5", "RoCE v2", "eth0")
    >>> good_gid_indexes(RdmaPort(number=1, state=PortState.ACTIVE, gids=(v2,)), "AF_INET", None)
    {3}
    """
    return {g.index for g in port.gids if gid_problem(port, g.index, family, visible) is None}


def common_gid_indexes(ports: Iterable[Port], family: str, visible: set[str] | None) -> list[int]:
    """The indexes that work on every port, lowest first: the values one
    NCCL_IB_GID_INDEX can take (NCCL applies one index to every port). No ports: none.

    >>> from hpnet.rdma.gid import make_gid
    >>> def port(*indexes: int) -> RdmaPort:
    ...     gids = tuple(make_gid(i, "::ffff:10.0.0.5", "RoCE v2", None) for i in indexes)
    ...     return RdmaPort(number=1, state=PortState.ACTIVE, gids=gids)
    >>> mlx5 = RdmaDevice(name="mlx5_0", driver="mlx5")
    >>> common_gid_indexes([(mlx5, port(3)), (mlx5, port(1, 3))], "AF_INET", None)
    [3]
    """
    good = [good_gid_indexes(port, family, visible) for _, port in ports]
    return sorted(set.intersection(*good)) if good else []


def auto_gid_choices(
    ports: Sequence[Port], variables: Mapping[str, str]
) -> list[tuple[Port, int | None]]:
    """The GID NCCL >= 2.21.5 picks on each RoCE port when ``NCCL_IB_GID_INDEX`` is
    negative or unset (:func:`~hpnet.nccl.gid_select.nccl_auto_gid_index`, after
    ``ncclIbGetGidIndex``), with NCCL_IB_ADDR_FAMILY / NCCL_IB_ROCE_VERSION_NUM
    (``ncclParamIbRoceVersionNum``: strtoll, default 2) / NCCL_IB_ADDR_RANGE in
    ``variables`` read as NCCL reads them. None: the table cannot be replayed.

    >>> from hpnet.rdma.gid import make_gid
    >>> gids = (make_gid(0, "fe80::1", "RoCE v2", "eth0"),
    ...         make_gid(1, "::ffff:10.0.0.5", "RoCE v2", "eth0"))
    >>> port = RdmaPort(number=1, state=PortState.ACTIVE, gids=gids)
    >>> [c for _, c in auto_gid_choices([(RdmaDevice(name="d", driver="mlx5"), port)], {})]
    [1]
    """
    family = nccl_family(variables.get("NCCL_IB_ADDR_FAMILY"))
    version = nccl_int(variables.get("NCCL_IB_ROCE_VERSION_NUM"), 2)
    address_range = variables.get("NCCL_IB_ADDR_RANGE")
    return [
        (
            (device, port),
            nccl_auto_gid_index(
                port.gids, family=family, roce_version=version, address_range=address_range
            ),
        )
        for device, port in ports
    ]


def auto_gid_problems(
    choices: Sequence[tuple[Port, int | None]], family: str, visible: set[str] | None
) -> list[str]:
    """What is wrong with NCCL's automatic picks (a RoCE v1 GID, a link-local or
    empty one, one of a netdev outside this namespace), one line per bad port.

    >>> from hpnet.rdma.gid import make_gid
    >>> v1 = make_gid(0, "::ffff:10.0.0.5", "IB/RoCE v1", "eth0")
    >>> port = RdmaPort(number=1, state=PortState.ACTIVE, gids=(v1,))
    >>> auto_gid_problems([((RdmaDevice(name="d", driver="mlx5"), port), 0)], "AF_INET", None)
    ['d:1: GID 0 is IB/RoCE v1, not RoCE v2']
    """
    found = []
    for (device, port), choice in choices:
        if choice is None:
            continue
        problem = gid_problem(port, choice, family, visible)
        if problem:
            found.append(f"{device.name}:{port.number}: {problem}")
    return found


# ---------------------------------------------------------------- interfaces


def socket_family(value: str | None) -> str:
    """The family NCCL's interface search filters on: ``NCCL_SOCKET_FAMILY`` when it is
    AF_INET or AF_INET6, else ``any`` (``envSocketFamily`` returns -1 and
    ``findInterfaces`` in socket.cc filters no family).

    >>> socket_family("AF_INET6"), socket_family(None), socket_family("inet")
    ('AF_INET6', 'any', 'any')
    """
    return value if value in FAMILIES else "any"


def is_interface_candidate(netdev: Netdev, family: str, addresses_known: bool) -> bool:
    """Whether NCCL can bootstrap on ``netdev``: up, not loopback, and (when addresses
    are known) with an address of ``family`` (``any``: IPv4 or IPv6, as
    ``findInterfaces`` takes them when NCCL_SOCKET_FAMILY is unset) that is not
    link-local: NCCL may take an ``fe80::`` address, but other nodes cannot reach it
    without a scope, so hpnet does not count it. A recorded tree does not hold
    addresses: an up interface may do.

    >>> lo = Netdev(name="lo", state="unknown", mtu=None, speed_mbps=None, kind=NetKind.LOOPBACK)
    >>> is_interface_candidate(lo, "any", False)
    False
    """
    if not netdev.is_up or netdev.kind is NetKind.LOOPBACK:
        return False
    if addresses_known:
        wanted = {"AF_INET": {"inet"}, "AF_INET6": {"inet6"}}.get(family, {"inet", "inet6"})
        return any(
            a.family in wanted and not a.address.startswith("fe80") for a in netdev.addresses
        )
    return True


def interface_rank(netdev: Netdev) -> tuple[int, str]:
    """Sort key, best first: bonds, physical NICs, VLANs, macvlan/ipvlan, IPoIB (0-5),
    then veths, bridges and other virtual interfaces (10-13), then the rest and any
    named like a container or VM bridge (20; ``docker*``, ``virbr*``, ``cni*``...).

    >>> interface_rank(Netdev(name="docker0", state="up", mtu=None, speed_mbps=None,
    ...                       kind=NetKind.BRIDGE))
    (20, 'docker0')
    """
    avoided = netdev.name.startswith(_AVOID_PREFIXES)
    if netdev.kind in _PREFERRED and not avoided:
        return (_PREFERRED.index(netdev.kind), netdev.name)
    if netdev.kind in _FALLBACK and not avoided:
        return (10 + _FALLBACK.index(netdev.kind), netdev.name)
    return (20, netdev.name)


def interface_candidates(
    netdevs: Iterable[Netdev], family: str = "any", *, addresses_known: bool = True
) -> list[Netdev]:
    """Interfaces NCCL can bootstrap on (:func:`is_interface_candidate`), best first
    (:func:`interface_rank`).

    >>> up = [Netdev(name=n, state="up", mtu=None, speed_mbps=None, kind=k) for n, k in
    ...       (("docker0", NetKind.BRIDGE), ("eth0", NetKind.VETH), ("bond0", NetKind.BOND))]
    >>> [n.name for n in interface_candidates(up, addresses_known=False)]
    ['bond0', 'eth0', 'docker0']
    """
    chosen = (n for n in netdevs if is_interface_candidate(n, family, addresses_known))
    return sorted(chosen, key=interface_rank)
