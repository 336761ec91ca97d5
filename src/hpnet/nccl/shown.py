"""What a listing shows about RDMA ports, and what it leaves unknown (pure): each
unknown with the listing or command that would tell."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpnet.nccl.rules import port_kind
from hpnet.rdma.model import PortState

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory

__all__ = [
    "unknown_port_notes",
    "unknown_ports",
    "uverbs_short",
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
