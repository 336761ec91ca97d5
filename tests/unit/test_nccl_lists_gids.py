"""NCCL's list syntax (documented examples) and its automatic GID choice (real tables)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.detect import DetectOptions, detect
from hpnet.nccl.gid_select import nccl_auto_gid_index
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.rdma.listings import parse_listing
from hpnet.runner import RecordedRunner
from tests.conftest import listing_text

IFACES = ["eth0", "eth1", "eth0.100", "docker0", "lo", "ib0", "ib1"]
HCAS = [("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_10", 1), ("mlx5_2", 1), ("mlx5_2", 2)]


@pytest.mark.parametrize(
    ("value", "selected"),
    [
        # NCCL docs, NCCL_SOCKET_IFNAME: "eth" uses every eth*; "=eth0" exactly eth0;
        # "^docker" everything but docker*; "^=docker0" everything but docker0
        ("eth", ["eth0", "eth1", "eth0.100"]),
        ("=eth0", ["eth0"]),
        ("^docker", ["eth0", "eth1", "eth0.100", "lo", "ib0", "ib1"]),
        ("^=docker0", ["eth0", "eth1", "eth0.100", "lo", "ib0", "ib1"]),
        ("ib0,bond0,eth0", ["eth0", "eth0.100", "ib0"]),  # ModelArts' value: prefixes
        (",,", IFACES),  # no entries: NCCL selects everything
    ],
)
def test_interface_lists(value: str, selected: list[str]) -> None:
    assert parse_list(value).select(IFACES) == selected


@pytest.mark.parametrize(
    ("value", "selected"),
    [
        # NCCL docs, NCCL_IB_HCA: "mlx5_1" is a prefix and also takes mlx5_10
        ("mlx5_1", [("mlx5_1", 1), ("mlx5_10", 1)]),
        ("=mlx5_1", [("mlx5_1", 1)]),
        ("=mlx5_0:1,mlx5_1:1", [("mlx5_0", 1), ("mlx5_1", 1)]),
        ("mlx5_2:2", [("mlx5_2", 2)]),
        ("^=mlx5_1,mlx5_10", [("mlx5_0", 1), ("mlx5_2", 1), ("mlx5_2", 2)]),
        ("mlx5", HCAS),
    ],
)
def test_hca_lists(value: str, selected: list[tuple[str, int]]) -> None:
    assert parse_list(value).select_ports(HCAS) == selected


def test_bad_port_is_read_as_atoi_reads_it() -> None:
    """parseStringList reads ports with atoi: 'x' is 0, which matches no port."""
    parsed = parse_list("mlx5_0:x")
    assert parsed.entries[0].port == 0 and "port 'x'" in parsed.problems[0]
    assert not parsed.matches("mlx5_0", 1)


def test_exact_list_round_trips() -> None:
    value = exact_list([("mlx5_0", 1), ("mlx5_1", 1)])
    assert value == "=mlx5_0:1,mlx5_1:1"
    assert parse_list(value).select_ports(HCAS) == [("mlx5_0", 1), ("mlx5_1", 1)]


@pytest.mark.parametrize(
    ("listing", "device", "family", "expected"),
    [
        # each expectation follows ncclIbGetGidIndex's walk over the real table
        ("ibv_devinfo-v-roce-cx6-eth.txt", "mlx5_0", "AF_INET", 3),
        ("ibv_devinfo-v-roce-cx5-mixed-gids.txt", "rocep0s6", "AF_INET", 5),
        ("ibv_devinfo-v-irdma-e810-roce.txt", "irdma1", "AF_INET", 1),
        ("ibv_devinfo-v-rxe-ipv6-global.txt", "rxe0", "AF_INET", 2),
        ("ibv_devinfo-v-rxe-ipv6-global.txt", "rxe0", "AF_INET6", 3),
        ("show_gids-cx-multi-ipv4-same-port.txt", "mlx5_1", "AF_INET", 3),
        # an IPv6-only fabric: asked for IPv4, NCCL keeps index 0 (link-local RoCE v1)
        ("ibv_devinfo-v-grep-cx7vf-ula-ipv6-global.txt", "mlx5_0", "AF_INET", 0),
        ("ibv_devinfo-v-grep-cx7vf-ula-ipv6-global.txt", "mlx5_0", "AF_INET6", 3),
    ],
)
def test_nccl_auto_gid_on_real_listings(
    listing: str, device: str, family: str, expected: int
) -> None:
    _, (devices, _) = parse_listing(listing_text(listing))
    port = next(d for d in devices if d.name == device).ports[0]
    assert nccl_auto_gid_index(port.gids, family=family) == expected


def test_nccl_auto_gid_on_recorded_trees(sysfs_tree: Callable[[str], Path]) -> None:
    def ports(name: str) -> dict[tuple[str, int], int | None]:
        inv = detect(
            DetectOptions(sysfs_root=str(sysfs_tree(name))),
            runner=RecordedRunner({}),
            env={},
            python_path=[],
        )
        return {
            (d.name, p.number): nccl_auto_gid_index(p.gids)
            for d in inv.rdma_devices
            for p in d.ports
        }

    roce = ports("cx-roce-mixed-gids")
    # mlx4_0 has RoCE v1 GIDs only: NCCL switches to the first IPv4-mapped one, a v1 GID
    assert roce == {("mlx4_0", 1): 1, ("mlx4_0", 2): 1, ("mlx5_0", 1): 3}
    assert ports("erdma-alibaba") == {("erdma_0", 1): 1, ("erdma_1", 1): 1}


def test_address_range_restricts_the_choice() -> None:
    _, (devices, _) = parse_listing(listing_text("show_gids-cx-multi-ipv4-same-port.txt"))
    port = next(d for d in devices if d.name == "mlx5_1").ports[0]
    assert nccl_auto_gid_index(port.gids, address_range="10.22.116.222/32") == 5
