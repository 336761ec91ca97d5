"""`hpnet doctor`: the defects a review found, each pinned by the behaviour NCCL's
source shows (cited per test)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.detect import NodeInventory
from hpnet.doctor.gather import parse_env_file
from hpnet.doctor.model import CheckResult, Facts
from hpnet.doctor.packages import distro_from_os_release, install_fix
from hpnet.doctor.registry import CHECKS
from hpnet.errors import ParseError
from hpnet.node.context import Context
from hpnet.node.limits import Limits
from hpnet.node.versions import LibraryInfo
from hpnet.profiles import get_profile
from hpnet.rdma.model import UverbsNode
from hpnet.result import Status
from tests.unit.test_doctor import assert_pasteable, check, limits, node, versions

Tree = Callable[[str], Path]


def full(
    check_id: str, inventory: NodeInventory, variables: dict[str, str], **extra: object
) -> CheckResult:
    facts = Facts(
        inventory=inventory,
        variables=variables,
        variables_source="test",
        profile=extra.pop("profile", None),  # type: ignore[arg-type]
        nccl_version=extra.pop("nccl", None),  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )
    found = CHECKS[check_id](facts)
    assert_pasteable(found.fix)
    return found


@pytest.fixture(autouse=True)
def no_nccl_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


# ------------------------------------------------------------------ 1: unknown names


def test_real_variables_are_not_unknown(sysfs_tree: Tree) -> None:
    """NCCL 2.30.7 reads these (init_nvtx.cc, init.cc, p2p_resiliency.cc): no WARN, and
    above all no rename into another variable."""
    inv = node(sysfs_tree, "no-rdma-vm")
    for name in ("NCCL_NVTX_DISABLE", "NCCL_P2P_MAX_PEERS", "NCCL_IB_RESILIENCY_PORT_FAILOVER",
                 "NCCL_GIN_ENABLE", "NCCL_IB_QUERY_PORT_SPEED"):  # fmt: skip
        status, summary, _, fix = check("vars.unknown", inv, {name: "1"})
        assert status is Status.PASS and fix is None, (name, summary)


def test_names_images_and_frameworks_set_are_noted_not_unknown(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "no-rdma-vm")
    variables = {"NCCL_VERSION": "2.17.1-1", "NCCL_ASYNC_ERROR_HANDLING": "1", "NCCL_HOME": "/x"}
    status, summary, evidence, fix = check("vars.unknown", inv, variables)
    assert status is Status.PASS and fix is None and "3 set by other tools" in summary
    assert any(line.startswith("NCCL_VERSION: not an NCCL setting") for line in evidence)
    assert any("TORCH_NCCL_ASYNC_ERROR_HANDLING" in line for line in evidence)


def test_did_you_mean_only_for_close_unknown_names(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "no-rdma-vm")
    status, _, evidence, fix = check("vars.unknown", inv, {"NCCL_FOO_BAR": "1"})
    assert status is Status.WARN and "did you mean" not in evidence[0]
    assert fix == "unset NCCL_FOO_BAR"
    # the name it resembles is set as well: renaming would overwrite it
    _, _, evidence, fix = check(
        "vars.unknown", inv, {"NCCL_IB_TIMEOUTS": "22", "NCCL_IB_TIMEOUT": "20"}
    )
    assert fix == "unset NCCL_IB_TIMEOUTS" and "NCCL reads only that one" in evidence[0]


# ------------------------------------------------------------------ 2: injection


@pytest.mark.parametrize(
    "line",
    ["'NCCL_IB_TIMEOUTS;touch /tmp/pwned;x'=22", "'NCCL_X$(id)'=1", "1NCCL=2", "=3",
     "'NCCL X'=1"],
)  # fmt: skip
def test_env_file_names_must_be_variable_names(line: str) -> None:
    with pytest.raises(ParseError, match="is not a variable name") as info:
        parse_env_file(f"NCCL_DEBUG=WARN\n{line}\n", source="job.env")
    assert info.value.where == "job.env:2"


def test_env_file_with_a_hostile_name_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = tmp_path / "job.env"
    env_file.write_text("'NCCL_IB_TIMEOUTS;touch /tmp/pwned;x'=22\n")
    assert main(["doctor", "--env-file", str(env_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error[parse]: ") and f"{env_file}:1" in err


def test_hostile_names_and_values_from_the_environment_stay_out_of_fixes(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "no-rdma-vm")
    variables = {"NCCL_X$(id)": "1", "NCCL_IB_TIMEOUTS": "22'; touch /tmp/pwned; '"}
    status, _, evidence, fix = check("vars.unknown", inv, variables)
    assert status is Status.WARN and any("'NCCL_X$(id)'" in line for line in evidence)
    assert fix is not None and "$(id)" not in fix
    assert "export NCCL_IB_TIMEOUT='22'\"'\"'; touch /tmp/pwned; '\"'\"''" in fix.splitlines()
    # every value in a fix is quoted: a value with shell syntax stays one word
    status, _, _, fix = check("vars.syntax", inv, {"NCCL_IB_TIMEOUT": "$(touch /tmp/x)"})
    assert status is Status.FAIL and fix == "unset NCCL_IB_TIMEOUT"


def test_env_file_fixes_use_the_literal_value(
    sysfs_tree: Tree, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = tmp_path / "job.env"
    env_file.write_text("NCCL_IB_TIMEOUTS='2 2'\n")
    root = str(sysfs_tree("no-rdma-vm"))
    main(["doctor", "--sysfs-root", root, "--env-file", str(env_file), "--json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    unknown = checks["vars.unknown"]
    assert unknown["fix"] == "export NCCL_IB_TIMEOUT='2 2'\nunset NCCL_IB_TIMEOUTS"
    assert "$" not in unknown["fix"] and str(env_file) in unknown["fix_note"]


# ------------------------------------------------------------------ 3, 9: NCCL_NET, NCCL_IB_DISABLE


def test_nccl_net_is_matched_case_insensitively(sysfs_tree: Tree) -> None:
    """ncclNetInit: strcasecmp(comm->config.netName, ncclNet->name) (src/plugin/net.cc)."""
    erdma = node(sysfs_tree, "erdma-alibaba")
    for net in ("ib", "Ib", "socket", "SOCKET"):
        found = full(
            "vars.net", erdma, {"NCCL_NET": net, "NCCL_NET_PLUGIN": "none"}, net_plugins=()
        )
        assert found.status is Status.PASS, (net, found)
    assert check("vars.ib_disabled", erdma, {"NCCL_NET": "socket"})[0] is Status.WARN
    assert check("vars.net", erdma, {"NCCL_NET": ""})[0] is Status.FAIL
    assert check("vars.net", node(sysfs_tree, "no-rdma-vm"), {"NCCL_NET": "ib"})[0] is Status.FAIL
    status, summary, _, fix = check("vars.net", erdma, {"NCCL_NET": "IB", "NCCL_IB_DISABLE": "1"})
    assert status is Status.FAIL and "turns off" in summary and fix == "unset NCCL_IB_DISABLE"


@pytest.mark.parametrize("value", ["1", "2", "-1", "0x1", "7"])
def test_any_non_zero_ib_disable_disables_ib(sysfs_tree: Tree, value: str) -> None:
    """ncclIbInitDevices: 'if (ncclParamIbDisable()) return ncclInternalError' (init.cc)."""
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    status, _, _, fix = check("vars.ib_disabled", dgx, {"NCCL_IB_DISABLE": value})
    assert status is Status.WARN and fix == "unset NCCL_IB_DISABLE"
    assert check("vars.ib_disabled", dgx, {"NCCL_IB_DISABLE": "0"})[0] is Status.PASS


# ------------------------------------------------------------------ 4, 14: empty lists


@pytest.mark.parametrize("value", ["^", "^=", "^,", "^=,,"])
def test_hca_that_excludes_everything_fails(sysfs_tree: Tree, value: str) -> None:
    """matchIfList is true for an empty list; XORed with '^' it is false for every
    device (net_ib/init.cc): no IB device, silent Socket fallback."""
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    status, summary, _, fix = check("vars.hca", dgx, {"NCCL_IB_HCA": value})
    assert status is Status.FAIL and "excludes everything" in summary
    assert fix == "export NCCL_IB_HCA='=mlx5_0:1,mlx5_1:1,mlx5_2:1'"


@pytest.mark.parametrize("value", ["=", ":1", ",", ""])
def test_hca_that_names_nothing_warns_as_if_unset(sysfs_tree: Tree, value: str) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    status, summary, _, _ = check("vars.hca", dgx, {"NCCL_IB_HCA": value})
    assert status is Status.WARN and "as if it were unset" in summary


@pytest.mark.parametrize(
    ("value", "status", "words"),
    [("^=", Status.FAIL, "excludes everything"), ("^,", Status.FAIL, "excludes everything"),
     (":1", Status.FAIL, "loopback and docker included"), ("=", Status.WARN, "one character"),
     ("", Status.WARN, "one character or less"), ("^", Status.WARN, "one character")],
)  # fmt: skip
def test_ifname_lists_as_nccl_reads_them(
    sysfs_tree: Tree, value: str, status: Status, words: str
) -> None:
    """ncclFindInterfaces ignores a value of one character or less; ncclOsFindInterfaces
    XORs matchIfList with '^' (socket.cc, os/linux.cc)."""
    inv = node(sysfs_tree, "erdma-alibaba")
    found, summary, _, fix = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": value})
    assert found is status and words in summary and fix == "export NCCL_SOCKET_IFNAME='=eth0'"


@pytest.mark.parametrize("value", ["^=", "=", ":1", "", "^", "e"])
def test_syntax_leaves_lists_to_their_own_checks(sysfs_tree: Tree, value: str) -> None:
    """One value, one verdict: vars.syntax no longer FAILs what vars.hca / vars.ifname
    judge otherwise."""
    inv = node(sysfs_tree, "erdma-alibaba")
    variables = {"NCCL_IB_HCA": value, "NCCL_SOCKET_IFNAME": value}
    status, _, evidence, _ = check("vars.syntax", inv, variables)
    assert status is Status.SKIP
    assert "NCCL_IB_HCA: judged by vars.hca" in evidence


def test_empty_ifname_is_reported_once(sysfs_tree: Tree) -> None:
    """An empty NCCL_SOCKET_IFNAME is what NCCL ignores (one character or less): one
    WARN, by vars.ifname alone, with the interface NCCL should use as the fix."""
    inv = node(sysfs_tree, "erdma-alibaba")
    results = [CHECKS[c](Facts(inventory=inv, variables={"NCCL_SOCKET_IFNAME": ""},
               variables_source="t", profile=None, nccl_version=None)) for c in CHECKS]  # fmt: skip
    flagged = [
        r for r in results if r.status in (Status.WARN, Status.FAIL) and "IFNAME" in r.summary
    ]
    assert [r.id for r in flagged] == ["vars.ifname"]
    assert flagged[0].summary == (
        "NCCL_SOCKET_IFNAME='' is one character or less: NCCL ignores it and picks the"
        " interface itself"
    )
    assert flagged[0].fix == "export NCCL_SOCKET_IFNAME='=eth0'"


def test_recorded_tree_does_not_claim_missing_addresses(sysfs_tree: Tree) -> None:
    inv = node(sysfs_tree, "erdma-alibaba")  # a tree: no addresses recorded
    status, summary, evidence, _ = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "=ib0"})
    assert status is Status.FAIL and summary == "NCCL_SOCKET_IFNAME==ib0 matches no interface here"
    assert "with an address" not in summary
    assert "(up; addresses are not recorded in this source)" in evidence[0]


# ------------------------------------------------------------------ 8: loopback


def test_loopback_is_a_warning_not_a_failure(sysfs_tree: Tree) -> None:
    """NCCL uses lo when the list names it (ncclOsFindInterfaces skips only IPv6
    loopback addresses); other nodes cannot reach it."""
    inv = node(sysfs_tree, "erdma-alibaba")
    status, summary, _, fix = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "lo"})
    assert status is Status.WARN and "selects lo only" in summary
    assert fix == "export NCCL_SOCKET_IFNAME='=eth0'"
    status, summary, _, _ = check("vars.ifname", inv, {"NCCL_SOCKET_IFNAME": "^docker"})
    assert status is Status.WARN and "lo as well as eth0" in summary  # bootstrap takes lo


# ------------------------------------------------------------------ 6, 12: GID index


def test_gid_index_is_read_with_strtoll(sysfs_tree: Tree) -> None:
    roce = node(sysfs_tree, "cx-roce-mixed-gids")
    for value in ("3", "0x3", "03", " 3"):
        status, summary, _, _ = check(
            "vars.gid", roce, {"NCCL_IB_HCA": "mlx5", "NCCL_IB_GID_INDEX": value}
        )
        assert status is Status.PASS and summary.startswith("GID 3 is RoCE v2"), value


@pytest.mark.parametrize("value", ["abc", "²", "--5", "3x"])
def test_gid_that_is_not_an_index_fails(sysfs_tree: Tree, value: str) -> None:
    """The fix is the index that works on the node (GID 3, RoCE v2 on mlx5_0:1)."""
    roce = node(sysfs_tree, "cx-roce-mixed-gids")
    status, summary, _, fix = check("vars.gid", roce, {"NCCL_IB_GID_INDEX": value})
    assert status is Status.FAIL and "is not an index" in summary
    assert f"NCCL reads {value!r} as" in summary and fix == "export NCCL_IB_GID_INDEX=3"
    # on an InfiniBand node too: the syntax is judged before the ports
    assert (
        check("vars.gid", node(sysfs_tree, "cx6-ib-dgx"), {"NCCL_IB_GID_INDEX": value})[0]
        is Status.FAIL
    )


@pytest.mark.parametrize("value", [None, "-1", "-5"])
def test_automatic_gid_choice_is_replayed(sysfs_tree: Tree, value: str | None) -> None:
    """Unset or negative (connect.cc: 'if (*gidIndex >= 0) return'), NCCL >= 2.21.5
    walks the table itself: on mlx5_0 it finds GID 3; mlx4_0 has only RoCE v1 entries,
    so it takes GID 1, an IPv4-mapped RoCE v1 GID, which does not route. vars.gid's fix
    is the working index, vars.hca's the port it works on."""
    roce = node(sysfs_tree, "cx-roce-mixed-gids")
    variables = {} if value is None else {"NCCL_IB_GID_INDEX": value}
    status, summary, evidence, fix = check("vars.gid", roce, variables)
    assert status is Status.FAIL and "NCCL's own choice picks a GID that does not route" in summary
    assert "on 2 of 3 port(s)" in summary
    assert evidence[:2] == (
        "mlx4_0:1: GID 1 is IB/RoCE v1, not RoCE v2",
        "mlx4_0:2: GID 1 is IB/RoCE v1, not RoCE v2",
    )
    assert "NCCL's picks: mlx4_0:1->1, mlx4_0:2->1, mlx5_0:1->3" in evidence
    assert fix == "export NCCL_IB_GID_INDEX=3"
    status, _, _, fix = check("vars.hca", roce, variables)
    assert status is Status.WARN and fix == "export NCCL_IB_HCA='=mlx5_0:1'"
    good = {**variables, "NCCL_IB_HCA": "mlx5"}
    status, summary, _, _ = check("vars.gid", roce, good)
    assert status is Status.PASS and "NCCL picks mlx5_0:1->3" in summary


