"""`hpnet env` and `hpnet profiles`: the defects a review found, each pinned by what
NCCL's source (or the vendor guide) shows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.errors import InputError
from hpnet.nccl.config import parse_sets
from hpnet.profiles import get_profile
from tests.unit.test_env_resolution import codes, node, resolve, values

Tree = Callable[[str], Path]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


def messages(resolution: object) -> dict[str, str]:
    return {f.id: f.title for f in resolution.findings}  # type: ignore[attr-defined]


# ------------------------------------------------------------------ 1: names that are not NCCL's


def test_nccl_version_from_an_nvidia_image_is_not_copied(sysfs_tree: Tree) -> None:
    """NVIDIA's CUDA images set NCCL_VERSION=2.17.1-1; NCCL never reads it. It stays in
    the job's environment as it is: re-exporting it as an NCCL setting, or calling it an
    unknown variable, would both be wrong."""
    environment = {"NCCL_VERSION": "2.17.1-1", "NCCL_ASYNC_ERROR_HANDLING": "1"}
    resolution = resolve("roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment=environment)
    assert "NCCL_VERSION" not in values(resolution)
    assert "NCCL_ASYNC_ERROR_HANDLING" not in values(resolution)
    assert resolution.get("NCCL_VERSION") is None
    assert "unknown-variable" not in codes(resolution)
    notes = [f for f in resolution.findings if f.id == "not-an-nccl-variable"]
    assert {f.severity for f in notes} == {"info"} and len(notes) == 2
    assert any("NVIDIA's CUDA container images" in f.title for f in notes)


def test_real_variables_from_the_environment_are_not_unknown(sysfs_tree: Tree) -> None:
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_NVTX_DISABLE": "1"}
    )
    assert values(resolution)["NCCL_NVTX_DISABLE"] == "1"
    assert "unknown-variable" not in codes(resolution)


def test_unknown_names_are_phrased_as_a_rename(sysfs_tree: Tree) -> None:
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_IB_TIMEOUTS": "22"}
    )
    assert "rename NCCL_IB_TIMEOUTS to NCCL_IB_TIMEOUT" in messages(resolution)["unknown-variable"]


def test_set_refuses_names_that_are_not_ncclS() -> None:
    with pytest.raises(InputError, match="not an NCCL setting") as info:
        parse_sets(["NCCL_VERSION=2.21.5"])
    assert info.value.code == "not-an-nccl-variable"


def test_badly_named_environment_variables_are_dropped_with_a_word(sysfs_tree: Tree) -> None:
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_X$(id)": "1"}
    )
    assert not any("$(" in name for name, _ in resolution.exported)
    assert "bad-variable-name" in codes(resolution)


# ------------------------------------------------------------------ 4, 8, 14: interface lists


@pytest.mark.parametrize("value", ["", "e", "="])
def test_ifname_of_one_character_is_ignored_by_nccl(sysfs_tree: Tree, value: str) -> None:
    """ncclFindInterfaces: 'if (env && strlen(env) > 1)' (src/misc/socket.cc)."""
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_SOCKET_IFNAME": value}
    )
    assert "ignores it and picks the interface itself" in messages(resolution)["ifname-ignored"]


def test_ifname_loopback_is_reported_as_loopback(sysfs_tree: Tree) -> None:
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_SOCKET_IFNAME": "lo"}
    )
    assert "other nodes cannot reach" in messages(resolution)["ifname-loopback"]
    resolution = resolve(
        "roce",
        node(sysfs_tree, "cx-roce-mixed-gids"),
        environment={"NCCL_SOCKET_IFNAME": "^docker"},
    )
    assert "selects lo as well as eth2" in messages(resolution)["ifname-loopback"]


def test_hca_that_excludes_everything(sysfs_tree: Tree) -> None:
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_IB_HCA": "^="}
    )
    found = messages(resolution)
    assert "excludes everything" in found["hca-invalid"]
    assert "excludes everything" in found["invalid-value"]


def test_recorded_tree_says_addresses_are_not_recorded(sysfs_tree: Tree) -> None:
    resolution = resolve(
        "roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment={"NCCL_SOCKET_IFNAME": "=xx"}
    )
    assert (
        "(up; addresses are not recorded in this source)" in messages(resolution)["ifname-mismatch"]
    )


# ------------------------------------------------------------------ 5, 6: GID settings


@pytest.mark.parametrize(
    "environment",
    [{"NCCL_IB_GID_INDEX": "²"}, {"NCCL_IB_GID_INDEX": "--5"},
     {"NCCL_IB_ROCE_VERSION_NUM": "²"}, {"NCCL_IB_ADDR_RANGE": "garbage"},
     {"NCCL_IB_ADDR_RANGE": "10.0.0.0/33"}, {"NCCL_IB_ADDR_FAMILY": " AF_INET6"}],
)  # fmt: skip
def test_gid_settings_never_crash(sysfs_tree: Tree, environment: dict[str, str]) -> None:
    resolution = resolve("roce", node(sysfs_tree, "cx-roce-mixed-gids"), environment=environment)
    assert "invalid-value" in codes(resolution)


def test_hex_gid_index_is_index_3(sysfs_tree: Tree) -> None:
    """ncclParamIbGidIndex is strtoll(value, NULL, 0): 0x3 is 3."""
    resolution = resolve(
        "pai-lingjun",
        node(sysfs_tree, "cx-roce-mixed-gids"),
        environment={"NCCL_IB_GID_INDEX": "0x3"},
        nccl_version="2.21.5",
    )
    gid = resolution.get("NCCL_IB_GID_INDEX")
    assert gid is not None and gid.value == "0x3"
    assert "gid-mismatch" not in codes(resolution)
    assert any("GID 3 is RoCE v2" in note for note in gid.notes)


def test_explicit_minus_one_is_automatic_and_checked(sysfs_tree: Tree) -> None:
    """Any negative index is automatic since 2.21.5 (ncclIbGetGidIndex); on mlx4_0 the
    automatic walk lands on a RoCE v1 GID, which the resolution says."""
    inv = node(sysfs_tree, "cx-roce-mixed-gids")
    resolution = resolve(
        "roce",
        inv,
        environment={"NCCL_IB_GID_INDEX": "-1", "NCCL_IB_HCA": "mlx4"},
        nccl_version="2.21.5",
    )
    message = messages(resolution)["gid-auto-unroutable"]
    assert "NCCL's own choice picks a GID that does not route" in message
    assert "mlx4_0:1: GID 1 is IB/RoCE v1" in message
    fine = resolve(
        "roce",
        inv,
        environment={"NCCL_IB_GID_INDEX": "-7", "NCCL_IB_HCA": "mlx5"},
        nccl_version="2.21.5",
    )
    gid = fine.get("NCCL_IB_GID_INDEX")
    assert gid is not None and "is -7: NCCL picks mlx5_0:1->3, each RoCE v2" in gid.notes[0]


# ------------------------------------------------------------------ 15: --nccl-version


@pytest.mark.parametrize("version", ["garbage", "2", "2.x", "²", "2.21.5; id"])
def test_nccl_version_must_be_readable(capsys: pytest.CaptureFixture[str], version: str) -> None:
    assert main(["env", "--profile", "socket", "--nccl-version", version]) == 2
    assert "is not an NCCL version" in capsys.readouterr().err


@pytest.mark.parametrize("version", ["2.21", "2.21.5", "2.21.5-1", "2.21.5+cuda12.4"])
def test_nccl_versions_people_write(capsys: pytest.CaptureFixture[str], version: str) -> None:
    assert main(["env", "--profile", "socket", "--nccl-version", version, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nccl_version"] == version


# ------------------------------------------------------------------ 11, 16: profiles


def test_profiles_json_has_a_schema_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schema_version"] == 1
    assert main(["profiles", "show", "roce", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["schema_version"] == 1 and shown["name"] == "roce"


def test_modelarts_mpirun_line_quotes_as_the_guide(capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 003: `-mca plm_rsh_args "-p ${SSHD_PORT}"` (double quotes: the port expands)."""
    assert main(["profiles", "show", "modelarts"]) == 0
    out = capsys.readouterr().out
    assert '-mca plm_rsh_args "-p ${SSHD_PORT}" -tune ${TUNE_ENV_FILE}' in out


