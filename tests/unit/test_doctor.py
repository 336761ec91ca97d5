"""`hpnet doctor`: every check's PASS and failures over recorded nodes, and the
issue's end-to-end scenarios through the command line."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.detect import DetectOptions, NodeInventory, detect, inventory_from_listings
from hpnet.doctor.model import Facts
from hpnet.doctor.registry import CHECKS
from hpnet.node.acs import acs_redirect, bridges_between
from hpnet.node.gpudirect import GpuDirect
from hpnet.node.limits import Limits
from hpnet.node.versions import LibraryInfo, Versions
from hpnet.profiles import get_profile
from hpnet.result import Status
from hpnet.runner import RecordedRunner
from tests.conftest import DATA, listing_text

Tree = Callable[[str], Path]


def node(sysfs_tree: Tree, name: str) -> NodeInventory:
    return detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )


def check(
    check_id: str,
    inventory: NodeInventory,
    variables: Mapping[str, str] | None = None,
    **extra: object,
) -> tuple[Status, str, tuple[str, ...], str | None]:
    facts = Facts(
        inventory=inventory,
        variables=dict(variables or {}),
        variables_source="test",
        profile=extra.pop("profile", None),
        nccl_version=extra.pop("nccl", None),  # type: ignore[arg-type]
        **extra,
    )  # type: ignore[arg-type]
    found = CHECKS[check_id](facts)
    assert found.id == check_id
    if found.status in (Status.WARN, Status.FAIL):
        assert found.fix or found.fix_note, f"{check_id} {found.status} without a fix"
    assert_pasteable(found.fix)
    return found.status, found.summary, found.evidence, found.fix


BASH = shutil.which("bash")


def assert_pasteable(fix: str | None) -> None:
    """A fix is shell commands and nothing else: bash parses it (no prose, no
    parenthetical notes, no unbalanced quotes)."""
    if fix is None:
        return
    assert fix.strip() == fix and "\n\n" not in fix, repr(fix)
    assert " (" not in fix.replace("$(", ""), f"prose in a fix: {fix!r}"
    if BASH is not None:
        done = subprocess.run(
            [BASH, "-n", "-c", fix], capture_output=True, text=True, timeout=30, check=False
        )
        assert done.returncode == 0, (fix, done.stderr)


# ------------------------------------------------------------------ variables


def test_syntax(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "no-rdma-vm")
    assert check("vars.syntax", inv, {"NCCL_IB_TIMEOUT": "22"})[0] is Status.PASS
    status, _, evidence, _ = check(
        "vars.syntax", inv, {"NCCL_IB_TIMEOUT": "abc", "NCCL_IB_TC": "0136"}
    )
    assert status is Status.FAIL
    assert "NCCL_IB_TIMEOUT='abc': not an integer: NCCL reads 'abc' as 0" in evidence
    assert check("vars.syntax", inv, {})[0] is Status.SKIP


def test_unknown_names(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "no-rdma-vm")
    status, _, evidence, fix = check("vars.unknown", inv, {"NCCL_IB_TIMEOUTS": "22"})
    assert status is Status.WARN and "did you mean NCCL_IB_TIMEOUT?" in evidence[0]
    # the literal value: the old variable may not be in the shell (an --env-file)
    assert fix == "export NCCL_IB_TIMEOUT=22\nunset NCCL_IB_TIMEOUTS"
    assert check("vars.unknown", inv, {"NCCL_DEBUG": "WARN"})[0] is Status.PASS


def test_hca(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    assert check("vars.hca", dgx, {"NCCL_IB_HCA": "=mlx5_0,mlx5_1"})[0] is Status.PASS
    # a prefix that also matches a port NCCL skips (down): NCCL opens the others either
    # way, as hpnet env judges it (issue 25); ports.state says the port is down
    status, summary, _, _ = check("vars.hca", dgx, {"NCCL_IB_HCA": "mlx5"})
    assert status is Status.PASS
    assert summary == (
        "NCCL_IB_HCA=mlx5 selects mlx5_0:1, mlx5_1:1, mlx5_2:1 (NCCL skips mlx5_3:1: not "
        "usable here)"
    )
    assert check("ports.state", dgx, {"NCCL_IB_HCA": "mlx5"})[0] is Status.WARN
    status, _, _, fix = check("vars.hca", dgx, {"NCCL_IB_HCA": "erdma"})
    assert status is Status.FAIL and fix == "export NCCL_IB_HCA='=mlx5_0:1,mlx5_1:1,mlx5_2:1'"
    # no usable port at all: the list cannot help, so vars.hca skips and vars.transport
    # says NCCL falls back to sockets, and why no port is usable
    pod = node(sysfs_tree, "container-no-uverbs")
    status, summary, _, fix = check("vars.hca", pod, {"NCCL_IB_HCA": "mlx5"})
    assert status is Status.SKIP and fix is None
    assert "does not matter: no usable RDMA port here" in summary
    status, summary, evidence, _ = check("vars.transport", pod, {"NCCL_IB_HCA": "mlx5"})
    assert status is Status.WARN and "none usable here" in summary
    assert "fall back to its Socket transport" in summary
    assert "mlx5_0:1: no /dev/infiniband/uverbs0 in this container" in evidence
    # unset: judged too; NCCL opens exactly the usable InfiniBand ports here
    status, summary, _, _ = check("vars.hca", dgx, {})
    assert status is Status.PASS
    assert summary == (
        "NCCL_IB_HCA is not set: NCCL opens mlx5_0:1, mlx5_1:1, mlx5_2:1, every usable "
        "InfiniBand port here"
    )


def test_gid(sysfs_tree: Tree) -> None:
    roce = node(sysfs_tree, "cx-roce-mixed-gids")
    assert (
        check("vars.gid", roce, {"NCCL_IB_HCA": "mlx5", "NCCL_IB_GID_INDEX": "3"})[0] is Status.PASS
    )
    status, _, evidence, fix = check(
        "vars.gid", roce, {"NCCL_IB_HCA": "mlx5", "NCCL_IB_GID_INDEX": "1"}
    )
    assert status is Status.FAIL and evidence == (
        "mlx5_0:1 GID 1 is ipv6-link-local, not IPv4-mapped",
    )
    assert fix == "export NCCL_IB_GID_INDEX=3"
    status, _, evidence, fix = check("vars.gid", roce, {"NCCL_IB_GID_INDEX": "3"})  # all ports
    assert status is Status.FAIL and "mlx4_0:1 GID 3 is empty" in evidence
    # unsetting would not help (NCCL's own choice takes mlx4_0's RoCE v1 GIDs): keep the
    # port GID 3 works on
    assert fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    fixed = {"NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "=mlx5_0:1"}
    assert check("vars.gid", roce, fixed)[0] is Status.PASS
    ib = node(sysfs_tree, "cx6-ib-dgx")
    status, summary, _, _ = check("vars.gid", ib, {"NCCL_IB_GID_INDEX": "3"})
    # issue 25: the skip said "NCCL_IB_GID_INDEX is 3 (negative)" for any value
    # on InfiniBand the index is not used at all (routed by LID), whatever its value
    assert status is Status.SKIP and "negative" not in summary
    assert summary.startswith("these are InfiniBand ports: NCCL routes them by LID")
    assert "does not use the GID index" in summary
    status, summary, _, _ = check("vars.gid", ib, {"NCCL_IB_GID_INDEX": "-1"}, nccl="2.23.4")
    assert status is Status.SKIP and "negative" not in summary
    assert "does not use the GID index" in summary
    status, summary, _, _ = check("vars.gid", ib)
    assert status is Status.SKIP
    assert summary.startswith("NCCL_IB_GID_INDEX is not set: no RoCE/eRDMA transport here")


def test_ifname(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "erdma-alibaba")
    status, summary, _, _ = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "eth"})
    # each match names its kind (and its address, where the source records one)
    assert status is Status.PASS
    assert "matches eth0 (physical), eth1 (physical), eth2 (physical)" in summary
    assert summary.endswith("(addresses are not recorded: not checked)")  # a recorded tree
    status, _, _, fix = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "ib0"})
    assert status is Status.FAIL and fix == "export NCCL_SOCKET_IFNAME='=eth0'"
    # one character: NCCL ignores it and picks the interface itself
    assert check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "e"})[0] is Status.WARN


def test_ib_disabled_and_debug(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    assert check("vars.ib_disabled", dgx, {"NCCL_IB_DISABLE": "1"})[0] is Status.WARN
    assert check("vars.ib_disabled", dgx, {"NCCL_NET": "Socket"})[0] is Status.WARN
    assert (
        check("vars.ib_disabled", node(sysfs_tree, "no-rdma-vm"), {"NCCL_IB_DISABLE": "1"})[0]
        is Status.PASS
    )
    assert check("vars.debug", dgx, {"NCCL_DEBUG": "INFO"})[0] is Status.WARN
    assert check("vars.debug", dgx, {"NCCL_DEBUG": "WARN"})[0] is Status.PASS


# ------------------------------------------------------------------ versions, user space


def versions(**changes: object) -> Versions:
    present = LibraryInfo(name="x", path="/usr/lib/x", version="1")
    base = Versions(
        nvidia_driver="535",
        cuda_driver="12.2",
        nccl=(),
        torch=None,
        rdma_core="50.0",
        libibverbs=present,
        librdmacm=present,
        providers=(LibraryInfo(name="erdma", path="/p"),),
        kernel="6.8.0",
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_versions(sysfs_tree: Tree) -> None:
    inv = dataclasses.replace(node(sysfs_tree, "erdma-alibaba"), versions=versions())
    dlc = get_profile("pai-dlc-erdma")
    assert check("versions.nccl", inv, profile=dlc, nccl="2.21.5")[0] is Status.PASS
    assert check("versions.nccl", inv, profile=dlc, nccl="2.18.3")[0] is Status.FAIL
    assert (
        check("versions.nccl", inv, profile=get_profile("ecs-erdma"), nccl="2.19.3")[0]
        is Status.FAIL
    )
    assert check("versions.nccl", inv, profile=dlc)[0] is Status.SKIP
    assert check("versions.cuda", inv, profile=dlc)[0] is Status.PASS
    old = dataclasses.replace(inv, versions=versions(cuda_driver="11.8"))
    assert check("versions.cuda", old, profile=dlc)[0] is Status.FAIL


def test_userspace(sysfs_tree: Tree) -> None:
    base = node(sysfs_tree, "erdma-alibaba")
    ok = dataclasses.replace(base, versions=versions())
    for check_id in ("userspace.libibverbs", "userspace.providers", "userspace.librdmacm"):
        assert check(check_id, ok)[0] is Status.PASS
        assert check(check_id, base)[0] is Status.SKIP  # a recorded tree
    missing = LibraryInfo(name="x", path=None)
    bare = dataclasses.replace(
        base,
        versions=versions(
            libibverbs=missing, librdmacm=missing, providers=(LibraryInfo(name="erdma", path=None),)
        ),
    )
    status, _, _, fix = check(
        "userspace.libibverbs", bare, profile=get_profile("pai-dlc-erdma"), distro="ubuntu22.04"
    )
    assert status is Status.FAIL and fix is not None and "libibverbs1 ibverbs-providers" in fix
    assert check("userspace.providers", bare)[0] is Status.FAIL
    assert check("userspace.librdmacm", bare)[0] is Status.WARN


# ------------------------------------------------------------------ devices, limits


def test_devices(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    assert check("devices.uverbs", dgx)[0] is Status.PASS
    pod = node(sysfs_tree, "container-no-uverbs")
    found = CHECKS["devices.uverbs"](
        Facts(inventory=pod, variables={}, variables_source="t", profile=None, nccl_version=None)
    )
    assert found.status is Status.FAIL and len(found.evidence) == 4
    assert found.fix is None  # restarting the container is no command to paste here
    assert found.fix_note is not None and "--device=/dev/infiniband/uverbs0" in found.fix_note
    assert check("devices.rdma_cm", dgx, dev_infiniband=("rdma_cm", "uverbs0"))[0] is Status.PASS
    assert check("devices.rdma_cm", dgx, dev_infiniband=("uverbs0",))[0] is Status.WARN
    assert check("devices.uverbs", node(sysfs_tree, "no-rdma-vm"))[0] is Status.SKIP


def limits(**changes: object) -> Limits:
    base = Limits(
        memlock_soft_bytes="unlimited",
        memlock_hard_bytes="unlimited",
        nofile_soft=1048576,
        nofile_hard=1048576,
        shm_bytes=8 << 30,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_limits(sysfs_tree: Tree) -> None:
    base = node(sysfs_tree, "cx6-ib-dgx")
    good = dataclasses.replace(base, limits=limits())
    for check_id in ("limits.memlock", "limits.shm", "limits.nofile"):
        assert check(check_id, good)[0] is Status.PASS
        assert check(check_id, base)[0] is Status.SKIP
    bad = dataclasses.replace(
        base, limits=limits(memlock_soft_bytes=65536, nofile_soft=1024, shm_bytes=64 << 20)
    )
    status, _, _, fix = check("limits.memlock", bad)  # the hard limit is unlimited
    assert status is Status.FAIL and fix == "ulimit -l unlimited"
    assert check("limits.shm", bad)[0] is Status.WARN
    assert check("limits.nofile", bad)[0] is Status.WARN
    unmounted = dataclasses.replace(base, limits=limits(shm_bytes=None))
    assert check("limits.shm", unmounted)[0] is Status.FAIL


# ------------------------------------------------------------------ GPUDirect, ports


def test_gpudirect(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")  # nvidia_peermem loaded in this tree
    assert check("gpudirect.module", dgx)[0] is Status.PASS
    none = GpuDirect(
        nvidia_peermem=False,
        nv_peer_mem=False,
        kernel_release="5.4.0",
        nvidia_module_version="535",
        nvidia_open_kernel_module=False,
    )
    assert check("gpudirect.module", dataclasses.replace(dgx, gpudirect=none))[0] is Status.WARN
    dmabuf = dataclasses.replace(none, kernel_release="6.8.0", nvidia_open_kernel_module=True)
    assert check("gpudirect.module", dataclasses.replace(dgx, gpudirect=dmabuf))[0] is Status.PASS
    assert check("gpudirect.locality", dgx)[0] is Status.PASS  # every GPU has a PXB NIC
    assert check("gpudirect.acs", dgx)[0] is Status.SKIP
    assert check("gpudirect.acs", dgx, acs={"0000:0b:00.0": False})[0] is Status.PASS
    status, _, _, fix = check("gpudirect.acs", dgx, acs={"0000:0b:00.0": True})
    assert (
        status is Status.FAIL
        and fix is not None
        and "setpci -s 0000:0b:00.0 ECAP_ACS+0x6.w=0000" in fix
    )
    # only mlx5_2 usable: GPU0/GPU1 (NUMA 3) reach it across sockets, SYS
    far = check("gpudirect.locality", dgx, {"NCCL_IB_HCA": "=mlx5_2"})
    assert far[0] is Status.WARN and "GPU0 (0000:07:00.0): nearest usable NIC is SYS" in far[2]


def test_ports(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    status, _, evidence, _ = check("ports.state", dgx)
    assert status is Status.WARN and evidence == (
        "mlx5_3:1: DOWN (Polling: no link partner answers: the cable, the switch port or the "
        "peer's port is down)",
    )
    assert check("ports.state", dgx, {"NCCL_IB_HCA": "=mlx5_3"})[0] is Status.FAIL
    assert check("ports.state", dgx, {"NCCL_IB_HCA": "=mlx5_0"})[0] is Status.PASS
    no_sm = inventory_from_listings([("x", listing_text("ibstat-cx6-ib-initializing-no-sm.txt"))])
    status, _, evidence, _ = check("ports.state", no_sm)
    assert status is Status.FAIL and "INIT, link up but no subnet manager" in evidence[0]
    assert check("ports.mixed", dgx)[0] is Status.PASS
    mixed = inventory_from_listings(
        [("x", listing_text("ibv_devinfo-mlnx-8hca-mixed-ib-eth-port-down.txt"))]
    )
    # an unset NCCL_IB_HCA opens the RoCE ports too: that mix is vars.hca's WARN and fix,
    # which keeps the ports of the transport hpnet env chooses for this node (InfiniBand
    # first; issue 25: one verdict), not a group of the doctor's own choosing; ports.mixed
    # leaves the selection to it rather than saying it twice
    status, summary, _, fix = check("vars.hca", mixed)
    assert status is Status.WARN and "NCCL opens every ACTIVE port" in summary
    assert "mlx5_3:1 (RoCE, not InfiniBand)" in summary
    assert fix == "export NCCL_IB_HCA='=mlx5_5:1'"
    status, summary, _, fix = check("ports.mixed", mixed)
    assert status is Status.SKIP and summary == "vars.hca judges the selection"
    assert fix is None


def test_a_port_state_the_listing_does_not_show_is_never_passed() -> None:
    # show_gids prints GIDs, not port state (issue 25): the two ports are not "ACTIVE"
    gids = inventory_from_listings(
        [("x", listing_text("show_gids-indented-paste-h100-two-hcas-rocev2-ipv4-gid-3.txt"))]
    )
    status, summary, _, _ = check("ports.state", gids)
    assert status is Status.WARN
    assert summary == "the state of 2 selected port(s) is not shown: mlx5_0:1, mlx5_1:1"


# ------------------------------------------------------------------ ACS parsing


def config_with_acs(control: int) -> bytes:
    """Config space laid out by the PCIe spec: an AER capability at 0x100 chaining to
    ACS (ID 0x000D) at 0x148, whose Control register is at +6."""
    space = bytearray(4096)
    space[0x100:0x104] = (0x0001 | (1 << 16) | (0x148 << 20)).to_bytes(4, "little")
    space[0x148:0x14C] = (0x000D | (1 << 16)).to_bytes(4, "little")
    space[0x14E:0x150] = control.to_bytes(2, "little")
    return bytes(space)


@pytest.mark.parametrize(
    ("control", "redirect"), [(0x0000, False), (0x001D, True), (0x0001, False), (0x0008, True)]
)
def test_acs_control_register(control: int, redirect: bool) -> None:
    assert acs_redirect(config_with_acs(control)) is redirect


def test_acs_unreadable_or_absent() -> None:
    assert acs_redirect(bytes(256)) is None  # a non-root read stops at 256 bytes
    assert acs_redirect(bytes(4096)) is False  # no extended capabilities


def test_bridges_between_gpu_and_nic() -> None:
    gpu = ("pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0")
    nic = ("pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0")
    assert bridges_between(gpu, nic) == ["0000:01:00.0", "0000:02:00.0", "0000:02:01.0"]
    assert bridges_between(gpu, ("pci0000:80", "0000:80:01.0")) == []


# ------------------------------------------------------------------ end to end


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().out


@pytest.fixture(autouse=True)
def no_nccl_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


def statuses(out: str) -> dict[str, str]:
    return {c["id"]: c["status"] for c in json.loads(out)["checks"]}


def test_e2e_erdma_with_the_pai_dlc_profile(
    sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        [
            "doctor",
            "--profile",
            "pai-dlc-erdma",
            "--sysfs-root",
            str(sysfs_tree("erdma-alibaba")),
            "--json",
        ],
        capsys,
    )
    found = statuses(out)
    assert code == 0 and json.loads(out)["verdict"] == "WARN"
    assert {
        found[k] for k in ("vars.syntax", "vars.hca", "vars.gid", "vars.ifname", "devices.uverbs")
    } == {"PASS"}
    assert found["vars.debug"] == "WARN"  # the guide's NCCL_DEBUG=INFO


def test_e2e_roce_node_where_the_profile_gid_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    listing = str(DATA / "listings" / "ibv_devinfo-v-roce-cx5-mixed-gids.txt")
    code, out = run(["doctor", "--profile", "pai-lingjun", "--from", listing, "--json"], capsys)
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    assert code == 1
    assert (
        checks["vars.gid"]["status"] == "FAIL"
        and checks["vars.gid"]["fix"] == "export NCCL_IB_GID_INDEX=5"
    )


def test_a_listing_that_shows_no_port_is_no_pass(capsys: pytest.CaptureFixture[str]) -> None:
    # ibv_devices names the devices only: whether any port is usable is not known
    listing = str(DATA / "listings" / "ibv_devices-azure-2dev.txt")
    code, out = run(["doctor", "--from", listing, "--json"], capsys)
    report = json.loads(out)
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 0 and report["verdict"] == "WARN"
    assert checks["ports.state"]["status"] == "WARN"
    assert (
        "mlx5_0: its ports are not shown (`ibv_devinfo` shows them)"
        in (checks["ports.state"]["evidence"])
    )
    assert "ibv_devinfo -v" in checks["ports.state"]["fix_note"]
    assert checks["devices.uverbs"]["status"] == "SKIP"


def test_e2e_container_without_uverbs(sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(
        ["doctor", "--sysfs-root", str(sysfs_tree("container-no-uverbs")), "--json"], capsys
    )
    assert code == 1 and statuses(out)["devices.uverbs"] == "FAIL"


def test_e2e_no_rdma_with_nccl_ib_hca_set(
    sysfs_tree: Tree, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    env_file = tmp_path / "job.env"
    env_file.write_text("export NCCL_IB_HCA=mlx5\nNCCL_SOCKET_IFNAME='=eth0'\n")
    code, out = run(
        ["doctor", "--sysfs-root", str(sysfs_tree("no-rdma-vm")), "--env-file", str(env_file)],
        capsys,
    )
    # no RDMA device at all: NCCL uses sockets whatever NCCL_IB_HCA says, so the list is
    # harmless here (a SKIP that says so, no fix), and the transport check says sockets
    assert code == 0
    assert (
        "SKIP  vars.hca              NCCL_IB_HCA=mlx5 does not matter: no usable RDMA port "
        "here: NCCL uses its Socket transport\n" in out
    )
    assert (
        "PASS  vars.transport        no RDMA device on this node: NCCL uses its Socket "
        "transport\n" in out
    )
    assert "fix:" not in out


def test_e2e_misspelled_variable(
    sysfs_tree: Tree, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NCCL_SOCKET_IFNAMES", "eth0")
    code, out = run(["doctor", "--sysfs-root", str(sysfs_tree("no-rdma-vm")), "--json"], capsys)
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    assert code == 0 and checks["vars.unknown"]["status"] == "WARN"
    assert "did you mean NCCL_SOCKET_IFNAME?" in checks["vars.unknown"]["evidence"][0]


def test_this_machine_never_crashes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(["doctor", "--json"], capsys)
    data = json.loads(out)
    assert code in (0, 1) and len(data["checks"]) == len(CHECKS)
    for entry in data["checks"]:
        assert set(entry) == {"id", "area", "status", "summary", "evidence", "fix", "fix_note"}
        assert_pasteable(entry["fix"])


def test_bad_env_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    env_file = tmp_path / "bad.env"
    env_file.write_text("NCCL_IB_HCA mlx5\n")
    code = main(["doctor", "--env-file", str(env_file)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error[parse]: not a NAME=VALUE line") and ":1" in err


def test_net_plugin_and_net(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "erdma-alibaba")
    assert check("vars.net", inv, {})[0] is Status.SKIP
    assert check("vars.net", inv, {"NCCL_NET_PLUGIN": "none"})[0] is Status.PASS
    assert check("vars.net", inv, {"NCCL_NET": "IB"})[0] is Status.PASS
    status, summary, _, _ = check(
        "vars.net", inv, {"NCCL_NET_PLUGIN": "none", "NCCL_NET": "AWS Libfabric"}
    )
    assert status is Status.FAIL and "loads no plugin" in summary
    found = ("libnccl-net-aws-ofi.so",)
    assert (
        check("vars.net", inv, {"NCCL_NET_PLUGIN": "aws-ofi"}, net_plugins=found)[0] is Status.PASS
    )
    status, summary, _, fix = check(
        "vars.net", inv, {"NCCL_NET_PLUGIN": "aiacc"}, net_plugins=found
    )
    assert status is Status.WARN and "libnccl-net-aiacc.so" in summary
    assert fix == "export NCCL_NET_PLUGIN=none"
    assert check("vars.net", inv, {"NCCL_NET": "IBext_v8"}, net_plugins=())[0] is Status.FAIL
    assert check("vars.net", inv, {"NCCL_NET_PLUGIN": "aiacc"})[0] is Status.SKIP  # not live


def test_checks_that_depend_on_the_selection_skip_when_it_is_empty(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    for check_id in ("devices.uverbs", "ports.state"):
        status, summary, _, _ = check(check_id, dgx, {"NCCL_IB_HCA": "erdma"})
        assert status is Status.SKIP and "see vars.hca" in summary
    listing = inventory_from_listings([("x", listing_text("ibv_devinfo-erdma.txt"))])
    assert check("devices.uverbs", listing)[0] is Status.SKIP


def test_a_misspelled_hca_list_is_renamed_only_where_its_value_selects_a_port(
    sysfs_tree: Tree,
) -> None:
    """Issue 25: renaming NCCL_IB_HCAA=mlx5_0 to NCCL_IB_HCA on a node without mlx5_0
    selected no port; the fix sets vars.hca's answer where the value selects none of the
    ports that answer keeps, and carries the value where it selects one."""
    erdma = node(sysfs_tree, "erdma-alibaba")
    status, _, evidence, fix = check("vars.unknown", erdma, {"NCCL_IB_HCAA": "mlx5_0"})
    assert status is Status.WARN
    assert "Its value 'mlx5_0' selects none of the ports NCCL is to open here" in evidence[0]
    assert "(=erdma_0:1,erdma_1:1: vars.hca's answer) instead" in evidence[0]
    assert fix == "export NCCL_IB_HCA='=erdma_0:1,erdma_1:1'\nunset NCCL_IB_HCAA"
    roce = node(sysfs_tree, "cx-roce-mixed-gids")
    _, _, evidence, fix = check("vars.unknown", roce, {"NCCL_IB_HCAA": "mlx5_0"})
    assert evidence[0].endswith("The fix renames it")
    assert fix == "export NCCL_IB_HCA=mlx5_0\nunset NCCL_IB_HCAA"
    # mlx4_0 is there, but not among the ports vars.hca keeps (no routable RoCE v2 GID)
    _, _, evidence, fix = check("vars.unknown", roce, {"NCCL_IB_HCAA": "mlx4_0"})
    assert "selects none of the ports NCCL is to open here" in evidence[0]
    assert fix == "export NCCL_IB_HCA='=mlx5_0:1'\nunset NCCL_IB_HCAA"


def test_the_roce_tree_gets_one_answer_for_the_hca_and_the_gid(sysfs_tree: Tree) -> None:
    """Issue 25, on the recorded RoCE tree: hpnet env keeps mlx5_0:1 (the one port with a
    routable RoCE v2 GID) and GID 3; the doctor says the same, where it said PASS to a
    list with mlx4_0:1 and FAILed GID 4 with no fix."""
    roce = node(sysfs_tree, "cx-roce-mixed-gids")
    status, summary, _, fix = check("vars.hca", roce, {"NCCL_IB_HCA": "=mlx4_0:1,mlx5_0:1"})
    assert status is Status.WARN and "also selects mlx4_0:1" in summary
    assert fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    # GID 4 is wrong on mlx5_0:1 too: vars.gid's fix is the index for the port vars.hca
    # keeps; vars.hca's own fix (NCCL_IB_HCA is unset here) keeps that port
    status, _, evidence, fix = check("vars.gid", roce, {"NCCL_IB_GID_INDEX": "4"})
    assert status is Status.FAIL and "mlx5_0:1 GID 4 is empty" in evidence
    assert fix == "export NCCL_IB_GID_INDEX=3"
    status, _, _, fix = check("vars.hca", roce, {"NCCL_IB_GID_INDEX": "4"})
    assert status is Status.WARN and fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    both = {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3"}
    assert check("vars.hca", roce, both)[0] is Status.PASS
    assert check("vars.gid", roce, both)[0] is Status.PASS


def test_active_ports_whose_gids_a_listing_does_not_show_are_not_passed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`rdma link` shows two ACTIVE Ethernet ports and no GID table: whether they route
    RoCE v2 is not shown, so neither hpnet env nor the doctor passes them (issue 25)."""
    listing = str(DATA / "listings" / "rdma_link-cx6dx-two-ports-p1p1-p1p2-trailing-blank.txt")
    main(["doctor", "--from", listing, "--profile", "roce"])
    out = capsys.readouterr().out
    assert "WARN  ports.state           2 selected port(s) ACTIVE, but the listing does not" in out
    main(["env", "--from", listing, "--profile", "roce", "--set", "NCCL_IB_GID_INDEX=4", "--json"])
    codes = {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert {"listing-incomplete", "gid-unchecked"} <= codes


def test_the_socket_profile_does_not_judge_rdma_devices(
    capsys: pytest.CaptureFixture[str], sysfs_tree: Tree
) -> None:
    """`--profile socket` means sockets, as hpnet env reads it: a container whose RDMA
    devices cannot be opened is no failure then (issue 25: env ok, doctor FAIL)."""
    root = sysfs_tree("container-no-uverbs")
    main(["doctor", "--sysfs-root", str(root), "--profile", "socket", "--json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["devices.uverbs"]["status"] == "SKIP"
    assert checks["ports.state"]["status"] == "SKIP"
    main(["doctor", "--sysfs-root", str(root), "--json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["devices.uverbs"]["status"] == "FAIL"  # without it, the devices count


def test_a_port_the_listing_does_not_show_enough_of_is_never_passed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ibstat of an H20 node whose third CA is cut after its state: mlx5_0:1 and
    mlx5_1:1 are ACTIVE InfiniBand, mlx5_2:1's link layer is not shown. Left unset, NCCL
    opens mlx5_2:1 too if it can: env and the doctor name the two known ports (a WARN, and
    the fix), and a value that matches mlx5_2 is neither passed nor failed (issue 25)."""
    name = "ibstat-root-prompt-h20-cx7-ndr-third-ca-cut-after-state.txt"
    listing = str(DATA / "listings" / name)
    main(["doctor", "--from", listing, "--json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    hca = checks["vars.hca"]
    assert hca["status"] == "WARN" and "mlx5_2:1" in hca["summary"]
    assert hca["fix"] == "export NCCL_IB_HCA='=mlx5_0:1,mlx5_1:1'"
    main(["env", "--from", listing, "--format", "json"])
    env = json.loads(capsys.readouterr().out)
    assert env["variables"]["NCCL_IB_HCA"]["value"] == "=mlx5_0:1,mlx5_1:1"
    assert any(f["code"] == "hca-unset" and "mlx5_2:1" in f["message"] for f in env["findings"])
    monkeypatch.setenv("NCCL_IB_HCA", "mlx5")
    main(["doctor", "--from", listing, "--json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["vars.hca"]["status"] == "WARN" and checks["vars.hca"]["fix"] is None
    assert "does not show enough" in checks["vars.hca"]["summary"]


def test_a_port_that_is_down_says_what_its_physical_state_means() -> None:
    """A ConnectX-3 VPI card's ibstat (linux-rdma, 2020): port 1 InfiniBand Polling (no
    link partner), port 2 Ethernet Disabled (switched off: its netdev down)."""
    name = "ibstat-cx3-vpi-mlx4-ib-port-down-polling-eth-port-down-disabled.txt"
    cx3 = inventory_from_listings([("x", listing_text(name))])
    status, _, evidence, _ = check("ports.state", cx3)
    assert status is Status.FAIL
    assert evidence == (
        "mlx4_0:1: DOWN (Polling: no link partner answers: the cable, the switch port or the "
        "peer's port is down)",
        "mlx4_0:2: DOWN (Disabled: the port is switched off: its netdev is down (`ip link set "
        "<netdev> up`))",
    )
