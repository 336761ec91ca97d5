"""`hpnet doctor`: the WARN and FAIL branches a coverage trace found untested (issue 4:
"every check has tests over fixtures for PASS and for each FAIL it can raise").

Each condition is built from a recorded tree (``tests/data/sysfs/*.tree``) changed
after materializing it, or, where a recorded tree cannot hold it (addresses, device
node permissions: both are read on the live node only), with ``dataclasses.replace``
on the inventory detection gives. The tests at the end pin what these tests found wrong
and what was changed for it: an IPv6-only interface, a GID table a listing cut short, the
group kept where port rates mix, and the fix for a GID outside the network namespace.
"""

from __future__ import annotations

import dataclasses
import shlex
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from hpnet.detect import NodeInventory
from hpnet.doctor.model import CheckResult
from hpnet.node.netdevs import Address
from hpnet.result import Status
from tests.unit.test_doctor import assert_pasteable, check, node
from tests.unit.test_doctor_review import full

Tree = Callable[[str], Path]

ROCE = "cx-roce-mixed-gids"  # mlx4_0:1 (eth2, eth2.10), mlx4_0:2 (eth3) 40G; mlx5_0:1 (eth4) 100G


def applied(fix: str, variables: Mapping[str, str]) -> dict[str, str]:
    """The variables after pasting ``fix`` (its export and unset lines) into a shell."""
    result = dict(variables)
    for line in fix.splitlines():
        words = shlex.split(line)
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            result[name] = value
        elif words[0] == "unset":
            for name in words[1:]:
                result.pop(name, None)
        else:
            raise AssertionError(f"not an export or unset line: {line!r}")
    return result


def remove_netdev(root: Path, name: str) -> None:
    """What a container in its own network namespace sees: the netdev is gone from
    sys/class/net and from its PCI function's net/ (sysfs is mounted per namespace)."""
    link = root / "sys/class/net" / name
    shutil.rmtree(link.resolve())
    link.unlink()


def with_addresses(
    inventory: NodeInventory, addresses: Mapping[str, tuple[Address, ...]]
) -> NodeInventory:
    """The inventory as the live node gives it: addresses known (psutil), by name."""
    return dataclasses.replace(
        inventory,
        netdevs=tuple(
            dataclasses.replace(n, addresses=addresses.get(n.name, ())) for n in inventory.netdevs
        ),
        not_collected=tuple(k for k in inventory.not_collected if k != "addresses"),
    )


def inet(address: str, prefix: int = 24) -> tuple[Address, ...]:
    return (Address(family="inet", address=address, prefix_length=prefix),)


#: the addresses the roce host's GIDs show (tensorflow/tensorflow#22077), less eth2's:
#: eth2 is up and has no address at all
ROCE_ADDRESSES = {
    "lo": inet("127.0.0.1", 8),
    "eth2.10": inet("10.10.10.2"),
    "eth3": inet("12.12.10.12"),
    "eth4": inet("12.12.11.12"),
}


# ------------------------------------------------------------------ 1: vars.ifname


def test_ifname_fails_when_the_interface_it_names_is_down(sysfs_tree: Tree) -> None:
    """ncclOsFindInterfaces skips an interface without IFF_RUNNING: NCCL_SOCKET_IFNAME
    naming only that one finds nothing ('Bootstrap : no socket interface found')."""
    root = sysfs_tree(ROCE)
    (root / "sys/class/net/eth2/operstate").write_text("down\n")
    (root / "sys/class/net/eth2.10/operstate").write_text("lowerlayerdown\n")  # its VLAN
    inv = node(sysfs_tree, ROCE)
    status, summary, evidence, fix = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "=eth2"})
    assert status is Status.FAIL
    assert summary == "NCCL_SOCKET_IFNAME==eth2 matches eth2, which is not up"
    # a recorded tree holds no addresses: the candidates are the interfaces that are up
    assert evidence[0] == (
        "usable interfaces: eth3, eth4 (up; addresses are not recorded in this source)"
    )
    assert "Bootstrap : no socket interface found" in evidence[1]
    assert fix == "export NCCL_SOCKET_IFNAME='=eth3'"  # the first physical interface up
    assert_pasteable(fix)
    assert check("vars.ifname", inv, applied(fix, {"NCCL_SOCKET_IFNAME": "=eth2"}))[0] is (
        Status.PASS
    )


