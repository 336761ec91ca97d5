"""`hpnet detect --sysfs-root` over the trees in tests/data/sysfs.

Expectations restate each tree's .source.txt ("What a correct tool concludes").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.detect import DetectOptions, NodeInventory, detect
from hpnet.node.netdevs import NetKind
from hpnet.node.snapshot import capture, materialize
from hpnet.node.topology import PcieRelation
from hpnet.rdma.model import GidKind, PhysState, PortState, RdmaDevice
from hpnet.runner import RecordedRunner
from tests.conftest import DATA

Tree = Callable[[str], Path]


def inventory(sysfs_tree: Tree, name: str) -> NodeInventory:
    # A recorded root never runs commands; an empty RecordedRunner proves it.
    runner = RecordedRunner({})
    result = detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))), runner=runner, env={}, python_path=[]
    )
    assert runner.calls == []
    return result


def devices(inv: NodeInventory) -> dict[str, RdmaDevice]:
    return {d.name: d for d in inv.rdma_devices}


def test_dgx_infiniband(sysfs_tree: Tree) -> None:
    inv = inventory(sysfs_tree, "cx6-ib-dgx")
    devs = devices(inv)
    assert list(devs) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    for name in ("mlx5_0", "mlx5_1", "mlx5_2"):
        port = devs[name].ports[0]
        assert (port.state, port.phys_state) == (PortState.ACTIVE, PhysState.LINK_UP)
        assert port.link_layer == "InfiniBand" and port.rate_gbps == 200.0
        assert port.routable_roce_v2_gids == ()  # GID indexes do not apply to IB
        # present, ACTIVE, but a recorded tree cannot show the real node's permissions
        uverbs = devs[name].uverbs
        assert uverbs is not None and uverbs.present and uverbs.accessible is None
        assert devs[name].usable_here is None
    down = devs["mlx5_3"].ports[0]
    assert (down.state, down.phys_state) == (PortState.DOWN, PhysState.POLLING)
    assert devs["mlx5_3"].usable_here is False
    assert {d.driver for d in devs.values()} == {"mlx5"}
    assert {d.kernel_driver for d in devs.values()} == {"mlx5_core"}
    assert [d.ports[0].netdev for d in devs.values()] == [
        "ibp12s0",
        "ibp18s0",
        "ibp75s0",
        "ibp84s0",
    ]
    assert [d.numa_node for d in devs.values()] == [3, 3, 1, 1]
    # IB ports: GID 0 from the port GUID, every other slot empty, no error
    gids = devs["mlx5_0"].ports[0].gids
    assert gids[0].kind is GidKind.IPV6_LINK_LOCAL and gids[0].netdev is None
    assert all(g.kind is GidKind.EMPTY for g in gids[1:]) and len(gids) >= 16
    assert inv.problems == ()
    # IPoIB netdevs
    kinds = {n.name: n.kind for n in inv.netdevs}
    assert kinds["ibp12s0"] is NetKind.IPOIB and kinds["docker0"] is NetKind.BRIDGE
    assert inv.gpudirect is not None and inv.gpudirect.nvidia_peermem
    assert inv.gpudirect.nvidia_module_version == "535.129.03"


def test_dgx_gpu_nic_topology(sysfs_tree: Tree) -> None:
    inv = inventory(sysfs_tree, "cx6-ib-dgx")
    assert [(g.index, g.pci_bus_id, g.numa_node) for g in inv.gpus] == [
        (0, "0000:07:00.0", 3),
        (1, "0000:0f:00.0", 3),
        (2, "0000:47:00.0", 1),
        (3, "0000:4e:00.0", 1),
    ]
    relation = {(t.gpu, t.rdma_device): t.relation for t in inv.topology}
    hops = {(t.gpu, t.rdma_device): t.hops for t in inv.topology}
    for gpu, nics in ((0, ("mlx5_0", "mlx5_1")), (1, ("mlx5_0", "mlx5_1")),
                      (2, ("mlx5_2", "mlx5_3")), (3, ("mlx5_2", "mlx5_3"))):  # fmt: skip
        for nic in ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"):
            expected = PcieRelation.PXB if nic in nics else PcieRelation.SYS
            assert relation[gpu, nic] is expected, (gpu, nic)
    # the source's link counts: GPU1-mlx5_0 and GPU3-mlx5_2 are 6 links, other PXB pairs 10
    assert hops[1, "mlx5_0"] == 6 and hops[3, "mlx5_2"] == 6
    assert hops[0, "mlx5_0"] == hops[0, "mlx5_1"] == hops[2, "mlx5_2"] == 10
    assert hops[0, "mlx5_2"] is None  # different root complexes


def test_roce_mixed_gid_table(sysfs_tree: Tree) -> None:
    inv = inventory(sysfs_tree, "cx-roce-mixed-gids")
    devs = devices(inv)
    assert [p.link_layer for d in devs.values() for p in d.ports] == ["Ethernet"] * 3
    assert devs["mlx4_0"].driver == "mlx4" and devs["mlx5_0"].driver == "mlx5"
    mlx4_p1, mlx4_p2 = devs["mlx4_0"].ports
    used = [g for g in mlx4_p1.gids if g.kind is not GidKind.EMPTY]
    assert [(g.index, g.type, g.ipv4, g.netdev) for g in used] == [
        (0, "IB/RoCE v1", None, "eth2"),
        (1, "IB/RoCE v1", "12.12.12.12", "eth2"),
        (2, "IB/RoCE v1", "10.10.10.2", "eth2.10"),
    ]  # fmt: skip
    assert not any(g.is_roce_v2 for p in devs["mlx4_0"].ports for g in p.gids)
    assert (mlx4_p1.netdev, mlx4_p2.netdev) == ("eth2", "eth3")
    mlx5 = devs["mlx5_0"].ports[0]
    assert mlx5.routable_roce_v2_gids == (3,) and mlx5.gids[3].ipv4 == "12.12.11.12"
    # the source: "mlx4_0 has no RoCE v2 GID ... must say so"
    assert mlx4_p1.routable_roce_v2_gids == mlx4_p2.routable_roce_v2_gids == ()
    assert mlx5.gids[1].is_roce_v2 and mlx5.gids[1].kind is GidKind.IPV6_LINK_LOCAL
    assert {n.name: n.kind for n in inv.netdevs}["eth2.10"] is NetKind.VLAN
    assert inv.gpus == () and inv.problems == ()


def test_erdma(sysfs_tree: Tree) -> None:
    inv = inventory(sysfs_tree, "erdma-alibaba")
    devs = devices(inv)
    assert list(devs) == ["erdma_0", "erdma_1"]
    for device in devs.values():
        assert device.driver == "erdma" and device.vendor_id == "0x1ded"
        assert device.ports[0].state is PortState.ACTIVE
        assert device.ports[0].link_layer == "Ethernet"
        assert all(g.type in (None, "RoCE v2") for g in device.ports[0].gids)
    # the netdev comes from gid_attrs/ndevs, not from the PCI function
    assert (devs["erdma_0"].ports[0].netdev, devs["erdma_1"].ports[0].netdev) == ("eth1", "eth2")
    assert devs["erdma_0"].ports[0].gids[1].ipv4 == "10.53.6.96"
    assert devs["erdma_0"].ports[0].routable_roce_v2_gids == (1,)
    assert devs["erdma_1"].ports[0].gids[1].ipv4 == "10.53.6.95"
    assert [d.numa_node for d in devs.values()] == [0, 1]
    assert {n.mtu for n in inv.netdevs if n.name.startswith("eth")} == {8500}


def test_container_without_uverbs_nodes(sysfs_tree: Tree) -> None:
    inv = inventory(sysfs_tree, "container-no-uverbs")
    devs = devices(inv)
    assert len(devs) == 4
    for device in devs.values():
        assert device.uverbs is not None
        assert not device.uverbs.present and not device.uverbs.accessible
        assert device.usable_here is False
    assert [n.kind for n in inv.netdevs] == [NetKind.VETH, NetKind.LOOPBACK]


def test_node_without_rdma(sysfs_tree: Tree) -> None:
    inv = inventory(sysfs_tree, "no-rdma-vm")
    assert inv.rdma_devices == () and inv.gpus == () and inv.topology == ()
    netdevs = {n.name: n for n in inv.netdevs}
    assert set(netdevs) == {"eth0", "ifb0", "ifb1", "lo"}
    assert netdevs["eth0"].pci_address == "0000:00:03.0" and netdevs["eth0"].mtu == 1400
    assert netdevs["eth0"].speed_mbps is None and netdevs["eth0"].kind is NetKind.PHYSICAL
    assert netdevs["lo"].kind is NetKind.LOOPBACK and netdevs["ifb0"].state == "down"
    assert inv.not_collected == ("addresses", "versions", "limits", "context")


@pytest.mark.parametrize("name", sorted(p.stem for p in (DATA / "sysfs").glob("*.tree")))
def test_capture_of_a_materialized_tree_reads_the_same(
    sysfs_tree: Tree, tmp_path: Path, name: str
) -> None:
    root = sysfs_tree(name)
    again = tmp_path / "again"
    again.mkdir()
    materialize(capture(root), again)
    first = detect(
        DetectOptions(sysfs_root=root), runner=RecordedRunner({}), env={}, python_path=[]
    )
    second = detect(
        DetectOptions(sysfs_root=again), runner=RecordedRunner({}), env={}, python_path=[]
    )
    assert first.rdma_devices == second.rdma_devices
    assert first.gpus == second.gpus and first.netdevs == second.netdevs


def test_missing_attributes_give_a_partial_result(sysfs_tree: Tree) -> None:
    root = sysfs_tree("cx6-ib-dgx")
    port = root / "sys/class/infiniband/mlx5_0/ports/1"
    (port / "state").unlink()
    (port / "link_layer").unlink()
    (root / "sys/class/infiniband/mlx5_1/fw_ver").unlink()
    inv = detect(DetectOptions(sysfs_root=root), runner=RecordedRunner({}), env={}, python_path=[])
    devs = devices(inv)
    assert devs["mlx5_0"].ports[0].state is PortState.UNKNOWN
    assert devs["mlx5_1"].fw_ver is None
    assert devs["mlx5_2"].ports[0].state is PortState.ACTIVE  # the rest is intact
    what = [p.what for p in inv.problems]
    assert "mlx5_0 port 1: state is missing or unreadable; reported as UNKNOWN" in what
    assert "mlx5_0 port 1: link_layer is missing" in what
    assert all(str(root) in p.where for p in inv.problems)


def test_missing_gid_table_and_parent_link_are_reported(sysfs_tree: Tree) -> None:
    import shutil

    root = sysfs_tree("cx6-ib-dgx")
    ib = root / "sys/class/infiniband"
    shutil.rmtree((ib / "mlx5_0/ports/1/gids").resolve())
    (ib / "mlx5_1/device").unlink()
    inv = detect(
        DetectOptions(sysfs_root=str(root)), runner=RecordedRunner({}), env={}, python_path=[]
    )
    devs = devices(inv)
    assert devs["mlx5_0"].ports[0].gids == ()
    assert devs["mlx5_1"].pci_address is None and devs["mlx5_1"].numa_node is None
    codes = {(p.code, p.what.split(":")[0].split(" ")[0]) for p in inv.problems}
    assert ("sysfs-unreadable", "mlx5_0") in codes
    assert ("rdma-no-parent", "mlx5_1") in codes
    # the GPU distance of a device without a parent is unknown, not guessed
    assert {t.relation for t in inv.topology if t.rdma_device == "mlx5_1"} == {PcieRelation.UNKNOWN}


def test_gpus_can_be_skipped_and_say_so(sysfs_tree: Tree) -> None:
    """`hpnet env` asks for no GPUs: none are read, and the inventory says so."""
    inv = detect(
        DetectOptions(sysfs_root=str(sysfs_tree("cx6-ib-dgx")), gpus=False),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )
    assert inv.gpus == () and inv.topology == () and inv.gpu_source == "none"
    assert {"gpus", "topology"} <= set(inv.not_collected)
    assert len(inv.rdma_devices) == 4
