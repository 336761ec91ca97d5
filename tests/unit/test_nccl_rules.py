"""The node's NCCL rules (:mod:`hpnet.nccl.rules`), tested directly on real data.

Each rule is checked against its reference definition: NCCL's source (cited per test)
and what the ``.source.txt`` of each recorded tree or listing says a correct tool
concludes. ``hpnet env`` (:mod:`hpnet.nccl.fill`) and ``hpnet doctor`` both call these
functions, so a wrong rule fails here whichever command would have shown it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.detect import DetectOptions, NodeInventory, detect, inventory_from_listings
from hpnet.errors import InputError
from hpnet.nccl import rules
from hpnet.nccl.config import check_name
from hpnet.nccl.fill import decide, detected_values
from hpnet.node.netdevs import Address, Netdev, NetKind
from hpnet.profiles import get_profile
from hpnet.rdma.model import GidKind, RdmaDevice, RdmaPort
from hpnet.runner import RecordedRunner
from tests.conftest import listing_text
from tests.unit.test_env_resolution import codes, node, resolve

Tree = Callable[[str], Path]


def _tree(sysfs_tree: Tree, name: str) -> NodeInventory:
    return detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )


def _listing(name: str) -> NodeInventory:
    return inventory_from_listings([("x", listing_text(name))])


def _port(inventory: NodeInventory, device: str, number: int = 1) -> tuple[RdmaDevice, RdmaPort]:
    found = next(d for d in inventory.rdma_devices if d.name == device)
    return found, next(p for p in found.ports if p.number == number)


def _visible(inventory: NodeInventory) -> set[str] | None:
    return {n.name for n in inventory.netdevs} or None


# ---------------------------------------------------------------- ports


def test_port_kind_and_usable_ports_on_recorded_trees(sysfs_tree: Tree) -> None:
    # net_ib init.cc: only ACTIVE ports, link layer InfiniBand or Ethernet
    kinds = {
        name: {
            (d.name, p.number): (rules.port_kind(d, p), p in rules.usable_ports(d))
            for d in _tree(sysfs_tree, name).rdma_devices
            for p in d.ports
        }
        for name in ("cx6-ib-dgx", "cx-roce-mixed-gids", "erdma-alibaba", "container-no-uverbs")
    }
    assert kinds["cx6-ib-dgx"] == {
        ("mlx5_0", 1): ("ib", True),
        ("mlx5_1", 1): ("ib", True),
        ("mlx5_2", 1): ("ib", True),
        ("mlx5_3", 1): ("ib", False),  # DOWN
    }
    assert set(kinds["cx-roce-mixed-gids"].values()) == {("roce", True)}
    assert set(kinds["erdma-alibaba"].values()) == {("erdma", True)}
    # ACTIVE, but no /dev/infiniband/uverbsN in the container: nothing can open them
    assert {usable for _, usable in kinds["container-no-uverbs"].values()} == {False}


def test_port_kind_from_listings() -> None:
    # soft-RoCE prints no link_layer line in old ibv_devinfo: the rxe driver is Ethernet
    rxe = _listing("ibv_devinfo-rxe0-softroce-2016-no-link-layer-line.txt")
    assert {rules.port_kind(d, p) for d in rxe.rdma_devices for p in d.ports} == {"roce"}
    mixed = _listing("ibv_devinfo-mlnx-8hca-mixed-ib-eth-port-down.txt")
    assert rules.port_kind(*_port(mixed, "mlx5_5")) == "ib"
    assert rules.port_kind(*_port(mixed, "mlx5_3")) == "roce"
    usable = {d.name for d in mixed.rdma_devices if rules.usable_ports(d)}
    assert usable == {"mlx5_2", "mlx5_3", "mlx5_5"}


def test_transport_words() -> None:
    assert rules.TRANSPORT_WORDS == {"ib": "InfiniBand", "roce": "RoCE", "erdma": "eRDMA"}
    assert [rules.transport_word(k) for k in ("ib", "roce", "erdma")] == [
        "InfiniBand",
        "RoCE",
        "eRDMA",
    ]


# ---------------------------------------------------------------- GIDs


@pytest.mark.parametrize(
    ("ib_family", "socket_family", "expected"),
    [
        (None, None, "AF_INET"),
        ("AF_INET6", None, "AF_INET6"),
        (None, "AF_INET6", "AF_INET6"),  # the socket family counts when IB's is unset
        ("AF_INET", "AF_INET6", "AF_INET"),  # NCCL_IB_ADDR_FAMILY wins
        ("af_inet6", "AF_INET6", "AF_INET6"),  # NCCL rejects lower case: the next counts
        ("inet6", None, "AF_INET"),
        ("", "", "AF_INET"),
    ],
)
def test_gid_family(ib_family: str | None, socket_family: str | None, expected: str) -> None:
    assert rules.gid_family(ib_family, socket_family) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("AF_INET6", "AF_INET6"), ("AF_INET", "AF_INET"), ("af_inet6", "AF_INET"), (None, "AF_INET")],
)
def test_nccl_family_is_strcmp(value: str | None, expected: str) -> None:
    # connect.cc envIbAddrFamily: strcmp with "AF_INET" / "AF_INET6", else AF_INET
    assert rules.nccl_family(value) == expected


@pytest.mark.parametrize(
    ("value", "version", "expected"),
    [
        ("3", (2, 18, 3), 3),
        ("0x3", None, 3),  # strtoll base 0
        ("010", None, 8),  # octal, as strtoll reads it
        ("-1", (2, 21, 5), -1),
        (None, (2, 21, 5), -1),  # default -1 from 2.21.5
        (None, (2, 21, 4), 0),  # default 0 before
        (None, None, -1),  # unknown version: today's default
        ("", (2, 18, 3), 0),  # empty: the default
        ("abc", (2, 23, 4), 0),  # strtoll reads no digits: 0
        ("99999999999999999999", (2, 23, 4), -1),  # ERANGE: the default
    ],
)
def test_gid_index_reads_as_nccl(
    value: str | None, version: tuple[int, ...] | None, expected: int
) -> None:
    assert rules.gid_index(value, version) == expected


def test_routable_by_family() -> None:
    assert [rules.routable(kind, "AF_INET") for kind in GidKind] == [
        kind is GidKind.IPV4_MAPPED for kind in GidKind
    ]
    assert [rules.routable(kind, "AF_INET6") for kind in GidKind] == [
        kind is GidKind.IPV6_GLOBAL for kind in GidKind
    ]


def test_gid_judgement_on_the_mixed_tree(sysfs_tree: Tree) -> None:
    """cx-roce-mixed-gids.source.txt: mlx4_0 has RoCE v1 GIDs only, mlx5_0's only
    routable RoCE v2 GID is index 3 (12.12.11.12 on eth4)."""
    inventory = _tree(sysfs_tree, "cx-roce-mixed-gids")
    visible = _visible(inventory)
    mlx4, mlx5 = _port(inventory, "mlx4_0"), _port(inventory, "mlx5_0")
    assert not rules.has_routable_gid(mlx4[1], "AF_INET")
    assert rules.has_routable_gid(mlx5[1], "AF_INET")
    assert not rules.has_routable_gid(mlx5[1], "AF_INET6")
    assert rules.good_gid_indexes(mlx5[1], "AF_INET", visible) == {3}
    assert rules.gid_problem(mlx5[1], 3, "AF_INET", visible) is None
    assert rules.gid_problem(mlx5[1], 2, "AF_INET", visible) == "GID 2 is IB/RoCE v1, not RoCE v2"
    assert (
        rules.gid_problem(mlx5[1], 1, "AF_INET", visible)
        == "GID 1 is ipv6-link-local, not IPv4-mapped"
    )
    assert rules.gid_problem(mlx5[1], 4, "AF_INET", visible) == "GID 4 is empty"
    assert rules.gid_problem(mlx5[1], 99, "AF_INET", visible) == "has no GID 99"
    # a GID whose netdev is not in this namespace: ibv_modify_qp fails with ENODEV
    assert rules.gid_problem(mlx5[1], 3, "AF_INET", {"eth2"}) == (
        "GID 3 belongs to eth4, which is not in this network namespace"
    )
    assert rules.common_gid_indexes([mlx5], "AF_INET", visible) == [3]
    assert rules.common_gid_indexes([mlx4, mlx5], "AF_INET", visible) == []
    assert rules.common_gid_indexes([], "AF_INET", visible) == []


def test_common_gid_index_on_erdma(sysfs_tree: Tree) -> None:
    inventory = _tree(sysfs_tree, "erdma-alibaba")
    ports = [(d, p) for d in inventory.rdma_devices for p in d.ports]
    assert rules.common_gid_indexes(ports, "AF_INET", _visible(inventory)) == [1]
    # eRDMA has no IPv6 GIDs (NCCL.md): nothing routes in AF_INET6
    assert rules.common_gid_indexes(ports, "AF_INET6", _visible(inventory)) == []


def test_gid_choice_from_listings() -> None:
    """ibv_devinfo-v-roce-cx5-mixed-gids.source.txt: the preferred GID is 5 (RoCE v2,
    IPv4-mapped 10.0.3.1), not 3; ibv_devinfo-v-rxe-ipv6-global has global IPv6 GIDs."""
    cx5 = _listing("ibv_devinfo-v-roce-cx5-mixed-gids.txt")
    port = _port(cx5, "rocep0s6")
    assert rules.common_gid_indexes([port], "AF_INET", None) == [5]
    assert rules.auto_gid_choices([port], {}) == [(port, 5)]
    assert rules.auto_gid_problems(rules.auto_gid_choices([port], {}), "AF_INET", None) == []
    # NCCL_IB_ADDR_FAMILY=AF_INET6 on a table without a global IPv6 GID: NCCL stays on
    # GID 0, a link-local RoCE v1 entry, which does not route
    six = rules.auto_gid_choices([port], {"NCCL_IB_ADDR_FAMILY": "AF_INET6"})
    assert six == [(port, 0)]
    assert rules.auto_gid_problems(six, "AF_INET6", None) == [
        "rocep0s6:1: GID 0 is IB/RoCE v1, not RoCE v2"
    ]
    rxe = _listing("ibv_devinfo-v-rxe-ipv6-global.txt")
    port = _port(rxe, "rxe0")
    assert rules.good_gid_indexes(port[1], "AF_INET", None) == {2}
    assert rules.good_gid_indexes(port[1], "AF_INET6", None) == {3, 4, 5}
    assert rules.auto_gid_choices([port], {"NCCL_IB_ADDR_FAMILY": "AF_INET6"}) == [(port, 3)]


# ---------------------------------------------------------------- interfaces


def test_interface_candidates_on_recorded_trees(sysfs_tree: Tree) -> None:
    def names(tree: str) -> list[str]:
        inventory = _tree(sysfs_tree, tree)
        known = "addresses" not in inventory.not_collected
        found = rules.interface_candidates(inventory.netdevs, addresses_known=known)
        return [n.name for n in found]

    # physical NICs before VLANs; lo never
    assert names("cx-roce-mixed-gids") == ["eth2", "eth3", "eth4", "eth2.10"]
    # a down IPoIB interface and a down docker0 are not candidates
    assert names("cx6-ib-dgx") == ["ibp12s0", "ibp18s0", "ibp75s0"]
    assert names("container-no-uverbs") == ["eth0"]  # a pod's veth


def _netdev(name: str, kind: NetKind, *addresses: tuple[str, str]) -> Netdev:
    return Netdev(
        name=name,
        state="up",
        mtu=1500,
        speed_mbps=None,
        kind=kind,
        addresses=tuple(Address(family=f, address=a, prefix_length=64) for f, a in addresses),
    )


def test_interface_families() -> None:
    """socket.cc findInterfaces: NCCL_SOCKET_FAMILY unset filters no family
    (``sock_family != -1 && family != sock_family``); hpnet does not count link-local
    IPv6 addresses, which other nodes cannot reach."""
    v6 = _netdev("eth1", NetKind.PHYSICAL, ("inet6", "2001:db8::5"))
    v4 = _netdev("eth0", NetKind.PHYSICAL, ("inet", "10.0.0.5"))
    local = _netdev("eth2", NetKind.PHYSICAL, ("inet6", "fe80::1"))
    netdevs = [v6, v4, local]
    assert rules.socket_family(None) == "any"
    assert rules.socket_family("AF_INET6") == "AF_INET6"
    assert [n.name for n in rules.interface_candidates(netdevs, "any")] == ["eth0", "eth1"]
    assert [n.name for n in rules.interface_candidates(netdevs, "AF_INET")] == ["eth0"]
    assert [n.name for n in rules.interface_candidates(netdevs, "AF_INET6")] == ["eth1"]


def test_interface_rank() -> None:
    ranked = [
        _netdev("docker0", NetKind.BRIDGE),
        _netdev("eth0", NetKind.VETH),
        _netdev("br0", NetKind.BRIDGE),
        _netdev("bond0", NetKind.BOND),
        _netdev("ens1", NetKind.PHYSICAL),
    ]
    assert [n.name for n in sorted(ranked, key=rules.interface_rank)] == [
        "bond0",
        "ens1",
        "eth0",
        "br0",
        "docker0",
    ]


# ---------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.21.5+cuda12.4", (2, 21, 5)),
        ("2.21.5-1+cuda12.4", (2, 21, 5)),
        ("2.18", (2, 18)),
        ("2.x", (2,)),
        ("", None),
        (None, None),
        ("v2.21", None),
        ("2.1234567.1", (2,)),
    ],
)
def test_version_tuple(version: str | None, expected: tuple[int, ...] | None) -> None:
    assert rules.version_tuple(version) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NCCL_IB_HCA", True),
        ("_x1", True),
        ("nccl_ib_hca", True),  # a shell name; NCCL just does not read it
        ("1NCCL", False),
        ("", False),
        ("NCCL_IB_HCA\n", False),  # `$` would let this through; `\Z` does not
        ("NCCL-IB", False),
        ("NCCL_X$(id)", False),
        ("NCCL_É", False),
    ],
)
def test_is_variable_name(name: str, expected: bool) -> None:
    assert rules.is_variable_name(name) is expected


def test_env_counts_an_ipv6_only_interface_as_nccl_does(sysfs_tree: Tree) -> None:
    """The copy of the interface rule in ``hpnet env`` (fill) read an unset
    NCCL_SOCKET_FAMILY as AF_INET, so an interface with only a global IPv6 address was
    "not up with an address" there while the doctor (and NCCL: socket.cc findInterfaces
    filters no family when the variable is unset) counted it. Both now call
    :func:`rules.socket_family`."""
    tree = _tree(sysfs_tree, "no-rdma-vm")
    inventory = dataclasses.replace(
        tree,
        netdevs=(_netdev("eth0", NetKind.PHYSICAL, ("inet6", "2001:db8::5")),),
        not_collected=tuple(k for k in tree.not_collected if k != "addresses"),
    )
    detected, findings = detected_values(
        get_profile("socket"),
        inventory,
        decisions=decide(
            get_profile("socket"),
            inventory,
            {"NCCL_SOCKET_IFNAME": ("=eth0", "user")},
            "2.23.4",
        ),
    )
    assert [f.id for f in findings] == []
    assert [(d.name, d.value, d.confirmation) for d in detected] == [
        ("NCCL_SOCKET_IFNAME", "=eth0", True)
    ]
    # with NCCL_SOCKET_FAMILY=AF_INET NCCL would not take it
    _, findings = detected_values(
        get_profile("socket"),
        inventory,
        decisions=decide(
            get_profile("socket"),
            inventory,
            {
                "NCCL_SOCKET_IFNAME": ("=eth0", "user"),
                "NCCL_SOCKET_FAMILY": ("AF_INET", "user"),
            },
            "2.23.4",
        ),
    )
    assert [f.id for f in findings] == ["no-socket-interface"]


def test_doctor_names_ports_without_a_transport_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two ACTIVE EFA ports (link layer ``Unknown``: :func:`rules.port_kind` is
    ``unknown``, which has no transport word) made ports.mixed raise KeyError."""
    one = listing_text("ibstat-efa-aws-link-layer-unknown-whitespace-collapsed.txt")
    second = one.split("\n", 1)[1].replace("efa_0", "efa_1")
    listing = tmp_path / "ibstat.txt"
    listing.write_text(one.rstrip("\n") + "\n" + second)
    main(["doctor", "--from", str(listing)])
    out = capsys.readouterr().out
    # EFA's ports are none NCCL's IB transport takes (net_ib skips a link layer that is
    # neither InfiniBand nor Ethernet): nothing to compare, and no crash
    assert "ports.mixed           fewer than two usable ports" in out
    assert "KeyError" not in out


def test_every_reader_of_names_refuses_a_trailing_newline(sysfs_tree: Tree) -> None:
    """nccl/env.py and nccl/config.py matched names with ``^...$``, and ``$`` also
    matches before a final newline: ``NCCL_IB_HCA\\n`` passed as a name and reached the
    export lines. Every reader now uses :data:`rules.VARIABLE_NAME` (``\\Z``)."""
    with pytest.raises(InputError) as info:
        check_name("MY_VAR\n", "--set")
    assert info.value.code == "bad-variable-name"
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_IB_HCA\n": "mlx5_0"}
    )
    assert "bad-variable-name" in codes(resolution)
    assert not any("\n" in name for name, _ in resolution.exported)