def test_ifname_fails_when_the_interface_it_names_has_no_address(sysfs_tree: Tree) -> None:
    """An interface with no IPv4/IPv6 address has no getifaddrs entry NCCL can take."""
    inv = with_addresses(node(sysfs_tree, ROCE), ROCE_ADDRESSES)
    status, summary, evidence, fix = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "=eth2"})
    assert status is Status.FAIL
    assert summary == "NCCL_SOCKET_IFNAME==eth2 matches no interface that is up with an address"
    # addresses known: only the interfaces with one are offered, physical before VLAN
    assert evidence[0] == "usable interfaces: eth3, eth4, eth2.10"
    assert "Bootstrap : no socket interface found" in evidence[1]
    assert fix == "export NCCL_SOCKET_IFNAME='=eth3'"
    assert_pasteable(fix)
    # the same interface with an address passes; down with an address fails again
    addressed = with_addresses(inv, {**ROCE_ADDRESSES, "eth2": inet("12.12.12.12")})
    status, summary, _, _ = check("vars.ifname", addressed, {"NCCL_SOCKET_IFNAME": "=eth2"})
    assert status is Status.PASS
    assert summary == "NCCL_SOCKET_IFNAME==eth2 matches eth2 (physical, 12.12.12.12)"
    down = dataclasses.replace(
        addressed,
        netdevs=tuple(
            dataclasses.replace(n, state="down") if n.name == "eth2" else n
            for n in addressed.netdevs
        ),
    )
    status, summary, _, fix = check("vars.ifname", down, {"NCCL_SOCKET_IFNAME": "=eth2"})
    assert status is Status.FAIL and "matches no interface that is up with an address" in summary
    assert fix == "export NCCL_SOCKET_IFNAME='=eth3'"


# ------------------------------------------------------------------ 2: vars.gid


@pytest.mark.parametrize(("value", "nccl"), [(None, None), ("-1", "2.21.5"), ("-3", "2.30.7")])
def test_automatic_gid_choice_that_finds_nothing_routable_fails(
    sysfs_tree: Tree, value: str | None, nccl: str | None
) -> None:
    """mlx4_0 has only RoCE v1 GIDs: NCCL's own walk (connect.cc ncclIbGetGidIndex)
    takes GID 1, IPv4-mapped but RoCE v1, on both ports NCCL_IB_HCA=mlx4 opens. vars.gid
    judges the ports the job opens now, and answers with the index for the port the
    NCCL_IB_HCA decision keeps (mlx5_0:1, GID 3); vars.hca's fix keeps that port, and
    with both pasted both checks pass."""
    roce = node(sysfs_tree, ROCE)
    variables = {"NCCL_IB_HCA": "mlx4"}
    if value is not None:
        variables["NCCL_IB_GID_INDEX"] = value
    found = full("vars.gid", roce, variables, nccl=nccl)
    shown = "not set" if value is None else value  # issue 25: no "(negative)"
    assert found.status is Status.FAIL
    assert found.summary == (
        f"NCCL_IB_GID_INDEX is {shown}: NCCL's own choice picks a GID that does not route "
        "on 2 of 2 port(s)"
    )
    assert found.evidence == (
        "mlx4_0:1: GID 1 is IB/RoCE v1, not RoCE v2",
        "mlx4_0:2: GID 1 is IB/RoCE v1, not RoCE v2",
        "NCCL's picks: mlx4_0:1->1, mlx4_0:2->1",
    )
    assert found.fix == "export NCCL_IB_GID_INDEX=3"
    hca = full("vars.hca", roce, variables, nccl=nccl)
    assert hca.status is Status.WARN and "selects no usable RoCE port" in hca.summary
    assert hca.fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    both = applied(hca.fix, applied(found.fix, variables))
    assert full("vars.gid", roce, both, nccl=nccl).status is Status.PASS
    assert full("vars.hca", roce, both, nccl=nccl).status is Status.PASS


