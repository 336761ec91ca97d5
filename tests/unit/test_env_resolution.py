"""`hpnet env` resolution over the recorded nodes, and the issue's "done when" cases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.detect import DetectOptions, NodeInventory, detect, inventory_from_listings
from hpnet.nccl.env import Origin, Resolution, resolve_env
from hpnet.nccl.formats import to_json
from hpnet.profiles import get_profile
from hpnet.runner import RecordedRunner
from tests.conftest import listing_text

Tree = Callable[[str], Path]


def node(sysfs_tree: Tree, name: str) -> NodeInventory:
    return detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )


def resolve(profile: str, inventory: NodeInventory, **kwargs: object) -> Resolution:
    return resolve_env(get_profile(profile), inventory, **kwargs)  # type: ignore[arg-type]


def values(resolution: Resolution) -> dict[str, str]:
    return dict(resolution.exported)


def codes(resolution: Resolution) -> list[str]:
    return [f.id for f in resolution.findings]


def test_pai_dlc_erdma_on_an_erdma_node_gives_exactly_the_guide(sysfs_tree: Tree) -> None:
    resolution = resolve("pai-dlc-erdma", node(sysfs_tree, "erdma-alibaba"))
    assert values(resolution) == {
        "NCCL_DEBUG": "INFO",
        "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_IB_GID_INDEX": "1",
        "NCCL_IB_HCA": "erdma",
        "NCCL_IB_QPS_PER_CONNECTION": "8",
        "NCCL_MIN_NCHANNELS": "16",
        "NCCL_NET_PLUGIN": "none",
        "PYTHONUNBUFFERED": "1",
    }
    assert {v.origin for v in resolution.variables} == {Origin.PROFILE}
    hca = resolution.get("NCCL_IB_HCA")
    gid = resolution.get("NCCL_IB_GID_INDEX")
    assert hca is not None and gid is not None
    assert "confirmed on this node: NCCL_IB_HCA=erdma selects erdma_0:1, erdma_1:1" in hca.notes[0]
    assert "GID 1 is RoCE v2 and IPv4-mapped on erdma_0:1, erdma_1:1" in gid.notes[0]
    assert codes(resolution) == []
    # the JSON format carries value, origin and reason for each
    data = to_json(resolution)
    assert data["variables"]["NCCL_IB_GID_INDEX"]["origin"] == "profile"  # type: ignore[index]


def test_pai_lingjun_on_a_roce_node_whose_index_3_is_not_v2_ipv4() -> None:
    """A ConnectX-5 whose GID 3 is a link-local RoCE v2; 5 is RoCE v2 IPv4 (real listing)."""
    inventory = inventory_from_listings(
        [("cx5", listing_text("ibv_devinfo-v-roce-cx5-mixed-gids.txt"))]
    )
    resolution = resolve("pai-lingjun", inventory, nccl_version="2.21.5")
    gid = resolution.get("NCCL_IB_GID_INDEX")
    assert gid is not None and gid.value == "5" and gid.origin is Origin.DETECTED
    assert "the profile's '3' does not fit: NCCL_IB_GID_INDEX=3 does not work" in gid.reason
    assert "NCCL 2.21.5 would choose GID 5 itself" in gid.reason
    assert [layer.origin for layer in gid.layers] == [
        Origin.NCCL_DEFAULT,
        Origin.PROFILE,
        Origin.DETECTED,
    ]
    # the udev-renamed device is not matched by the profile's "mlx5" prefix
    hca = resolution.get("NCCL_IB_HCA")
    assert hca is not None and hca.value == "=rocep0s6:1"
    assert {"profile-gid-mismatch", "profile-hca-mismatch"} <= set(codes(resolution))
    assert values(resolution)["NCCL_IB_TC"] == "136"  # the rest of the profile stands


def test_auto_on_a_node_without_rdma_names_a_real_interface(sysfs_tree: Tree) -> None:
    resolution = resolve("auto", node(sysfs_tree, "no-rdma-vm"))
    assert resolution.transport == "socket"
    assert values(resolution) == {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "=eth0"}
    ifname = resolution.get("NCCL_SOCKET_IFNAME")
    assert ifname is not None and "eth0 is up (physical)" in ifname.reason


def test_auto_on_the_live_node_names_an_interface_that_exists() -> None:
    import socket

    live = detect(DetectOptions(), env={}, python_path=[])
    resolution = resolve("auto", live)
    if resolution.transport == "socket":
        ifname = values(resolution)["NCCL_SOCKET_IFNAME"].lstrip("=")
        assert ifname in {name for _, name in socket.if_nameindex()}


def test_auto_on_infiniband_selects_active_ports_only(sysfs_tree: Tree) -> None:
    resolution = resolve("auto", node(sysfs_tree, "cx6-ib-dgx"))
    assert resolution.transport == "ib"
    assert values(resolution)["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1"  # mlx5_3 is DOWN
    assert "NCCL_IB_GID_INDEX" not in values(resolution)


def test_auto_in_a_container_without_uverbs_falls_back_and_says_why(sysfs_tree: Tree) -> None:
    resolution = resolve("auto", node(sysfs_tree, "container-no-uverbs"))
    assert resolution.transport == "socket"
    assert values(resolution)["NCCL_IB_DISABLE"] == "1"
    assert values(resolution)["NCCL_SOCKET_IFNAME"] == "=eth0"  # a veth, the only one up


def test_ib_profile_in_a_container_without_uverbs_warns(sysfs_tree: Tree) -> None:
    resolution = resolve("ib", node(sysfs_tree, "container-no-uverbs"))
    (finding,) = [f for f in resolution.findings if f.id == "no-usable-rdma"]
    assert "mlx5_0:1: no /dev/infiniband/uverbs0 in this container" in finding.title
    assert "Socket transport" in finding.title


def test_roce_with_mixed_v1_v2_tables(sysfs_tree: Tree) -> None:
    inventory = node(sysfs_tree, "cx-roce-mixed-gids")
    resolution = resolve("roce", inventory)
    # mlx4_0 has only RoCE v1 GIDs: it cannot route RoCE v2, so it is left out, and said
    assert values(resolution)["NCCL_IB_HCA"] == "=mlx5_0:1"
    assert values(resolution)["NCCL_IB_GID_INDEX"] == "3"
    (finding,) = [f for f in resolution.findings if f.id == "hca-unset"]
    assert "mlx4_0:1 (no routable RoCE v2 IPv4-mapped GID in this namespace)" in finding.title
    assert finding.title.endswith("the node's answer: NCCL_IB_HCA==mlx5_0:1")
    # pai-lingjun's "mlx5" picks mlx5_0 only, where 3 is RoCE v2 IPv4: confirmed
    lingjun = resolve("pai-lingjun", inventory)
    assert values(lingjun)["NCCL_IB_GID_INDEX"] == "3"
    assert values(lingjun)["NCCL_SOCKET_IFNAME"] == "eth"
    # the user's own "mlx" also takes the v1-only ports: kept (the user wins), and said why
    mixed = resolve("roce", inventory, user={"NCCL_IB_HCA": "mlx"})
    assert values(mixed)["NCCL_IB_HCA"] == "mlx"
    (hca,) = [f for f in mixed.findings if f.id == "hca-mismatch"]
    assert "also selects mlx4_0:1 (no routable RoCE v2 IPv4-mapped GID in this" in hca.title
    # NCCL's own GID choice on the ports "mlx" opens lands on RoCE v1 on mlx4_0: said,
    # with the index that works on the ports the answer keeps
    (gid,) = [f for f in mixed.findings if f.id == "gid-auto-unroutable"]
    assert "mlx4_0:1: GID 1 is IB/RoCE v1" in gid.title
    assert gid.title.endswith("the node's answer: NCCL_IB_GID_INDEX=3")
    mixed_hca = mixed.get("NCCL_IB_HCA")
    assert mixed_hca is not None and mixed_hca.notes == ()  # no false "confirmed"
    # and a profile prefix that takes them too is replaced, not confirmed
    lingjun_mlx = resolve("pai-lingjun", inventory, user={"NCCL_IB_HCA": "mlx5"})
    assert values(lingjun_mlx)["NCCL_IB_GID_INDEX"] == "3"


def test_scnet_gid_index_on_infiniband(sysfs_tree: Tree) -> None:
    """NCCL routes InfiniBand by LID and never uses the GID index there (ncclIbRtrQp sets
    a GID only on Ethernet ports, 2.12 to today): Scnet's 3 is harmless on IB, not wrong."""
    inventory = node(sysfs_tree, "cx6-ib-dgx")
    for version in ("2.12.12", "2.21.5", "2.23.4"):
        resolution = resolve("scnet", inventory, nccl_version=version)
        gid = resolution.get("NCCL_IB_GID_INDEX")
        assert gid is not None and gid.value == "3"
        assert "NCCL routes them by LID" in gid.notes[0]
        assert not [f for f in resolution.findings if "GID" in f.title]