def test_negative_gid_before_2_21_5_is_an_index(sysfs_tree: Tree) -> None:
    roce = node(sysfs_tree, "cx-roce-mixed-gids")
    variables = {"NCCL_IB_HCA": "mlx5", "NCCL_IB_GID_INDEX": "-1"}
    status, _, evidence, fix = check("vars.gid", roce, variables, nccl="2.18.3")
    assert status is Status.FAIL and "predates the automatic choice" in evidence[0]
    assert fix == "export NCCL_IB_GID_INDEX=3"
    # unset before 2.21.5 means index 0, which is RoCE v1 on mlx5_0
    status, _, _, _ = check("vars.gid", roce, {"NCCL_IB_HCA": "mlx5"}, nccl="2.18.3")
    assert status is Status.FAIL


@pytest.mark.parametrize("profile", ["roce", "ib", "erdma", "scnet"])
def test_rdma_profile_on_a_node_without_rdma_warns(sysfs_tree: Tree, profile: str) -> None:
    """vars.transport WARNs (no variable fixes the node: a note says what would);
    vars.hca and vars.gid have nothing to judge and SKIP."""
    inv = node(sysfs_tree, "no-rdma-vm")
    found = full("vars.transport", inv, {}, profile=get_profile(profile))
    assert found.status is Status.WARN and "there is no RDMA device" in found.summary
    assert found.fix is None and "--profile socket" in (found.fix_note or "")
    for check_id in ("vars.hca", "vars.gid"):
        assert check(check_id, inv, profile=get_profile(profile))[0] is Status.SKIP, check_id
    assert (
        check("vars.transport", node(sysfs_tree, "cx6-ib-dgx"), profile=get_profile("ib"))[0]
        is Status.PASS
    )
    assert check("vars.transport", inv, profile=get_profile("socket"))[0] is Status.SKIP