def test_automatic_gid_choice_right_on_some_ports_only_fails_until_both_fixes(
    sysfs_tree: Tree,
) -> None:
    """Unset, NCCL picks GID 3 on mlx5_0 (RoCE v2, 12.12.11.12) and GID 1 (RoCE v1) on
    both mlx4_0 ports it opens now: a FAIL, whose answer is the index for the port the
    NCCL_IB_HCA decision keeps (GID 3 on mlx5_0:1). With that index pasted it is right on
    the kept port and wrong on the other opened ones: the fix is then vars.hca's export,
    and with it the check passes."""
    roce = node(sysfs_tree, ROCE)
    variables = {"NCCL_IB_GID_INDEX": "-1"}
    found = full("vars.gid", roce, variables, nccl="2.30.7")
    assert found.status is Status.FAIL
    assert "does not route on 2 of 3 port(s)" in found.summary
    assert "NCCL's picks: mlx4_0:1->1, mlx4_0:2->1, mlx5_0:1->3" in found.evidence
    assert found.fix == "export NCCL_IB_GID_INDEX=3"
    hca = full("vars.hca", roce, variables, nccl="2.30.7")
    assert hca.status is Status.WARN and hca.fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    variables = applied(found.fix, variables)
    second = full("vars.gid", roce, variables, nccl="2.30.7")
    assert second.status is Status.FAIL and "mlx4_0:1 GID 3 is empty" in second.evidence
    assert second.fix == hca.fix  # vars.hca's export: one answer
    after = full("vars.gid", roce, applied(second.fix, variables), nccl="2.30.7")
    assert after.status is Status.PASS
    assert after.summary == "GID 3 is RoCE v2 and IPv4-mapped on mlx5_0:1"
    # NCCL's own choice is right once only the kept port is opened
    kept = full("vars.gid", roce, applied(hca.fix, {"NCCL_IB_GID_INDEX": "-1"}), nccl="2.30.7")
    assert kept.status is Status.PASS and "NCCL picks mlx5_0:1->3" in kept.summary


def test_automatic_gid_choice_wrong_where_one_index_works_fails_with_that_index(
    sysfs_tree: Tree,
) -> None:
    """NCCL_IB_ADDR_RANGE that excludes the port's 12.12.11.12: NCCL's walk never leaves
    GID 0 (link-local, RoCE v1), while GID 3 is RoCE v2 and routable."""
    roce = node(sysfs_tree, ROCE)
    variables = {"NCCL_IB_HCA": "mlx5", "NCCL_IB_ADDR_RANGE": "10.0.0.0/8"}
    found = full("vars.gid", roce, variables)
    assert found.status is Status.FAIL
    assert found.evidence == (
        "mlx5_0:1: GID 0 is IB/RoCE v1, not RoCE v2",
        "NCCL's picks: mlx5_0:1->0",
    )
    assert found.fix == "export NCCL_IB_GID_INDEX=3"
    after = full("vars.gid", roce, applied(found.fix, variables))
    assert after.status is Status.PASS
    assert after.summary == "GID 3 is RoCE v2 and IPv4-mapped on mlx5_0:1"


def test_fixed_gid_index_before_the_automatic_choice_with_no_common_index(
    sysfs_tree: Tree,
) -> None:
    """NCCL 2.18 has no automatic choice to fall back to, and no index is RoCE v2 on
    every port (mlx4_0 has none): keep the port GID 3 works on."""
    roce = node(sysfs_tree, ROCE)
    variables = {"NCCL_IB_GID_INDEX": "3"}
    found = full("vars.gid", roce, variables, nccl="2.18.3")
    assert found.status is Status.FAIL
    assert found.summary == "NCCL_IB_GID_INDEX=3 does not work on this node"
    assert found.evidence == ("mlx4_0:1 GID 3 is empty", "mlx4_0:2 GID 3 is empty")
    # GID 3 is right on the port vars.hca keeps, wrong on the other opened ones: the fix
    # is vars.hca's export
    assert found.fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    assert found.fix == full("vars.hca", roce, variables, nccl="2.18.3").fix
    after = full("vars.gid", roce, applied(found.fix, variables), nccl="2.18.3")
    assert after.status is Status.PASS