def test_socket_ifname_prefix_that_matches_nothing(sysfs_tree: Tree) -> None:
    resolution = resolve("pai-lingjun", node(sysfs_tree, "cx6-ib-dgx"))
    ifname = resolution.get("NCCL_SOCKET_IFNAME")
    # the DGX tree's interfaces are ibp*; the profile's "eth" matches none of them
    assert ifname is not None and ifname.value == "=ibp12s0"
    assert "profile-ifname-mismatch" in codes(resolution)


def test_user_overrides_and_environment_layers(sysfs_tree: Tree) -> None:
    inventory = node(sysfs_tree, "erdma-alibaba")
    resolution = resolve(
        "pai-dlc-erdma",
        inventory,
        user={"NCCL_IB_QPS_PER_CONNECTION": "4"},
        environment={"NCCL_IB_GID_INDEX": "0", "HOME": "/root", "NCCL_DEBUG": "INFO"},
    )
    qps = resolution.get("NCCL_IB_QPS_PER_CONNECTION")
    assert qps is not None and (qps.value, qps.origin) == ("4", Origin.USER)
    gid = resolution.get("NCCL_IB_GID_INDEX")
    assert gid is not None and (gid.value, gid.origin) == ("0", Origin.ENVIRONMENT)
    assert "kept from the environment; the profile layer would set '1'" in gid.notes[-1]
    assert "environment-disagrees" in codes(resolution)
    assert "HOME" not in values(resolution)  # only NCCL_* is taken from the environment
    debug = resolution.get("NCCL_DEBUG")
    assert debug is not None and debug.notes == ()  # agreeing values are not reported
    replaced = resolve("pai-dlc-erdma", inventory, environment={"NCCL_IB_GID_INDEX": "0"},
                       override_env=True)  # fmt: skip
    gid = replaced.get("NCCL_IB_GID_INDEX")
    assert gid is not None and gid.value == "1" and "(--override-env)" in gid.notes[-1]


