"""PCIe relations, checked against the nvidia-smi topo -m legend (node/topology.py)."""

from __future__ import annotations

import pytest

from hpnet.node.sysfs import pci_chain
from hpnet.node.topology import PcieRelation, pcie_relation

ROOT0 = "pci0000:00"
ROOT1 = "pci0000:80"


@pytest.mark.parametrize(
    ("a", "b", "numa_a", "numa_b", "expected"),
    [
        # the same device
        ((ROOT0, "0000:00:01.0", "0000:01:00.0"), (ROOT0, "0000:00:01.0", "0000:01:00.0"),
         0, 0, PcieRelation.SELF),
        # two functions of one card
        ((ROOT0, "0000:00:01.0", "0000:01:00.0"), (ROOT0, "0000:00:01.0", "0000:01:00.1"),
         0, 0, PcieRelation.PIX),
        # one switch: root port -> upstream port -> two downstream ports
        ((ROOT0, "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"),
         (ROOT0, "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0"),
         0, 0, PcieRelation.PIX),
        # two levels of switches (DGX-style): different second-level switches
        ((ROOT0, "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0",
          "0000:04:00.0", "0000:05:00.0"),
         (ROOT0, "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:06:00.0",
          "0000:07:00.0", "0000:08:00.0"),
         0, 0, PcieRelation.PXB),
        # different root ports of one host bridge
        ((ROOT0, "0000:00:01.0", "0000:01:00.0"), (ROOT0, "0000:00:03.0", "0000:02:00.0"),
         0, 0, PcieRelation.PHB),
        # different host bridges, same NUMA node
        ((ROOT0, "0000:00:01.0", "0000:01:00.0"), (ROOT1, "0000:80:01.0", "0000:81:00.0"),
         0, 0, PcieRelation.NODE),
        # different NUMA nodes
        ((ROOT0, "0000:00:01.0", "0000:01:00.0"), (ROOT1, "0000:80:01.0", "0000:81:00.0"),
         0, 1, PcieRelation.SYS),
        # one NUMA node unknown: cannot claim NODE
        ((ROOT0, "0000:00:01.0", "0000:01:00.0"), (ROOT1, "0000:80:01.0", "0000:81:00.0"),
         None, 1, PcieRelation.SYS),
        # a virtual device has no PCI path
        ((), (ROOT0, "0000:00:01.0"), None, None, PcieRelation.UNKNOWN),
    ],
)  # fmt: skip
def test_pcie_relation(
    a: tuple[str, ...],
    b: tuple[str, ...],
    numa_a: int | None,
    numa_b: int | None,
    expected: PcieRelation,
) -> None:
    assert pcie_relation(a, b, numa_a, numa_b) is expected
    assert pcie_relation(b, a, numa_b, numa_a) is expected  # symmetric


def test_pci_chain_from_sysfs_paths() -> None:
    path = "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0"
    assert pci_chain(path) == ("pci0000:3a", "0000:3a:00.0", "0000:3b:00.0")
    # a virtio netdev: the function is the last PCI component
    assert pci_chain("sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0") == (
        "pci0000:00",
        "0000:00:03.0",
    )
    assert pci_chain("sys/devices/virtual/net/lo") == ()