# ------------------------------------------------------------------ 3: vars.hca


def deny_uverbs(inventory: NodeInventory, device: str) -> NodeInventory:
    """``device``'s /dev/infiniband/uverbsN exists but this user cannot open it (known
    on the live node only: a recorded tree cannot show permissions)."""
    devices = tuple(
        dataclasses.replace(d, uverbs=dataclasses.replace(d.uverbs, accessible=False))
        if d.name == device and d.uverbs is not None
        else d
        for d in inventory.rdma_devices
    )
    return dataclasses.replace(inventory, rdma_devices=devices)


def test_hca_names_a_device_whose_uverbs_node_cannot_be_opened(sysfs_tree: Tree) -> None:
    dgx = deny_uverbs(node(sysfs_tree, "cx6-ib-dgx"), "mlx5_1")
    status, summary, _, _ = check("vars.hca", dgx, {"NCCL_IB_HCA": "mlx5"})
    # NCCL skips a device it cannot open (net_ib: "Unable to open device") and opens the
    # others: the value is not what is wrong (devices.uverbs names the device)
    assert status is Status.PASS
    assert summary == (
        "NCCL_IB_HCA=mlx5 selects mlx5_0:1, mlx5_2:1 (NCCL skips mlx5_1:1, mlx5_3:1: not "
        "usable here)"
    )
    # naming only that device: nothing usable, NCCL falls back to sockets
    status, summary, evidence, fix = check("vars.hca", dgx, {"NCCL_IB_HCA": "=mlx5_1"})
    assert status is Status.FAIL
    assert summary == (
        "NCCL_IB_HCA==mlx5_1 selects no usable port here (it matches mlx5_1:1): NCCL falls "
        "back to sockets"
    )
    assert evidence == ("mlx5_1:1: /dev/infiniband/uverbs1 cannot be opened",)
    assert fix == "export NCCL_IB_HCA='=mlx5_0:1,mlx5_2:1'"
    assert check("vars.hca", dgx, applied(fix, {}))[0] is Status.PASS


# ------------------------------------------------------------------ 4: GID outside the namespace


def test_gid_index_whose_netdev_is_not_in_this_namespace_fails(sysfs_tree: Tree) -> None:
    """In a pod the GID table can name a netdev the pod cannot see: NCCL then fails in
    ibv_modify_qp. eRDMA node without eth1 (erdma_0's netdev): GID 1 still works on
    erdma_1, no index works on both, so unset; NCCL's own choice then gets erdma_1 right
    only, and keeping that port passes."""
    root = sysfs_tree("erdma-alibaba")
    remove_netdev(root, "eth1")
    erdma = node(sysfs_tree, "erdma-alibaba")
    variables = {"NCCL_IB_GID_INDEX": "1"}
    found = full("vars.gid", erdma, variables)
    assert found.status is Status.FAIL
    assert found.summary == "NCCL_IB_GID_INDEX=1 does not work on this node"
    assert found.evidence == (
        "erdma_0:1 GID 1 belongs to eth1, which is not in this network namespace",
    )
    # unset would leave NCCL's choice wrong on erdma_0: keep the port GID 1 works on
    assert found.fix == "export NCCL_IB_HCA='=erdma_1:1'"
    assert full("vars.gid", erdma, applied(found.fix, variables)).status is Status.PASS


