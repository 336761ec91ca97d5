"""Parsers of saved tool output, on real listings from tests/data/listings.

Every expectation here restates the "what a correct tool concludes" section of
the listing's .source.txt.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpnet.detect import inventory_from_listings
from hpnet.errors import ParseError
from hpnet.rdma.listings import (
    detect_listing_kind,
    listing_sections,
    merge_devices,
    parse_ibdev2netdev,
    parse_ibv_devinfo,
    parse_listing,
)
from hpnet.rdma.model import GidKind, PhysState, PortState, RdmaDevice
from hpnet.render.detect import render_inventory
from tests.conftest import listing_text


def parse(name: str) -> tuple[str, dict[str, RdmaDevice], list[str]]:
    kind, (devices, problems) = parse_listing(listing_text(name), source=name)
    return kind, {d.name: d for d in devices}, [p.code for p in problems]


def states(devices: dict[str, RdmaDevice]) -> dict[str, tuple[PortState, ...]]:
    return {name: tuple(p.state for p in d.ports) for name, d in devices.items()}


A, D, INIT, U = PortState.ACTIVE, PortState.DOWN, PortState.INIT, PortState.UNKNOWN


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ibv_devinfo-erdma.txt", "ibv_devinfo"),
        ("ibv_devinfo-v-roce-cx6-eth.txt", "ibv_devinfo"),
        ("ibstat-cx3-ib-2ca-dualport-active.txt", "ibstat"),
        ("show_gids-mlnx-8hca-mixed-ib-row.txt", "show_gids"),
        ("ibdev2netdev-mlnx-8hca-mixed.txt", "ibdev2netdev"),
        ("ibdev2netdev-v-mlnx-8hca-mixed.txt", "ibdev2netdev"),
        ("rdma_link-irdma-e810-one-down.txt", "rdma link"),
        ("ibv_devices-azure-2dev.txt", "ibv_devices"),
    ],
)
def test_listing_kind_is_detected(name: str, kind: str) -> None:
    assert detect_listing_kind(listing_text(name)) == kind


def test_ibv_devinfo_eight_hcas_mixed_ib_and_ethernet() -> None:
    _, devices, problems = parse("ibv_devinfo-mlnx-8hca-mixed-ib-eth-port-down.txt")
    assert problems == []
    assert states(devices) == {
        "mlx5_0": (D,), "mlx5_1": (D,), "mlx5_2": (A,), "mlx5_3": (A,),
        "mlx5_4": (D,), "mlx5_5": (A,), "mlx5_6": (D,), "mlx5_7": (D,),
    }  # fmt: skip
    ib = devices["mlx5_5"]
    assert ib.ports[0].link_layer == "InfiniBand"
    assert (ib.ports[0].lid, ib.ports[0].sm_lid, ib.ports[0].active_mtu) == (18, 4, 4096)
    assert ib.fw_ver == "20.30.1004" and ib.vendor_part_id == "4123"
    assert devices["mlx5_2"].ports[0].link_layer == "Ethernet"
    assert {d.driver for d in devices.values()} == {"mlx5"}


def test_ibv_devinfo_dual_port_connectx3() -> None:
    _, devices, _ = parse("ibv_devinfo-cx3-ib-2hca-port2-down.txt")
    assert states(devices) == {"mlx4_0": (A, D), "mlx4_1": (A, D)}
    assert devices["mlx4_1"].ports[0].lid == 22 and devices["mlx4_0"].ports[0].sm_lid == 18
    assert devices["mlx4_0"].driver == "mlx4"


def test_ibv_devinfo_azure_ib_vf_and_ethernet_vf() -> None:
    _, devices, _ = parse("ibv_devinfo-azure-cx6vf-ib-plus-cx4lx-eth.txt")
    assert devices["mlx5_0"].ports[0].link_layer == "InfiniBand"
    assert devices["mlx5_0"].ports[0].lid == 383
    assert devices["mlx5_1"].ports[0].link_layer == "Ethernet"
    assert devices["mlx5_1"].ports[0].active_mtu == 1024


def test_ibv_devinfo_erdma_is_not_rejected_for_its_transport() -> None:
    _, devices, problems = parse("ibv_devinfo-erdma.txt")
    erdma = devices["erdma_0"]
    assert erdma.driver == "erdma"
    assert erdma.transport == "eRDMA"
    assert erdma.vendor_id == "0x1ded"
    assert erdma.board_id is None
    assert erdma.ports[0].state is A and erdma.ports[0].link_layer == "Ethernet"
    assert problems == []


def test_ibv_devinfo_v_roce_gid_table() -> None:
    _, devices, _ = parse("ibv_devinfo-v-roce-cx6-eth.txt")
    port = devices["mlx5_0"].ports[0]
    assert port.rate_gbps == 100.0  # 4X x 25.0 Gbps
    assert port.phys_state is PhysState.LINK_UP
    gids = {g.index: g for g in port.gids}
    assert gids[3].type == "RoCE v2" and gids[3].ipv4 == "192.168.1.11"
    assert gids[2].type == "IB/RoCE v1" and gids[2].kind is GidKind.IPV4_MAPPED
    assert gids[1].kind is GidKind.IPV6_LINK_LOCAL and gids[1].type == "RoCE v2"


def test_ibv_devinfo_v_compressed_gids_and_renamed_device() -> None:
    _, devices, _ = parse("ibv_devinfo-v-roce-cx5-mixed-gids.txt")
    device = devices["rocep0s6"]
    assert device.driver == "mlx5"  # from vendor 0x02c9 part 4119, not the name
    port = device.ports[0]
    assert port.rate_gbps == 10.0
    assert port.routable_roce_v2_gids == (5,)
    assert port.gids[5].gid == port.gids[4].gid == "0000:0000:0000:0000:0000:ffff:0a00:0301"


def test_ibv_devinfo_v_irdma_v2_only_gids() -> None:
    _, devices, _ = parse("ibv_devinfo-v-irdma-e810-roce.txt")
    device = devices["irdma1"]
    assert device.driver == "irdma"
    port = device.ports[0]
    assert port.link_layer == "Ethernet" and port.lid == 1  # irdma's LID quirk
    assert port.rate_gbps == 100.0
    assert [(g.index, g.type, g.kind) for g in port.gids] == [
        (0, "RoCE v2", GidKind.IPV6_LINK_LOCAL),
        (1, "RoCE v2", GidKind.IPV4_MAPPED),
    ]


def test_ibv_devinfo_v_soft_roce_with_global_ipv6_and_wrapped_lines() -> None:
    _, devices, problems = parse("ibv_devinfo-v-rxe-ipv6-global.txt")
    port = devices["rxe0"].ports[0]
    assert devices["rxe0"].driver == "rxe"
    assert [(g.index, g.kind) for g in port.gids] == [
        (0, GidKind.IPV6_LINK_LOCAL), (1, GidKind.IPV6_LINK_LOCAL), (2, GidKind.IPV4_MAPPED),
        (3, GidKind.IPV6_GLOBAL), (4, GidKind.IPV6_GLOBAL), (5, GidKind.IPV6_GLOBAL),
    ]  # fmt: skip
    assert {g.type for g in port.gids} == {"RoCE v2"}
    assert port.gids[2].ipv4 == "10.0.0.151"  # the RoCE v2 IPv4 GID is index 2, not 3
    assert port.gids[5].gid == "2601:0647:5380:2210:0000:0000:0000:3be1"
    # the poster elided the port line: port 1 is assumed, and said
    assert problems == ["listing-no-port-line", "listing-truncated"]


def test_ibv_devinfo_v_grep_output_ipv6_only_fabric() -> None:
    _, devices, problems = parse("ibv_devinfo-v-grep-cx7vf-ula-ipv6-global.txt")
    for name, ula in (("mlx5_0", "fd02:0000:0000:0058:0000:0000:0000:0001"),
                      ("mlx5_1", "fd02:0000:0000:0059:0000:0000:0000:0001")):  # fmt: skip
        port = devices[name].ports[0]
        gids = {g.index: g for g in port.gids}
        assert gids[2].gid == gids[3].gid == ula  # expanded and compressed spellings agree
        assert (gids[2].type, gids[3].type) == ("IB/RoCE v1", "RoCE v2")  # note after v2 ignored
        assert not [g for g in port.gids if g.kind is GidKind.IPV4_MAPPED]
        assert port.routable_roce_v2_gids == (3,)  # an IPv6 GID: no IPv4 on this fabric
    assert problems.count("listing-no-port-line") == 2


def test_ibv_devinfo_v_excerpt_says_what_is_missing() -> None:
    _, devices, problems = parse("ibv_devinfo-v-cx3-ib-port-down.txt")
    port = devices["mlx4_1"].ports[0]
    assert (port.number, port.state, port.phys_state) == (2, D, PhysState.POLLING)
    assert port.gids[0].type is None  # an IB GID: no RoCE type printed
    assert problems == ["listing-truncated"]  # 2 ports announced, 1 shown


def test_ibstat_states_and_rates() -> None:
    _, devices, _ = parse("ibstat-cx3-ib-2ca-dualport-active.txt")
    assert states(devices) == {"mlx4_0": (A, A), "mlx4_1": (A, A)}
    assert {p.rate_gbps for d in devices.values() for p in d.ports} == {56.0}
    assert [p.lid for p in devices["mlx4_0"].ports] == [10, 12]
    assert devices["mlx4_0"].hca_type == "MT4099"

    _, devices, _ = parse("ibstat-cx4-eth-active-ib-down.txt")
    assert states(devices) == {"mlx5_0": (A,), "mlx5_1": (D,)}
    assert devices["mlx5_0"].ports[0].link_layer == "Ethernet"
    assert devices["mlx5_1"].ports[0].phys_state is PhysState.DISABLED
    assert devices["mlx5_0"].sys_image_guid == "248a:0703:00b1:bc04"


def test_ibstat_initializing_port_without_subnet_manager() -> None:
    _, devices, _ = parse("ibstat-cx6-ib-initializing-no-sm.txt")
    port = devices["mlx5_5"].ports[0]
    assert port.state is INIT and port.phys_state is PhysState.LINK_UP
    assert port.lid == 65535 and port.sm_lid == 0


def test_ibstat_vf_down_with_link_up() -> None:
    _, devices, _ = parse("ibstat-cx6-vf-ib-down-linkup.txt")
    port = devices["mlx5_6"].ports[0]
    assert port.state is D and port.phys_state is PhysState.LINK_UP


def test_ibstat_hdr_excerpt() -> None:
    _, devices, _ = parse("ibstat-cx6-hdr-active-and-down.txt")
    assert devices["mlx5_0"].ports[0].rate_gbps == 200.0
    assert devices["mlx5_0"].ports[0].lid == 569
    assert devices["mlx5_1"].ports[0].state is D


def test_show_gids_several_ipv4_on_one_port() -> None:
    _, devices, _ = parse("show_gids-cx-multi-ipv4-same-port.txt")
    port = devices["mlx5_1"].ports[0]
    assert port.netdev == "enp61s0f1np1"
    v2_ipv4 = [(g.index, g.ipv4) for g in port.gids if g.is_roce_v2 and g.ipv4]
    assert v2_ipv4 == [(3, "10.22.116.221"), (5, "10.22.116.222"), (7, "10.22.116.223")]
    assert not [g for g in devices["mlx5_0"].ports[0].gids if g.kind is GidKind.IPV4_MAPPED]


def test_show_gids_ib_row_without_netdev() -> None:
    _, devices, _ = parse("show_gids-mlnx-8hca-mixed-ib-row.txt")
    assert sum(len(p.gids) for d in devices.values() for p in d.ports) == 19
    ib = devices["mlx5_5"].ports[0]
    assert ib.netdev is None and len(ib.gids) == 1
    assert devices["mlx5_2"].ports[0].gids[3].ipv4 == "172.17.242.56"


def test_ibdev2netdev_plain_reads_the_port_state_its_netdev_implies() -> None:
    _, devices, _ = parse("ibdev2netdev-mlnx-8hca-mixed.txt")
    assert devices["mlx5_5"].ports[0].netdev == "ib0"
    assert devices["mlx5_2"].ports[0].netdev == "ens6"
    # "(Up)": carrier, which a RoCE netdev or IPoIB interface has only on an ACTIVE port;
    # "(Down)" of an Ethernet netdev: no link. The same node's `ibdev2netdev -v` prints
    # the ports' own states, and they agree port for port
    _, verbose, _ = parse("ibdev2netdev-v-mlnx-8hca-mixed.txt")
    assert states(devices) == states(verbose)
    assert devices["mlx5_5"].ports[0].link_layer == "InfiniBand"
    assert devices["mlx5_2"].ports[0].link_layer == "Ethernet"


def test_ibdev2netdev_plain_ipoib_down_leaves_the_port_state_unknown() -> None:
    # the same VFs with -v: mlx5_1's ib1 is (Down) while its port is ACTIVE
    _, verbose, _ = parse("ibdev2netdev-v-cx4-ib-sriov-vfs.txt")
    assert states(verbose)["mlx5_1"] == (A,)
    devices, _ = parse_ibdev2netdev(["mlx5_1 port 1 ==> ib1 (Down)"])
    assert devices[0].ports[0].state is U


def test_ibdev2netdev_verbose_pads_states() -> None:
    _, devices, _ = parse("ibdev2netdev-v-mlnx-8hca-mixed.txt")
    assert states(devices) == {
        "mlx5_0": (D,), "mlx5_1": (D,), "mlx5_2": (A,), "mlx5_3": (A,),
        "mlx5_4": (D,), "mlx5_5": (A,), "mlx5_6": (D,), "mlx5_7": (D,),
    }  # fmt: skip
    assert devices["mlx5_5"].pci_address == "0000:b1:00.0"
    assert devices["mlx5_5"].fw_ver == "20.30.1004"
    assert devices["mlx5_2"].hca_type == "MT4119"


def test_ibdev2netdev_verbose_active_port_with_netdev_down() -> None:
    _, devices, _ = parse("ibdev2netdev-v-cx4-ib-sriov-vfs.txt")
    assert states(devices)["mlx5_1"] == (A,)  # ib1 is (Down), the RDMA port is ACTIVE
    assert devices["mlx5_5"].pci_address == "0000:02:00.2"
    assert [d for d in devices if states(devices)[d] == (D,)] == [
        "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5"
    ]  # fmt: skip


def test_rdma_link() -> None:
    _, devices, _ = parse("rdma_link-oci-bm-optimized3-mlx5-one-down.txt")
    assert states(devices) == {"mlx5_0": (A,), "mlx5_1": (A,), "mlx5_2": (A,), "mlx5_3": (D,)}
    assert devices["mlx5_3"].ports[0].phys_state is PhysState.DISABLED
    assert devices["mlx5_2"].ports[0].netdev == "rdma0"
    _, devices, _ = parse("rdma_link-irdma-e810-one-down.txt")
    assert devices["irdma1"].driver == "irdma" and devices["irdma1"].ports[0].state is A


def test_rdma_link_says_infiniband_by_the_lid_alone() -> None:
    """The kernel gives subnet_prefix / lid / sm_lid for InfiniBand ports alone
    (nldev.c fill_port_info): they say the link layer; a netdev's name says nothing
    (issue 25: "rdma0" or "ens1f0" was read as Ethernet, "ib*" as InfiniBand)."""
    _, devices, _ = parse("rdma_link-ib-lid-smlid-format-active-after-flapping.txt")
    assert devices["mlx5_7"].ports[0].link_layer == "InfiniBand"
    _, devices, _ = parse("rdma_link-oci-bm-optimized3-mlx5-one-down.txt")
    assert {p.link_layer for d in devices.values() for p in d.ports} == {None}


def test_ibv_devices() -> None:
    _, devices, _ = parse("ibv_devices-azure-2dev.txt")
    assert {n: d.node_guid for n, d in devices.items()} == {
        "mlx5_0": "0015:5dff:fe33:ff18",
        "mlx5_1": "000d:3aff:fe72:a6b3",
    }


def test_merge_ibv_devinfo_with_ibdev2netdev_of_the_same_host() -> None:
    """Same host, same document: ibv_devinfo says state, ibdev2netdev -v the PCI address."""
    _, (info, _) = parse_listing(listing_text("ibv_devinfo-mlnx-8hca-mixed-ib-eth-port-down.txt"))
    _, (names, _) = parse_listing(listing_text("ibdev2netdev-mlnx-8hca-mixed.txt"))
    _, (verbose, _) = parse_listing(listing_text("ibdev2netdev-v-mlnx-8hca-mixed.txt"))
    merged = {d.name: d for d in merge_devices([names, info, verbose])}
    ib = merged["mlx5_5"]
    assert ib.ports[0].state is A  # UNKNOWN from ibdev2netdev replaced by ibv_devinfo's
    assert ib.ports[0].netdev == "ib0"
    assert ib.ports[0].link_layer == "InfiniBand"
    assert ib.pci_address == "0000:b1:00.0"


def test_merge_completes_gids_index_by_index_in_any_order() -> None:
    """ibv_devinfo -v knows GID types, show_gids knows their netdevs."""
    _, (info, _) = parse_listing(listing_text("ibv_devinfo-v-roce-cx6-eth.txt"))
    show_gids = (
        "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
        "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:c0a8:010b\t192.168.1.11  \tv2\tens1f0\n"
    )  # one row in show_gids' layout, for the GID ibv_devinfo -v lists at index 3
    _, (gids, _) = parse_listing(show_gids)
    for order in ([info, gids], [gids, info]):
        port = merge_devices(order)[0].ports[0]
        assert len(port.gids) == 4
        assert (port.gids[3].type, port.gids[3].netdev) == ("RoCE v2", "ens1f0")
        assert port.gids[1].type == "RoCE v2" and port.state is A


def test_merge_prefers_typed_gids() -> None:
    _, (gids, _) = parse_listing(listing_text("show_gids-cx4-ib-port-no-netdev.txt"))
    _, (stat, _) = parse_listing(listing_text("ibstat-cx4-eth-active-ib-down.txt"))
    merged = {d.name: d for d in merge_devices([stat, gids])}
    port = merged["mlx5_0"].ports[0]
    assert port.state is A and port.link_layer == "Ethernet"
    assert [g.type for g in port.gids] == ["IB/RoCE v1", "RoCE v2"]


# ------------------------------------------------------------------ bad input


def test_garbage_is_a_clear_error() -> None:
    with pytest.raises(ParseError) as info:
        parse_listing("Lorem ipsum dolor sit amet\nconsectetur adipiscing\n", source="x.txt")
    assert info.value.code == "listing-unrecognised"
    assert info.value.where == "x.txt:1"
    assert "ibv_devinfo" in info.value.fix


def test_empty_input_is_a_clear_error() -> None:
    with pytest.raises(ParseError, match="empty"):
        parse_listing("", source="empty.txt")


def test_truncated_ibv_devinfo_gives_partial_result_and_says_so() -> None:
    lines = listing_text("ibv_devinfo-cx3-ib-2hca-port2-down.txt").splitlines()
    cut = next(i for i, line in enumerate(lines) if "port:" in line and "2" in line)
    devices, problems = parse_ibv_devinfo(lines[: cut + 1], source="cut.txt")
    assert devices[0].ports[0].state is A
    assert devices[0].ports[1].state is U
    assert {p.code for p in problems} == {"listing-truncated"}
    assert any("cut.txt:" in p.where for p in problems)


def test_no_devices_found_is_an_empty_inventory() -> None:
    devices, problems = parse_ibv_devinfo(["No IB devices found"])
    assert devices == () and problems == ()


def test_a_listing_cut_above_its_hca_id_is_read_and_names_no_device() -> None:
    # `ibv_devinfo -v` pasted from inside a port section: read, and said, not refused
    devices, problems = parse_ibv_devinfo(["\tport:\t1", "hca_id:\tmlx5_0"], source="cut.txt")
    assert [d.name for d in devices] == ["(unnamed)", "mlx5_0"]
    assert ("listing-no-device-name", "cut.txt:1") in [(p.code, p.where) for p in problems]


# ------------------------------------------------------------------ issue 25: whole listings


def test_a_text_that_mentions_uverbs0_is_not_a_listing() -> None:
    # `hpnet doctor --from README.md` passed: one line naming /dev/infiniband or uverbs0
    # made the whole text an `ls /dev/infiniband` listing
    text = (
        "# Containers\n\nMount the devices: `--device /dev/infiniband/uverbs0`.\n"
        "Then run the doctor inside:\n\nuverbs0 rdma_cm\n\n"
        "It reads what the container can open, and checks it against NCCL.\n"
        "See the README for the full list of checks and what each one proves.\n"
    )
    with pytest.raises(ParseError) as info:
        parse_listing(text, source="README.md")
    assert info.value.code == "listing-unrecognised"
    assert info.value.where.startswith("README.md:")
    assert "ls [-l] of /dev/infiniband" in info.value.fix


def test_the_project_readme_is_not_a_listing() -> None:
    readme = Path(__file__).parents[2] / "README.md"
    with pytest.raises(ParseError, match="not a recognised RDMA listing"):
        parse_listing(readme.read_text(), source="README.md")


def test_every_section_of_a_multi_directory_ls_is_read_and_the_rest_named() -> None:
    # `ls -l /dev/infiniband /sys/class/infiniband /sys/class/net` in a pod: read up to
    # the first section, it said "RDMA devices: none" above two listed mlx5 devices
    name = "ls-l-dev-sys-class-infiniband-sys-class-net-k8s-shared-dev-pod-2xmlx5.txt"
    read, unread = listing_sections(listing_text(name), source=name)
    assert [kind for kind, _ in read] == ["ls /dev/infiniband", "ls /sys/class/infiniband"]
    inventory = inventory_from_listings([(name, listing_text(name))])
    assert [(d.name, d.pci_address) for d in inventory.rdma_devices] == [
        ("mlx5_0", "0000:c3:00.0"),
        ("mlx5_1", "0000:c3:00.1"),
    ]
    assert inventory.dev_nodes is not None
    assert inventory.dev_nodes.uverbs == ("uverbs0", "uverbs1")
    assert [(p.code, p.where) for p in unread] == [("listing-section-not-read", f"{name}:19")]
    assert "(`ls /sys/class/net`) not read" in unread[0].what


def test_prompted_sections_are_each_read() -> None:
    text = (
        "$ ip -br link\nlo UNKNOWN 00:00:00:00:00:00\neth0 UP 52:54:00:12:34:56\n"
        "$ rdma link\nlink mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth0\n"
        "$ ibv_devices\n    device          \t   node GUID\n"
        "    ------          \t----------------\n    mlx5_1          \t000d3afffe72a6b3\n"
    )
    kind, (devices, problems) = parse_listing(text, source="x.txt")
    assert kind == "rdma link" and [d.name for d in devices] == ["mlx5_0", "mlx5_1"]
    assert [p.where for p in problems] == ["x.txt:2"]


def test_one_stray_line_in_a_long_listing_is_named_not_fatal() -> None:
    text = listing_text("ibstat-cx6-hdr-active-and-down.txt") + "junk after the paste\n"
    _, (devices, problems) = parse_listing(text, source="x.txt")
    assert devices and [p.code for p in problems] == ["listing-lines-not-read"]


def test_no_devices_with_no_verbs_provider_is_not_no_hardware() -> None:
    """'No IB devices found' after libibverbs could not open /etc/libibverbs.d: the
    user-space providers are missing, so the listing cannot say the hardware is."""
    name = "ibv-devinfo-no-ib-devices-found-missing-libibverbs-providers-config-dir.txt"
    kind, devices, codes = parse(name)
    assert (kind, devices, codes) == ("ibv_devinfo", {}, ["listing-verbs-provider"])
    _, (_, problems) = parse_listing(listing_text(name), source=name)
    assert "rdma-core's user-space providers are not installed" in problems[0].what
    assert problems[0].where == f"{name}:2"


def test_ports_with_no_link_show_no_rate_in_the_table() -> None:
    """Both ports of a ConnectX-6 Dx Down / Disabled: ibstat's 'Rate: 100' and 'Rate: 40'
    are not speeds they run at, so detect's table leaves them out (the JSON keeps them)."""
    name = "ibstat-cx6dx-roce-both-ports-down-disabled-3fs-single-node.txt"
    _, devices, _ = parse(name)
    assert [p.rate for d in devices.values() for p in d.ports] == ["100 Gb/sec", "40 Gb/sec"]
    table = render_inventory(inventory_from_listings([(name, listing_text(name))]))
    rows = [line.split() for line in table.splitlines() if line.strip().startswith("mlx5_")]
    assert [row[:6] for row in rows] == [
        ["mlx5_0", "mlx5", "1", "DOWN", "Ethernet", "-"],
        ["mlx5_1", "mlx5", "1", "DOWN", "Ethernet", "-"],
    ]