def test_lingjun_cites_the_english_page_for_its_values() -> None:
    """The seed's Japanese copy lost the table: its values are cited to the English
    page (which a user can open; PRODUCT.md records them), never to the seed."""
    from hpnet.profiles.model import SEED_URLS

    english = SEED_URLS["000_834719b22dbb6842.txt"]
    lingjun = get_profile("pai-lingjun")
    for name in ("NCCL_IB_SL", "NCCL_NET_PLUGIN"):
        setting = lingjun.setting(name)
        assert setting is not None and setting.source.seed is None
        assert "English Lingjun page" in setting.source.title
        assert setting.source.url == english and english in setting.source.cite()
    assert all(t.source is not None and t.source.url == english for t in lingjun.instance_types)


def test_lingjun_keeps_the_guides_apt_flags(capsys: pytest.CaptureFixture[str]) -> None:
    (package,) = get_profile("pai-lingjun").packages
    assert package.install_flags == (
        "--allow-downgrades",
        "--allow-change-held-packages",
        "--no-install-recommends",
    )
    assert main(["profiles", "show", "pai-lingjun"]) == 0
    assert "--allow-downgrades --allow-change-held-packages" in capsys.readouterr().out


def test_ecs_plugin_is_not_an_rdma_core_installer() -> None:
    for package in get_profile("ecs-erdma").packages:
        assert package.installer is None and package.plugin_package is not None
        assert "aiacc-nccl-plugin" in package.plugin_package and package.repo_name == "erdma"