def test_gid_index_whose_only_port_is_outside_the_namespace_fails(sysfs_tree: Tree) -> None:
    root = sysfs_tree(ROCE)
    remove_netdev(root, "eth4")
    roce = node(sysfs_tree, ROCE)
    status, summary, evidence, fix = check(
        "vars.gid", roce, {"NCCL_IB_HCA": "mlx5", "NCCL_IB_GID_INDEX": "3"}
    )
    assert status is Status.FAIL and summary == "NCCL_IB_GID_INDEX=3 does not work on this node"
    assert evidence == ("mlx5_0:1 GID 3 belongs to eth4, which is not in this network namespace",)
    # every GID of the port is outside: no variable helps, the container's network does
    assert fix is None


# ------------------------------------------------------------------ 5: ports.mixed


def test_mixed_rates_within_one_link_layer_warn(sysfs_tree: Tree) -> None:
    """NCCL_IB_HCA=mlx on the RoCE host: two 40 Gb/s ConnectX-3 ports and one 100 Gb/s
    ConnectX-5, all RoCE. The mix is vars.hca's WARN and fix (which keeps one port group,
    exactly); ports.mixed leaves the selection to it."""
    roce = node(sysfs_tree, ROCE)
    variables = {"NCCL_IB_HCA": "mlx"}
    found = full("ports.mixed", roce, variables)
    assert found.status is Status.SKIP and found.summary == "vars.hca judges the selection"
    assert found.fix is None
    hca = full("vars.hca", roce, variables)
    assert hca.status is Status.WARN
    assert hca.summary.startswith("NCCL_IB_HCA=mlx also selects mlx4_0:1")
    assert hca.fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    after = full("ports.mixed", roce, applied(hca.fix, variables))
    assert after.status is Status.SKIP and after.summary == "fewer than two usable ports"
    assert full("vars.hca", roce, applied(hca.fix, variables)).status is Status.PASS


def slow_down(root: Path, rates: Mapping[str, str]) -> None:
    """Set the DGX ports' rates (``device: rate``), the down mlx5_3:1 brought up first
    when named (a cable or switch port that trained to a lower speed)."""
    for device, rate in rates.items():
        port = root / "sys/class/infiniband" / device / "ports/1"
        if device == "mlx5_3":
            (port / "state").write_text("4: ACTIVE\n")
            (port / "phys_state").write_text("5: LinkUp\n")
        (port / "rate").write_text(rate + "\n")


def test_mixed_rates_keep_the_faster_group_on_a_tie(sysfs_tree: Tree) -> None:
    """One 200 Gb/s port against two of 100: the same ports x rate, so the faster group
    is kept, and a list naming all three is vars.hca's WARN."""
    slow_down(
        sysfs_tree("cx6-ib-dgx"),
        {"mlx5_1": "100 Gb/sec (4X EDR)", "mlx5_2": "100 Gb/sec (4X EDR)"},
    )
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    variables = {"NCCL_IB_HCA": "=mlx5_0,mlx5_1,mlx5_2"}
    found = full("vars.hca", dgx, variables)
    assert found.status is Status.WARN
    assert "also selects mlx5_1:1 (100 Gb/sec (4X EDR), slower than 200" in found.summary
    assert found.fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    assert full("ports.mixed", dgx, variables).status is Status.SKIP
    assert full("vars.hca", dgx, applied(found.fix, variables)).status is Status.PASS


def test_mixed_rates_keep_the_larger_faster_group(sysfs_tree: Tree) -> None:
    """The DGX's fourth HCA up at a lower speed (a cable or switch port that trained to
    EDR): three 200 Gb/s InfiniBand ports and one 100 Gb/s. NCCL_IB_HCA unset opens all
    four: vars.hca WARNs and keeps the three; with that, ports.mixed passes."""
    slow_down(sysfs_tree("cx6-ib-dgx"), {"mlx5_3": "100 Gb/sec (4X EDR)"})
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    status, summary, evidence, fix = check("vars.hca", dgx)
    assert status is Status.WARN
    assert summary.startswith("NCCL_IB_HCA is not set, so NCCL opens every ACTIVE port: ")
    assert "mlx5_3:1 (100 Gb/sec (4X EDR), slower than 200 Gb/sec (4X HDR))" in summary
    assert evidence == ("NCCL opens mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1",)
    assert fix == "export NCCL_IB_HCA='=mlx5_0:1,mlx5_1:1,mlx5_2:1'"
    assert check("ports.mixed", dgx)[0] is Status.SKIP
    assert check("vars.hca", dgx, applied(fix, {}))[0] is Status.PASS
    status, summary, _, _ = check("ports.mixed", dgx, applied(fix, {}))
    assert status is Status.PASS and summary == "3 ports, all InfiniBand at 200 Gb/s"


