"""The RDMA device model shared by the sysfs reader and the listing parsers.

Values keep the vocabulary of the kernel and rdma-core (``ACTIVE``, ``LinkUp``,
``InfiniBand``, ``RoCE v2``) so that what hpnet prints can be matched against
``ibv_devinfo`` and sysfs by eye.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import ClassVar

__all__ = [
    "GID_TYPE_ROCE_V1",
    "GID_TYPE_ROCE_V2",
    "Gid",
    "GidKind",
    "PhysState",
    "PortState",
    "RdmaDevice",
    "RdmaPort",
    "UverbsNode",
]

#: ``gid_attrs/types/N`` values (kernel ``drivers/infiniband/core/cache.c``, ``gid_type_str``).
GID_TYPE_ROCE_V1 = "IB/RoCE v1"
GID_TYPE_ROCE_V2 = "RoCE v2"


class GidKind(str, enum.Enum):
    """What a GID's address is, which decides whether RoCE can route with it."""

    IPV4_MAPPED = "ipv4-mapped"  # ::ffff:a.b.c.d, routable RoCE v2 over IPv4
    IPV6_GLOBAL = "ipv6-global"  # any routable IPv6: global unicast or ULA (fd00::/8)
    IPV6_LINK_LOCAL = "ipv6-link-local"  # fe80::/10: not routable across subnets
    EMPTY = "empty"  # all zeros: an unused slot


class PortState(str, enum.Enum):
    """``enum ib_port_state`` (include/rdma/ib_verbs.h); sysfs prints ``4: ACTIVE``."""

    NOP = "NOP"
    DOWN = "DOWN"
    INIT = "INIT"
    ARMED = "ARMED"
    ACTIVE = "ACTIVE"
    ACTIVE_DEFER = "ACTIVE_DEFER"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def from_code(cls, code: int) -> PortState:
        """Map the numeric state (0-5) to its name; other numbers are UNKNOWN."""
        order = (cls.NOP, cls.DOWN, cls.INIT, cls.ARMED, cls.ACTIVE, cls.ACTIVE_DEFER)
        return order[code] if 0 <= code < len(order) else cls.UNKNOWN


class PhysState(str, enum.Enum):
    """Physical port state (IBTA PortPhysicalState); sysfs prints ``5: LinkUp``."""

    SLEEP = "Sleep"
    POLLING = "Polling"
    DISABLED = "Disabled"
    TRAINING = "PortConfigurationTraining"
    LINK_UP = "LinkUp"
    LINK_ERROR_RECOVERY = "LinkErrorRecovery"
    PHY_TEST = "Phy Test"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def from_code(cls, code: int) -> PhysState:
        """Map the numeric physical state (1-7) to its name; others are UNKNOWN."""
        order = (
            cls.SLEEP,
            cls.POLLING,
            cls.DISABLED,
            cls.TRAINING,
            cls.LINK_UP,
            cls.LINK_ERROR_RECOVERY,
            cls.PHY_TEST,
        )
        return order[code - 1] if 1 <= code <= len(order) else cls.UNKNOWN


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Gid:
    """One entry of a port's GID table.

    ``gid`` is written as sysfs writes it: eight groups of four hex digits.
    ``type`` is ``IB/RoCE v1`` or ``RoCE v2``, or None when the source does not say
    (sysfs answers EINVAL for an empty slot). ``netdev`` is the network interface a
    RoCE GID belongs to; NCCL can only use a GID whose netdev is in its namespace.
    """

    index: int
    gid: str
    type: str | None
    netdev: str | None
    kind: GidKind
    ipv4: str | None = None

    @property
    def is_roce_v2(self) -> bool:
        return self.type == GID_TYPE_ROCE_V2


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RdmaPort:
    """One port of an RDMA device. Fields a source does not report are None."""

    number: int
    state: PortState
    phys_state: PhysState | None = None
    link_layer: str | None = None  # "InfiniBand" or "Ethernet"
    rate: str | None = None  # as reported, e.g. "200 Gb/sec (4X HDR)"
    rate_gbps: float | None = None
    lid: int | None = None
    sm_lid: int | None = None
    active_mtu: int | None = None
    netdev: str | None = None  # the port's own interface (RoCE netdev or IPoIB)
    gids: tuple[Gid, ...] = ()

    #: derived values published in JSON (hpnet.jsonout)
    JSON_PROPERTIES: ClassVar[tuple[str, ...]] = ("routable_roce_v2_gids",)

    @property
    def is_active(self) -> bool:
        return self.state is PortState.ACTIVE

    @property
    def routable_roce_v2_gids(self) -> tuple[int, ...]:
        """Indexes of RoCE v2 GIDs NCCL can route with (IPv4-mapped or global IPv6);
        empty on InfiniBand ports, where GID indexes do not apply."""
        if self.link_layer == "InfiniBand":
            return ()
        routable = (GidKind.IPV4_MAPPED, GidKind.IPV6_GLOBAL)
        return tuple(g.index for g in self.gids if g.is_roce_v2 and g.kind in routable)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class UverbsNode:
    """The ``/dev/infiniband/uverbsN`` character device that opens an RDMA device.

    A device visible in sysfs but without this node (or without permission on it)
    cannot be used by NCCL in this container.
    """

    name: str  # uverbs0
    path: str  # /dev/infiniband/uverbs0, relative to the inspected root
    present: bool
    #: may this process open it (read and write); None when the root is a recorded
    #: tree, whose stand-in files say nothing of the real node's permissions
    accessible: bool | None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RdmaDevice:
    """An RDMA device (HCA), from sysfs or from a saved tool listing.

    ``driver`` is the rdma-core provider family (``mlx5``, ``erdma``, ``efa``…),
    the name NCCL_IB_HCA prefixes and provider libraries use; ``kernel_driver`` is
    what the PCI function is bound to (``mlx5_core``), when known.
    """

    name: str
    driver: str
    kernel_driver: str | None = None
    transport: str | None = None
    node_guid: str | None = None
    sys_image_guid: str | None = None
    fw_ver: str | None = None
    hca_type: str | None = None
    board_id: str | None = None
    node_type: str | None = None
    vendor_id: str | None = None
    vendor_part_id: str | None = None
    pci_address: str | None = None
    pci_path: tuple[str, ...] = ()
    numa_node: int | None = None
    netdevs: tuple[str, ...] = ()
    uverbs: UverbsNode | None = None
    ports: tuple[RdmaPort, ...] = ()

    #: derived values published in JSON (hpnet.jsonout)
    JSON_PROPERTIES: ClassVar[tuple[str, ...]] = ("usable_here",)

    @property
    def active_ports(self) -> tuple[RdmaPort, ...]:
        return tuple(p for p in self.ports if p.is_active)

    @property
    def usable_here(self) -> bool | None:
        """Can a process here open it and send on it: an ACTIVE port and an openable
        ``/dev/infiniband/uverbsN``.

        False as soon as one of them is missing; None when the source cannot tell
        (a listing, or a recorded tree that cannot show permissions).
        """
        if self.uverbs is not None and not self.uverbs.present:
            return False
        maybe = [p for p in self.ports if p.state in (PortState.ACTIVE, PortState.UNKNOWN)]
        if self.ports and not maybe:
            return False
        if self.uverbs is None or self.uverbs.accessible is None or not self.active_ports:
            return None  # a source that cannot show permissions, or port states
        return self.uverbs.accessible