def test_findings_for_typos_invalid_values_and_not_applicable(sysfs_tree: Tree) -> None:
    resolution = resolve(
        "pai-dlc-erdma",
        node(sysfs_tree, "erdma-alibaba"),
        environment={"NCCL_IB_TIMEOUTS": "22", "NCCL_IB_TC": "136", "NCCL_IB_SL": "abc"},
    )
    messages = {f.id: f.title for f in resolution.findings}
    assert "did you mean NCCL_IB_TIMEOUT?" in messages["unknown-variable"]
    assert "NCCL reads 'abc' as 0" in messages["invalid-value"]
    assert (
        "NCCL_IB_TC is set (environment) but the pai-dlc-erdma guide says it does not apply"
        in messages["not-applicable"]
    )


def test_profile_requirements_against_the_node_nccl(sysfs_tree: Tree) -> None:
    inventory = node(sysfs_tree, "erdma-alibaba")
    assert "nccl-too-old" in codes(resolve("pai-dlc-erdma", inventory, nccl_version="2.18.3"))
    assert "nccl-too-new" in codes(resolve("ecs-erdma", inventory, nccl_version="2.21.5"))
    assert codes(resolve("ecs-erdma", inventory, nccl_version="2.16.5")) == []


def test_every_value_every_profile_emits_is_in_the_catalog_and_valid(sysfs_tree: Tree) -> None:
    from hpnet.nccl.catalog import lookup, validate
    from hpnet.profiles import PROFILES

    nodes = [node(sysfs_tree, name) for name in ("cx6-ib-dgx", "cx-roce-mixed-gids",
             "erdma-alibaba", "no-rdma-vm", "container-no-uverbs")]  # fmt: skip
    for name in PROFILES:
        for inventory in nodes:
            for var, value in resolve(name, inventory).exported:
                if var.startswith("NCCL_"):
                    assert lookup(var) is not None, (name, var)
                    assert validate(var, value).ok, (name, var, value, validate(var, value))


def test_json_is_serialisable(sysfs_tree: Tree) -> None:
    json.dumps(to_json(resolve("auto", node(sysfs_tree, "cx6-ib-dgx"))))


SHARED = Path(__file__).resolve().parents[3] / "shared"


@pytest.mark.parametrize(
    "profile", ["pai-lingjun", "scnet", "modelarts", "pai-dlc-erdma", "ecs-erdma"]
)
def test_every_profile_value_is_in_its_source(profile: str) -> None:
    """Each value stands next to its name in the guide it cites (the seed), or, where
    the seed lost its table (Lingjun), in the product guide's copy of it."""
    import re

    if not (SHARED / "seeds").is_dir():
        pytest.skip("shared/seeds is not beside this checkout")
    for setting in get_profile(profile).settings:
        if setting.source.section == "PAI default settings (table)":
            # Lingjun: the values are the English page's table (its URL cited), which
            # PRODUCT.md records; the seed's Japanese copy lost them, and is not cited
            assert setting.source.seed is None and setting.source.url, setting
            text = (SHARED / "guide" / "PRODUCT.md").read_text()
        else:
            assert setting.source.seed, setting
            text = (SHARED / "seeds" / setting.source.seed).read_text()
        pattern = re.escape(setting.name) + r"[\s|=:]+" + re.escape(setting.value) + r"(?![\w.])"
        assert re.search(pattern, text), f"{profile}: {setting.name}={setting.value} not in source"


def test_gid_whose_netdev_is_not_in_this_namespace_is_refused(sysfs_tree: Tree) -> None:
    """In a pod, the GID table can name a netdev the pod cannot see (macvlan, SR-IOV):
    NCCL then fails in ibv_modify_qp with ENODEV. Remove eth1 from the eRDMA node."""
    import shutil

    root = sysfs_tree("erdma-alibaba")
    link = root / "sys/class/net/eth1"
    shutil.rmtree(link.resolve())
    link.unlink()
    resolution = resolve("pai-dlc-erdma", node(sysfs_tree, "erdma-alibaba"))
    (finding,) = [f for f in resolution.findings if f.id == "profile-gid-mismatch"]
    assert "GID 1 belongs to eth1, which is not in this network namespace" in finding.title
    assert "--net=host" in finding.title