# ------------------------------------------------------------------ found by these tests


def test_ifname_accepts_an_ipv6_only_interface_when_the_family_is_not_forced(
    sysfs_tree: Tree,
) -> None:
    six = (Address(family="inet6", address="2001:db8:12::12", prefix_length=64),)
    inv = with_addresses(node(sysfs_tree, ROCE), {**ROCE_ADDRESSES, "eth2": six})
    found: CheckResult = full("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "=eth2"})
    # NCCL_SOCKET_FAMILY unset: NCCL's ncclEnvSocketFamily is -1 and findInterfaces
    # takes IPv4 and IPv6 alike
    assert found.status is Status.PASS, found.summary
    forced = full(
        "vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "=eth2", "NCCL_SOCKET_FAMILY": "AF_INET"}
    )
    assert forced.status is Status.FAIL


def test_automatic_gid_choice_unknown_is_not_a_pass() -> None:
    from hpnet.detect import inventory_from_listings
    from tests.conftest import listing_text

    lines = listing_text("show_gids-mlnx-8hca-mixed-ib-row.txt").splitlines()
    # `show_gids | grep -e DEV -e v2`: the header and the RoCE v2 rows only
    kept = lines[:2] + [line for line in lines[2:] if " v2 " in line]
    # show_gids shows no port state: the same node's ibv_devinfo does
    inv = inventory_from_listings(
        [
            ("show_gids", "\n".join(kept) + "\n"),
            ("devinfo", listing_text("ibv_devinfo-mlnx-8hca-mixed-ib-eth-port-down.txt")),
        ]
    )
    # the node has an InfiniBand port, so the auto profile routes by LID and the GID is
    # not used: the RoCE profile makes NCCL use the two RoCE ports
    from hpnet.profiles import get_profile

    variables = {"NCCL_IB_HCA": "=mlx5_2:1,mlx5_3:1"}
    found = full("vars.gid", inv, variables, profile=get_profile("roce"))
    # a table without GID 0 cannot be replayed: said, not passed (nor skipped: the job
    # uses these ports), with the listing that would tell
    assert found.status is Status.WARN, found.summary
    assert "cannot be told" in found.summary
    assert found.fix is None and "--from" in (found.fix_note or "")


def test_mixed_rates_keep_the_port_that_carries_more(sysfs_tree: Tree) -> None:
    """Three 50 Gb/s ports (150) against one of 200: the one port carries more."""
    slow_down(
        sysfs_tree("cx6-ib-dgx"),
        {
            "mlx5_0": "50 Gb/sec (2X HDR)",
            "mlx5_1": "50 Gb/sec (2X HDR)",
            "mlx5_2": "50 Gb/sec (2X HDR)",
            "mlx5_3": "200 Gb/sec (4X HDR)",
        },
    )
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    found = full("vars.hca", dgx, {"NCCL_IB_HCA": "mlx5"})
    assert found.status is Status.WARN
    assert found.fix == "export NCCL_IB_HCA='=mlx5_3:1'"


def test_gid_fix_for_a_port_outside_the_namespace_resolves_the_failure(sysfs_tree: Tree) -> None:
    root = sysfs_tree(ROCE)
    remove_netdev(root, "eth4")
    roce = node(sysfs_tree, ROCE)
    variables = {"NCCL_IB_HCA": "mlx5", "NCCL_IB_GID_INDEX": "3"}
    found = full("vars.gid", roce, variables)
    assert found.status is Status.FAIL and found.fix is None
    assert found.fix_note is not None and "--net=host" in found.fix_note