# ------------------------------------------------------------------ 10: pasteable fixes


def test_fixes_are_commands_and_notes_are_apart(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    debug = full("vars.debug", dgx, {"NCCL_DEBUG": "INFO"})
    assert debug.fix == "export NCCL_DEBUG=WARN" and "INFO only" in (debug.fix_note or "")
    # no variable fixes a node whose RDMA devices are unusable: a note, no command
    none = full("vars.transport", node(sysfs_tree, "container-no-uverbs"), {})
    assert none.status is Status.WARN and none.fix is None
    assert "run on a node with usable RDMA" in (none.fix_note or "")
    # an NCCL_IB_HCA with no usable RDMA port does not matter: nothing to fix
    hca = full("vars.hca", node(sysfs_tree, "no-rdma-vm"), {"NCCL_IB_HCA": "mlx5"})
    assert hca.status is Status.SKIP and hca.fix is None and hca.fix_note is None


def test_every_fix_on_every_tree_is_pasteable(sysfs_tree: Tree) -> None:
    """Run every check with values that make most of them WARN or FAIL."""
    variables = {"NCCL_IB_HCA": "mlx5_9", "NCCL_IB_GID_INDEX": "7", "NCCL_SOCKET_IFNAME": "nope0",
                 "NCCL_DEBUG": "TRACE", "NCCL_IB_TIMEOUT": "0136", "NCCL_IB_TIMEOUTS": "22",
                 "NCCL_IB_DISABLE": "1", "NCCL_NET": "Foo", "NCCL_NET_PLUGIN": "none"}  # fmt: skip
    bad_limits = limits(memlock_soft_bytes=65536, memlock_hard_bytes=65536, nofile_soft=1024,
                        nofile_hard=4096, shm_bytes=64 << 20)  # fmt: skip
    for tree in ("cx-roce-mixed-gids", "cx6-ib-dgx", "erdma-alibaba", "no-rdma-vm"):
        inv = dataclasses.replace(node(sysfs_tree, tree), limits=bad_limits)
        for check_id in CHECKS:
            found = full(check_id, inv, variables, acs={"0000:0b:00.0": True})
            if found.status in (Status.WARN, Status.FAIL):
                assert found.fix or found.fix_note, check_id


# ------------------------------------------------------------------ 7: packages


def test_lingjun_installs_rdma_core_from_the_vendor_installer() -> None:
    fix = install_fix(get_profile("pai-lingjun"), "ubuntu22.04")
    assert fix.commands is not None
    lines = fix.commands.splitlines()
    assert lines[:2] == [
        "apt-get update",
        "apt-get install -y --allow-downgrades --allow-change-held-packages "
        "--no-install-recommends libnl-3-dev libnl-route-3-dev libnl-3-200 libnl-route-3-200 "
        "iproute2 udev dmidecode ethtool",
    ]
    assert "nic-lib-rdma-core-installer-ubuntu.tar.gz" in lines[2]
    assert lines[3] == "cd nic-lib-rdma-core-installer-ubuntu && echo Y | /bin/bash install.sh"
    assert_pasteable(fix.commands)


def test_pai_dlc_erdma_removes_mofed_then_adds_the_erdma_repository() -> None:
    fix = install_fix(get_profile("pai-dlc-erdma"), "ubuntu22.04")
    assert fix.commands is not None
    assert fix.commands.splitlines() == [
        "rm -f /etc/apt/sources.list.d/mellanox_mlnx_ofed.list",
        "apt-get remove -y libibverbs1 ibverbs-providers ibverbs-utils librdmacm1",
        "wget -qO - http://mirrors.aliyun.com/erdma/GPGKEY | gpg --dearmour -o "
        "/etc/apt/trusted.gpg.d/erdma.gpg",
        "echo 'deb [ ] http://mirrors.aliyun.com/erdma/apt/ubuntu jammy/erdma main' | "
        "tee /etc/apt/sources.list.d/erdma.list",
        "apt-get update",
        "apt-get install -y libibverbs1 ibverbs-providers ibverbs-utils librdmacm1",
    ]
    assert_pasteable(fix.commands)


def test_ecs_erdma_picks_the_set_for_the_distribution() -> None:
    ecs = get_profile("ecs-erdma")
    centos = install_fix(ecs, "centos7")
    assert centos.commands is not None and "tee /etc/yum.repos.d/erdma.repo" in centos.commands
    assert centos.commands.endswith(
        "yum install -y libibverbs rdma-core librdmacm libibverbs-utils"
    )
    focal = install_fix(ecs, "ubuntu20.04")
    assert focal.commands is not None and "focal/erdma main" in focal.commands
    unknown = install_fix(ecs, None)  # the options, not a guess
    assert unknown.commands is None and unknown.note is not None
    assert "centos7" in unknown.note and "bionic/erdma" in unknown.note
    other = install_fix(ecs, "debian12")
    assert other.commands is None and "debian12" in (other.note or "")
    for fix in (centos, focal):
        assert_pasteable(fix.commands)


def test_without_a_profile_the_distribution_decides() -> None:
    # rdma-core's own packages, with the utilities (ibv_devinfo) the guides check with
    assert install_fix(None, "ubuntu22.04").commands == (
        "apt-get install -y libibverbs1 ibverbs-providers librdmacm1 ibverbs-utils"
    )
    assert install_fix(None, "rocky9.3").commands == (
        "yum install -y rdma-core libibverbs librdmacm libibverbs-utils"
    )
    unknown = install_fix(None, None)
    assert unknown.commands is None and "apt-get" in (unknown.note or "")


def test_os_release() -> None:
    assert distro_from_os_release('ID="centos"\nVERSION_ID="7"\n') == "centos7"
    assert distro_from_os_release("ID=alinux\nVERSION_ID=3\n") == "alinux3"
    assert distro_from_os_release("ID=$(id)\n") is None
    assert distro_from_os_release(None) is None


def test_userspace_check_uses_the_profile_and_distribution(sysfs_tree: Tree) -> None:
    base = node(sysfs_tree, "erdma-alibaba")
    bare = dataclasses.replace(base, versions=versions(libibverbs=LibraryInfo(name="x", path=None)))
    found = full(
        "userspace.libibverbs", bare, {}, profile=get_profile("pai-lingjun"), distro="ubuntu20.04"
    )
    assert found.status is Status.FAIL and found.fix is not None and "install.sh" in found.fix
    found = full("userspace.libibverbs", bare, {}, profile=get_profile("pai-dlc-erdma"))
    assert found.fix is None and "ubuntu22.04" in (found.fix_note or "")


# ------------------------------------------------------------------ 13, 15: limits, devices


def test_memlock_matters_only_with_rdma(sysfs_tree: Tree) -> None:
    vm = dataclasses.replace(
        node(sysfs_tree, "no-rdma-vm"), limits=limits(memlock_soft_bytes=65536)
    )
    status, summary, _, _ = check("limits.memlock", vm)
    assert status is Status.SKIP and "matters only for RDMA" in summary


def _memlock(sysfs_tree: Tree, context: Context | None, hard: int | str) -> CheckResult:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    small: Limits = limits(memlock_soft_bytes=65536, memlock_hard_bytes=hard)
    return full("limits.memlock", dataclasses.replace(dgx, limits=small, context=context), {})


def test_memlock_fix_depends_on_where_the_job_runs(sysfs_tree: Tree) -> None:
    host = _memlock(sysfs_tree, None, 65536)
    assert host.status is Status.FAIL and host.fix is not None
    assert "/etc/security/limits.d/" in host.fix and "memlock unlimited" in host.fix
    docker = _memlock(
        sysfs_tree, Context(in_container=True, runtime="docker", kubernetes=False), 65536
    )
    assert docker.fix is None and "--ulimit memlock=-1" in (docker.fix_note or "")
    pod = _memlock(
        sysfs_tree, Context(in_container=True, runtime="containerd", kubernetes=True), 65536
    )
    assert pod.fix is None and "IPC_LOCK" in (pod.fix_note or "")
    soft_only = _memlock(sysfs_tree, None, "unlimited")
    assert soft_only.fix == "ulimit -l unlimited"


def test_nofile_threshold_comes_from_nccl_docs(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    ok = dataclasses.replace(dgx, limits=limits(nofile_soft=65536))
    assert check("limits.nofile", ok)[0] is Status.PASS  # above the 32K the guide names
    low = dataclasses.replace(dgx, limits=limits(nofile_soft=1024, nofile_hard=1048576))
    status, summary, _, fix = check("limits.nofile", low)
    assert status is Status.WARN and "32K" in summary and fix == "ulimit -n 131072"
    capped = dataclasses.replace(dgx, limits=limits(nofile_soft=1024, nofile_hard=4096))
    found = full("limits.nofile", capped, {})
    assert found.fix is None and "nofile 131072" in (found.fix_note or "")


def _with_uverbs(inv: NodeInventory, uverbs: UverbsNode | None) -> NodeInventory:
    devices = tuple(dataclasses.replace(d, uverbs=uverbs) for d in inv.rdma_devices)
    return dataclasses.replace(inv, rdma_devices=devices)


def test_uverbs_that_cannot_be_opened(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    denied = UverbsNode(
        name="uverbs0", path="/dev/infiniband/uverbs0", present=True, accessible=False
    )
    found = full("devices.uverbs", _with_uverbs(dgx, denied), {})
    assert found.status is Status.FAIL
    assert "mlx5_0: /dev/infiniband/uverbs0 cannot be opened by this user" in found.evidence
    assert found.fix is None and "read and write access" in (found.fix_note or "")


def test_no_uverbs_at_all(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    found = full("devices.uverbs", _with_uverbs(dgx, None), {})
    assert found.status is Status.FAIL and found.fix == "modprobe ib_uverbs"
    assert "mlx5_0: no uverbs device at all (is ib_uverbs loaded?)" in found.evidence


def test_hca_parse_error_fails(sysfs_tree: Tree) -> None:
    dgx = node(sysfs_tree, "cx6-ib-dgx")
    for value in ("mlx5_0:x", "mlx5_0:1:2:3:4", " mlx5_0"):
        status, summary, _, fix = check("vars.hca", dgx, {"NCCL_IB_HCA": value})
        assert (
            status is Status.FAIL and fix == "export NCCL_IB_HCA='=mlx5_0:1,mlx5_1:1,mlx5_2:1'"
        ), (value, summary)


def test_nccl_version_must_be_a_version(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("doctor", "env"):
        assert main([command, "--nccl-version", "garbage"]) == 2
        assert "error[usage]: 'garbage' is not an NCCL version" in capsys.readouterr().err
