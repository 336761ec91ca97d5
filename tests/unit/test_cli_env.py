"""`hpnet env` and `hpnet profiles` on the command line."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from tests.conftest import DATA

Tree = Callable[[str], Path]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


def test_profiles_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["profiles"], capsys)
    assert code == 0 and "pai-dlc-erdma" in out and "modelarts" in out
    code, out, _ = run(["profiles", "show", "modelarts"], capsys)
    assert code == 0
    assert re.search(r"NCCL_SOCKET_IFNAME +ib0,bond0,eth0 ", out)
    assert "forwarded from worker-0: MA_, SHARED_, S3_, PATH, VC_WORKER_, SCC, CRED" in out
    code, out, _ = run(["profiles", "show", "pai-dlc-erdma", "--json"], capsys)
    data = json.loads(out)
    assert data["name"] == "pai-dlc-erdma" and data["not_applicable"] == [
        "NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_TIMEOUT"
    ]  # fmt: skip


def test_misspelled_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["profiles", "show", "pai-lingun"], capsys)
    assert code == 2
    assert err.startswith("error[unknown-profile]: unknown profile 'pai-lingun'")
    assert "did you mean 'pai-lingjun'?" in err
    code, _, err = run(["env", "--profile", "scnett"], capsys)
    assert code == 2 and "did you mean 'scnet'?" in err


def test_env_shell_output_evaluates(sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    """ModelArts' "ib0,bond0,eth0" are prefixes; a node with predictable IPoIB names
    (ibp12s0) matches none of them, so the node's own interface is used, and said: a
    profile-ifname-mismatch whose title ends with the node's answer."""
    root = sysfs_tree("cx6-ib-dgx")
    code, out, err = run(["env", "--profile", "modelarts", "--sysfs-root", str(root)], capsys)
    assert code == 0
    script = out + 'printf "%s\\n" "$NCCL_SOCKET_IFNAME" "$NCCL_IB_HCA" "$NCCL_SOCKET_FAMILY"'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["=ibp12s0", "=mlx5_0:1,mlx5_1:1,mlx5_2:1", "AF_INET"]
    assert "hpnet env: warning: NCCL_SOCKET_IFNAME=ib0,bond0,eth0 matches no interface here" in err
    assert err.rstrip().endswith("; the node's answer: NCCL_SOCKET_IFNAME==ibp12s0")
    code, out, _ = run(
        ["env", "--profile", "modelarts", "--sysfs-root", str(root), "--json"], capsys
    )
    codes = [finding["code"] for finding in json.loads(out)["findings"]]
    assert code == 0 and codes == ["profile-ifname-mismatch"]


def test_env_mpirun_arguments(sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    root = sysfs_tree("erdma-alibaba")
    code, out, _ = run(["env", "--profile", "pai-dlc-erdma", "--sysfs-root", str(root),
                        "--format", "mpirun"], capsys)  # fmt: skip
    assert code == 0
    args = shlex.split(out)
    assert args[:2] == ["-x", "NCCL_DEBUG=INFO"] and "NCCL_IB_GID_INDEX=1" in args
    assert len(args) == 16


def test_env_set_and_config(
    sysfs_tree: Tree, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = sysfs_tree("erdma-alibaba")
    config = tmp_path / "hpnet.toml"
    config.write_text('profile = "pai-dlc-erdma"\n[env]\nNCCL_IB_QPS_PER_CONNECTION = 4\n')
    code, out, _ = run(["env", "--sysfs-root", str(root), "--config", str(config),
                        "--set", "NCCL_MIN_NCHANNELS=32", "--json"], capsys)  # fmt: skip
    assert code == 0
    variables = json.loads(out)["variables"]
    assert variables["NCCL_IB_QPS_PER_CONNECTION"]["value"] == "4"
    assert variables["NCCL_IB_QPS_PER_CONNECTION"]["origin"] == "user"
    assert variables["NCCL_MIN_NCHANNELS"]["value"] == "32"
    assert variables["NCCL_IB_HCA"]["origin"] == "profile"


@pytest.mark.parametrize(
    ("args", "code_name", "text"),
    [
        (["--set", "NCCL_IB_TIMEOUTS=22"], "unknown-variable", "did you mean NCCL_IB_TIMEOUT?"),
        (["--set", "NCCL_IB_TIMEOUT"], "usage", "has no '='"),
        (["--set", "nccl_ib_hca=mlx5"], "bad-variable-name", "not an environment variable name"),
    ],
)
def test_env_bad_overrides(
    capsys: pytest.CaptureFixture[str], args: list[str], code_name: str, text: str
) -> None:
    code, _, err = run(["env", "--profile", "socket", *args], capsys)
    assert code == 2 and err.startswith(f"error[{code_name}]: ") and text in err


@pytest.mark.parametrize(
    ("content", "code_name"),
    [
        ("profile = 3\n", "config-bad-value"),
        ("[env]\nNCCL_IB_HCA = [1, 2]\n", "config-bad-value"),
        ("profle = 'ib'\n", "config-unknown-key"),
        ("[env\n", "config-syntax"),
        ("[env]\nNCCL_SOCKET_IFNAMES = 'eth0'\n", "unknown-variable"),
    ],
)
def test_env_bad_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, code_name: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content)
    code, _, err = run(["env", "--config", str(path)], capsys)
    assert code == 2 and err.startswith(f"error[{code_name}]: ") and str(path) in err


def test_env_explain(sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    listing = str(DATA / "listings" / "ibv_devinfo-v-roce-cx5-mixed-gids.txt")
    code, out, _ = run(["env", "--profile", "pai-lingjun", "--from", listing, "--explain",
                        "--nccl-version", "2.21.5"], capsys)  # fmt: skip
    assert code == 0
    assert "NCCL_IB_GID_INDEX=5    [detected]" in out
    assert "under it: profile 3" in out
    assert "warning: NCCL_IB_GID_INDEX=3 does not work on this node" in out


def test_env_findings_go_to_stderr(sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    root = sysfs_tree("container-no-uverbs")
    code, out, err = run(["env", "--profile", "ib", "--sysfs-root", str(root)], capsys)
    assert code == 0
    assert "hpnet env: warning: ib needs InfiniBand, but no InfiniBand port is usable here" in err
    assert "mlx5_0:1: no /dev/infiniband/uverbs0 in this container" in err
    assert "warn" not in out


def test_resolve_env_is_the_library_call(sysfs_tree: Tree) -> None:
    import hpnet

    resolution = hpnet.resolve_env("auto", sysfs_root=str(sysfs_tree("no-rdma-vm")), environment={})
    assert dict(resolution.exported)["NCCL_SOCKET_IFNAME"] == "=eth0"


def test_import_hpnet_does_not_import_resolution() -> None:
    code = "import sys, hpnet; print(sorted(m for m in sys.modules if m.startswith('hpnet')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['hpnet']"
