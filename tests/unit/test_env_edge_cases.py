"""Edge cases of `hpnet env`: hostile values and names, layers checked against the
node, silent fallbacks made loud. Each was a defect found in review."""

from __future__ import annotations

import dataclasses
import json
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from hpnet.cli.main import main
from hpnet.detect import DetectOptions, NodeInventory, detect, inventory_from_listings
from hpnet.nccl.catalog import validate
from hpnet.nccl.env import Resolution, resolve_env
from hpnet.nccl.formats import render
from hpnet.node.netdevs import Address, Netdev, NetKind
from hpnet.profiles import get_profile
from hpnet.runner import RecordedRunner
from tests.conftest import listing_text

Tree = Callable[[str], Path]
ODD = "/tmp/a b/$(touch x)'q'\"d\"`id`$HOME=\\"


def node(sysfs_tree: Tree, name: str) -> NodeInventory:
    return detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))), runner=RecordedRunner({}), env={},
        python_path=[],
    )  # fmt: skip


def odd_resolution(sysfs_tree: Tree) -> Resolution:
    return resolve_env(
        get_profile("auto"),
        node(sysfs_tree, "cx6-ib-dgx"),
        user={"NCCL_DEBUG_FILE": ODD, "NCCL_DEBUG": "INFO"},
    )


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
def test_shell_format_round_trips_hostile_values(
    sysfs_tree: Tree, shell: str, tmp_path: Path
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    resolution = odd_resolution(sysfs_tree)
    script = render(resolution, "shell") + 'printf "%s\\n" "$NCCL_DEBUG_FILE" "$NCCL_IB_HCA"'
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([shell, "-c", script], capture_output=True, text=True, check=True,
                          cwd=work)  # fmt: skip
    assert done.stdout.splitlines() == [ODD, "=mlx5_0:1,mlx5_1:1,mlx5_2:1"]
    assert list(work.iterdir()) == []  # nothing ran


def test_mpirun_and_slurm_quote_hostile_values(sysfs_tree: Tree) -> None:
    resolution = odd_resolution(sysfs_tree)
    args = shlex.split(render(resolution, "mpirun"))
    assert f"NCCL_DEBUG_FILE={ODD}" in args
    lines = render(resolution, "slurm").splitlines()
    flag = shlex.split(lines[-1])
    assert flag[0].startswith("--export=ALL,") and f"NCCL_DEBUG_FILE={ODD}" in flag[0]
    assert lines[0] == "export NCCL_IB_HCA='=mlx5_0:1,mlx5_1:1,mlx5_2:1'"  # has commas
    assert ",NCCL_IB_HCA," in flag[0] + ","  # passed by name


def test_dotenv_and_k8s_do_not_expand(sysfs_tree: Tree) -> None:
    resolution = resolve_env(get_profile("socket"), node(sysfs_tree, "no-rdma-vm"),
                             user={"NCCL_DEBUG_FILE": "/tmp/$(HOSTNAME)/${USER}.log"})  # fmt: skip
    assert "NCCL_DEBUG_FILE='/tmp/$(HOSTNAME)/${USER}.log'" in render(resolution, "dotenv")
    k8s = render(resolution, "k8s")
    assert 'value: "/tmp/$$(HOSTNAME)/$${USER}.log"' in k8s
    quoted = resolve_env(get_profile("socket"), node(sysfs_tree, "no-rdma-vm"),
                         user={"NCCL_DEBUG_FILE": "/tmp/it's.log"})  # fmt: skip
    with pytest.raises(Exception, match="single quote"):
        render(quoted, "dotenv")


def test_k8s_doubles_every_dollar_sign(sysfs_tree: Tree) -> None:
    # the kubelet reads "$$" as "$" and expands "$(X)": "$$(X)" written as "$$$(X)"
    # (only "$(" doubled) reached the pod as "$" + X's value
    value = "a$$(X)b$(Y)c$"
    resolution = resolve_env(get_profile("socket"), node(sysfs_tree, "no-rdma-vm"),
                             user={"NCCL_DEBUG_FILE": value})  # fmt: skip
    entries = yaml.safe_load(render(resolution, "k8s"))["env"]
    written = next(e["value"] for e in entries if e["name"] == "NCCL_DEBUG_FILE")
    assert written == "a$$$$(X)b$$(Y)c$$"


def test_k8s_values_round_trip_through_yaml(sysfs_tree: Tree) -> None:
    # JSON's surrogate pairs (\ud83d\ude00) and raw NEL / LS are not read back by YAML
    value = "x\U0001f600\x85\u2028\x7f\ufeffy"
    resolution = resolve_env(get_profile("socket"), node(sysfs_tree, "no-rdma-vm"),
                             user={"NCCL_DEBUG_FILE": value})  # fmt: skip
    entries = yaml.safe_load(render(resolution, "k8s"))["env"]
    assert {"name": "NCCL_DEBUG_FILE", "value": value} in entries


def test_environment_names_that_are_not_identifiers_are_ignored(sysfs_tree: Tree) -> None:
    resolution = resolve_env(
        get_profile("socket"),
        node(sysfs_tree, "no-rdma-vm"),
        environment={"NCCL_X;touch /tmp/pwned": "1", "NCCL_DEBUG": "WARN"},
    )
    assert [v.name for v in resolution.variables] == [
        "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME"
    ]  # fmt: skip


def test_override_env_unsets_what_the_guide_says_does_not_apply(sysfs_tree: Tree) -> None:
    inventory = node(sysfs_tree, "erdma-alibaba")
    kept = resolve_env(get_profile("pai-dlc-erdma"), inventory, environment={"NCCL_IB_TC": "136"})
    assert dict(kept.exported)["NCCL_IB_TC"] == "136"
    removed = resolve_env(get_profile("pai-dlc-erdma"), inventory,
                          environment={"NCCL_IB_TC": "136"}, override_env=True)  # fmt: skip
    assert "NCCL_IB_TC" not in dict(removed.exported)
    assert removed.unset == ("NCCL_IB_TC",)
    assert "unset NCCL_IB_TC\n" in render(removed, "shell")


def test_profile_variables_outside_nccl_are_taken_from_the_environment(sysfs_tree: Tree) -> None:
    resolution = resolve_env(get_profile("pai-dlc-erdma"), node(sysfs_tree, "erdma-alibaba"),
                             environment={"PYTHONUNBUFFERED": "0", "HOME": "/root"})  # fmt: skip
    var = resolution.get("PYTHONUNBUFFERED")
    assert var is not None and var.value == "0"
    assert any(f.id == "environment-disagrees" and "PYTHONUNBUFFERED" in f.title
               for f in resolution.findings)  # fmt: skip
    assert resolution.get("HOME") is None


def test_user_values_are_checked_against_the_node(sysfs_tree: Tree) -> None:
    resolution = resolve_env(get_profile("pai-dlc-erdma"), node(sysfs_tree, "erdma-alibaba"),
                             user={"NCCL_IB_HCA": "=erdma_9"})  # fmt: skip
    hca = resolution.get("NCCL_IB_HCA")
    assert hca is not None and hca.value == "=erdma_9" and hca.notes == ()  # the user wins
    codes = {f.id: f.title for f in resolution.findings}
    assert "matches no RDMA port here" in codes["hca-mismatch"]


def test_auto_falls_back_to_sockets_loudly(sysfs_tree: Tree) -> None:
    resolution = resolve_env(get_profile("auto"), node(sysfs_tree, "container-no-uverbs"))
    (finding,) = [f for f in resolution.findings if f.id == "no-usable-rdma"]
    assert "mlx5_0:1: no /dev/infiniband/uverbs0 in this container" in finding.title
    listing = inventory_from_listings([("x", listing_text("ibstat-cx6-ib-initializing-no-sm.txt"))])
    resolution = resolve_env(get_profile("auto"), listing)
    (finding,) = [f for f in resolution.findings if f.id == "no-usable-rdma"]
    assert "mlx5_5:1: port INIT" in finding.title


def test_live_node_needs_an_address(sysfs_tree: Tree) -> None:
    """On a live node addresses are known: an up interface without one cannot bootstrap."""
    inventory = node(sysfs_tree, "no-rdma-vm")
    bare = Netdev(name="enp65s0f0", state="up", mtu=1500, speed_mbps=None, kind=NetKind.PHYSICAL)
    netdevs = [
        dataclasses.replace(n, addresses=(Address(family="inet", address="10.0.0.5"),))
        if n.name == "eth0" else n
        for n in inventory.netdevs
    ]  # fmt: skip
    live = dataclasses.replace(inventory, netdevs=(bare, *netdevs), not_collected=())
    resolution = resolve_env(get_profile("socket"), live)
    assert dict(resolution.exported)["NCCL_SOCKET_IFNAME"] == "=eth0"


def test_nccls_own_gid_choice_reads_only_ib_addr_family() -> None:
    """NCCL_SOCKET_FAMILY steers hpnet's choice, but NCCL's automatic choice reads only
    NCCL_IB_ADDR_FAMILY (connect.cc envIbAddrFamily)."""
    # the recorded listing is an excerpt of GID lines: the port's state comes from a
    # second listing of the same node (what a listing does not show is not assumed)
    inventory = inventory_from_listings(
        [
            ("rxe", listing_text("ibv_devinfo-v-rxe-ipv6-global.txt")),
            ("state", "hca_id: rxe0\n\tport: 1\n\t\tstate: PORT_ACTIVE (4)\n"),
        ]
    )
    resolution = resolve_env(get_profile("roce"), inventory, nccl_version="2.23.4",
                             user={"NCCL_SOCKET_FAMILY": "AF_INET6"})  # fmt: skip
    gid = resolution.get("NCCL_IB_GID_INDEX")
    assert gid is not None and gid.value == "3"  # the first global IPv6 RoCE v2 GID
    assert "left unset, NCCL 2.23.4 would choose rxe0:1->2" in gid.reason
    both = resolve_env(get_profile("roce"), inventory, nccl_version="2.23.4",
                       user={"NCCL_IB_ADDR_FAMILY": "AF_INET6"})  # fmt: skip
    gid = both.get("NCCL_IB_GID_INDEX")
    assert gid is not None and "would choose GID 3 itself" in gid.reason


@pytest.mark.parametrize(
    ("value", "ok"),
    [("PXB", True), ("NVB", True), ("C2C", True), ("PXN", True), ("P2C", True), ("7", True),
     ("pxb", False), ("FAR", False)],
)  # fmt: skip
def test_path_levels_as_nccl_reads_them(value: str, ok: bool) -> None:
    assert validate("NCCL_P2P_LEVEL", value).ok is ok


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "code_name"),
    [
        (["--set", "NCCL_IB_GID_INDEX=abc"], "invalid-value"),
        (["--set", "NCCL_IB_HCA=mlx5_0:x"], "invalid-value"),
        (["--set", "NCCL_IB_TIMEOUT="], "invalid-value"),
        (["--profile", ""], "usage"),
    ],
)
def test_bad_user_values_are_refused(
    capsys: pytest.CaptureFixture[str], args: list[str], code_name: str
) -> None:
    code, out, err = run(["env", *args], capsys)
    assert (code, out) == (2, "") and err.startswith(f"error[{code_name}]: ")


@pytest.mark.parametrize(
    ("content", "code_name"),
    [
        (b"\xff\xfe junk", "config-syntax"),
        (b"[env]\nNCCL_IB_TIMEOUT = true\n", "config-bad-value"),
        (b"[env]\nNCCL_IB_TIMEOUT = 99\n", "invalid-value"),
        (b"profile = 'pai-lingun'\n", "unknown-profile"),
        (b"#" * (2 << 20), "config-too-large"),
    ],
)
def test_bad_configs_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, code_name: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(content)
    code, _, err = run(["env", "--config", str(path)], capsys)
    assert code == 2 and err.startswith(f"error[{code_name}]: ") and str(path) in err


def test_json_output_is_valid_with_hostile_values(sysfs_tree: Tree) -> None:
    data = json.loads(render(odd_resolution(sysfs_tree), "json"))
    assert data["variables"]["NCCL_DEBUG_FILE"]["value"] == ODD
