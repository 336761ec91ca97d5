"""GPU <-> NIC PCIe distance in NCCL's and ``nvidia-smi topo -m``'s vocabulary.

``nvidia-smi topo -m`` legend (the same words as NCCL's path types in
``src/graph/topo.h``: PATH_PIX, PATH_PXB, PATH_PHB, PATH_NODE, PATH_SYS):

* ``PIX``  connection traversing at most a single PCIe bridge (one switch)
* ``PXB``  multiple PCIe bridges, without the PCIe host bridge
* ``PHB``  a PCIe host bridge (typically the CPU)
* ``NODE`` PCIe and the interconnect between host bridges within a NUMA node
* ``SYS``  PCIe and the SMP interconnect between NUMA nodes (QPI/UPI, xGMI)

The relation is computed from the sysfs PCI paths of the two devices
(:func:`hpnet.node.sysfs.pci_chain`): a chain is the root bus (one per host
bridge) followed by every bridge port down to the function. NCCL uses the result
to decide GPUDirect RDMA (``NCCL_NET_GDR_LEVEL``, default PXB) and NIC choice.
"""

from __future__ import annotations

import enum

__all__ = ["PcieRelation", "pcie_hops", "pcie_relation"]


class PcieRelation(str, enum.Enum):
    """Ordered from closest to farthest; ``UNKNOWN`` when a path is missing."""

    SELF = "X"
    PIX = "PIX"
    PXB = "PXB"
    PHB = "PHB"
    NODE = "NODE"
    SYS = "SYS"
    UNKNOWN = "UNKNOWN"


def pcie_relation(
    chain_a: tuple[str, ...],
    chain_b: tuple[str, ...],
    numa_a: int | None = None,
    numa_b: int | None = None,
) -> PcieRelation:
    """Classify the PCIe path between two devices.

    >>> pcie_relation(("pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0",
    ...                "0000:03:00.0"),
    ...               ("pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
    ...                "0000:04:00.0"))
    <PcieRelation.PIX: 'PIX'>

    Devices under different root buses share no host bridge: NODE when both sit on
    the same NUMA node (or when neither reports one, as on one-socket machines and
    most VMs), SYS when the NUMA nodes differ or only one is known.
    """
    if not chain_a or not chain_b:
        return PcieRelation.UNKNOWN
    if chain_a == chain_b:
        return PcieRelation.SELF
    if chain_a[0] != chain_b[0]:
        if numa_a == numa_b:
            return PcieRelation.NODE
        return PcieRelation.SYS
    common = _common_depth(chain_a, chain_b)
    # Functions of one device (0000:3b:00.0 and 0000:3b:00.1) hang off the same port.
    if _same_device(chain_a[-1], chain_b[-1]) and len(chain_a) == len(chain_b) == common + 1:
        return PcieRelation.PIX
    if common == 1:
        # Only the root bus is shared: the path goes through the host bridge.
        return PcieRelation.PHB
    # The deepest shared element is a bridge port. Below it, each side crosses
    # `len - common - 1` more bridge ports before its own function. A PCIe switch
    # is an upstream port with downstream ports below it, so two devices on one
    # switch each cross one downstream port: at most one port a side is PIX.
    below_a = len(chain_a) - common - 1
    below_b = len(chain_b) - common - 1
    if max(below_a, below_b) <= 1:
        return PcieRelation.PIX
    return PcieRelation.PXB


def _same_device(bdf_a: str, bdf_b: str) -> bool:
    return bdf_a.rsplit(".", 1)[0] == bdf_b.rsplit(".", 1)[0]


def pcie_hops(chain_a: tuple[str, ...], chain_b: tuple[str, ...]) -> int | None:
    """PCIe links between two devices under one root bus; None across root buses.

    Breaks ties within PIX/PXB: the NIC fewer links away is the one NCCL's path
    search prefers for a GPU.

    >>> pcie_hops(("pci0000:00", "0000:00:01.0", "0000:01:00.0"),
    ...           ("pci0000:00", "0000:00:01.0", "0000:02:00.0"))
    2
    """
    if not chain_a or not chain_b or chain_a[0] != chain_b[0]:
        return None
    common = _common_depth(chain_a, chain_b)
    return (len(chain_a) - common) + (len(chain_b) - common)


def _common_depth(chain_a: tuple[str, ...], chain_b: tuple[str, ...]) -> int:
    """How many leading elements (root bus, then bridge ports) the chains share."""
    common = 0
    for left, right in zip(chain_a, chain_b, strict=False):
        if left != right:
            break
        common += 1
    return common
