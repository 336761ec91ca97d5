"""Version and library detection (node/versions.py) on real package contents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpnet.node.sysfs import FsRoot
from hpnet.node.versions import (
    decode_nccl_version,
    find_library,
    find_provider,
    library_dirs,
    parse_torch_version_py,
    rdma_core_from_libibverbs,
)
from tests.conftest import DATA

DEBIAN_RDMA_CORE = ("libibverbs1", "ibverbs-providers", "librdmacm1")


def install_dpkg_listing(root: Path, listing: str) -> None:
    """Recreate the files and links a `dpkg-deb -c` listing names (empty files)."""
    for line in listing.splitlines():
        match = re.match(r"^([-dl])\S+\s+\S+\s+\d+\s+\S+\s+\S+\s+\./(\S*?)(?: -> (\S+))?$", line)
        if not match or not match.group(2):
            continue
        kind, rel, target = match.groups()
        path = root / rel
        if kind == "d":
            path.mkdir(parents=True, exist_ok=True)
        elif kind == "l":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(target)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()


@pytest.fixture
def debian_root(tmp_path: Path) -> FsRoot:
    for package in DEBIAN_RDMA_CORE:
        text = (DATA / "commands" / f"dpkg-deb-c-{package}_44.0-2_amd64.txt").read_text()
        install_dpkg_listing(tmp_path, text)
    (tmp_path / "sys").mkdir()
    return FsRoot(tmp_path)


@pytest.mark.parametrize(
    ("code", "version"),
    [(2804, "2.8.4"), (2708, "2.7.8"), (20906, "2.9.6"), (21805, "2.18.5"), (22809, "2.28.9")],
)
def test_decode_nccl_version(code: int, version: str) -> None:
    # NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9 (src/nccl.h.in)
    assert decode_nccl_version(code) == version


def test_torch_version_py_of_the_cpu_wheel() -> None:
    text = (DATA / "commands" / "torch-2.13.0+cpu-version.py").read_text()
    assert parse_torch_version_py(text) == ("2.13.0+cpu", None)


def test_rdma_core_version_from_debian_packages(debian_root: FsRoot) -> None:
    dirs = library_dirs(debian_root, {})
    verbs = find_library(debian_root, dirs, "libibverbs.so.1")
    assert verbs == "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"
    assert rdma_core_from_libibverbs(verbs) == "44.0"
    rdmacm = find_library(debian_root, dirs, "librdmacm.so.1")
    assert rdmacm == "/usr/lib/x86_64-linux-gnu/librdmacm.so.1.3.44.0"


@pytest.mark.parametrize("provider", ["mlx5", "mlx4", "erdma", "irdma", "efa", "rxe"])
def test_providers_of_debian_packages_are_found(debian_root: FsRoot, provider: str) -> None:
    found = find_provider(debian_root, library_dirs(debian_root, {}), provider)
    assert found == f"/usr/lib/x86_64-linux-gnu/libibverbs/lib{provider}-rdmav34.so"


def test_missing_provider_and_library(tmp_path: Path) -> None:
    (tmp_path / "sys").mkdir()
    root = FsRoot(tmp_path)
    dirs = library_dirs(root, {})
    assert find_provider(root, dirs, "mlx5") is None
    assert find_library(root, dirs, "libibverbs.so.1") is None


def test_ld_so_conf_includes_are_searched(tmp_path: Path) -> None:
    conf = tmp_path / "etc/ld.so.conf.d"
    conf.mkdir(parents=True)
    (tmp_path / "etc/ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    (conf / "ofed.conf").write_text("# MLNX_OFED\n/usr/mellanox/lib\n")
    lib = tmp_path / "usr/mellanox/lib"
    lib.mkdir(parents=True)
    (lib / "libibverbs.so.1.14.56.0").touch()
    (lib / "libibverbs.so.1").symlink_to("libibverbs.so.1.14.56.0")
    root = FsRoot(tmp_path)
    dirs = library_dirs(root, {})
    assert dirs[0] == "usr/mellanox/lib"
    assert (
        find_library(root, dirs, "libibverbs.so.1") == "/usr/mellanox/lib/libibverbs.so.1.14.56.0"
    )


def test_torch_probe_of_the_cpu_wheel() -> None:
    from hpnet.node.versions import parse_torch_probe

    info = parse_torch_probe((DATA / "commands" / "torch-probe-2.13.0+cpu.txt").read_text())
    assert info is not None
    assert (info.version, info.cuda, info.nccl, info.nccl_source) == (
        "2.13.0+cpu",
        None,
        None,
        None,
    )


def test_torch_probe_of_a_cuda_build_on_an_h100() -> None:
    from hpnet.node.versions import parse_torch_probe

    info = parse_torch_probe((DATA / "commands" / "torch-probe-2.11.0+cu130-h100.txt").read_text())
    assert info is not None
    assert (info.version, info.cuda, info.nccl) == ("2.11.0+cu130", "13.0", "2.28.9")
    assert info.nccl_source == "torch.cuda.nccl.version()"


@pytest.mark.parametrize(
    ("raw", "expected"), [("[2, 28, 9]", "2.28.9"), ("2708", "2.7.8"), ("21805", "2.18.5")]
)
def test_torch_probe_nccl_spellings(raw: str, expected: str) -> None:
    from hpnet.node.versions import parse_torch_probe

    # tuples since torch 1.x's later releases; integer codes before (decoded as ncclGetVersion's)
    noise = "some warning on stdout\n"
    info = parse_torch_probe(noise + '{"version": "x", "cuda": "12.1", "nccl": ' + raw + "}\n")
    assert info is not None and info.nccl == expected


def test_detect_with_torch_probe_success_and_failure() -> None:
    from hpnet.detect import DetectOptions, detect
    from hpnet.node.versions import TORCH_PROBE
    from hpnet.runner import CommandResult, RecordedRunner

    argv = ("py", "-c", TORCH_PROBE)
    good = CommandResult(
        argv=argv,
        returncode=0,
        stdout=(DATA / "commands" / "torch-probe-2.13.0+cpu.txt").read_text(),
    )
    inv = detect(
        DetectOptions(torch_python="py"),
        runner=RecordedRunner({argv: good}),
        env={},
        python_path=[],
    )
    assert inv.versions is not None and inv.versions.torch is not None
    assert inv.versions.torch.version == "2.13.0+cpu"
    bad = CommandResult(
        argv=argv, returncode=1, stdout="", stderr="ModuleNotFoundError: No module named 'torch'\n"
    )
    inv = detect(
        DetectOptions(torch_python="py"), runner=RecordedRunner({argv: bad}), env={}, python_path=[]
    )
    (problem,) = [p for p in inv.problems if p.code == "torch-probe-failed"]
    assert "No module named 'torch'" in problem.what


def test_read_versions_on_a_node_with_debian_rdma_core(debian_root: FsRoot) -> None:
    """The whole versions section, providers included, on Debian's real file lists.

    (This path once built provider entries with a class imported only for type
    checking: every live node with RDMA devices would have crashed.)"""
    from hpnet.node.gpudirect import read_gpudirect
    from hpnet.node.gpus import GpuReport
    from hpnet.node.versions import read_versions
    from hpnet.result import Problem
    from hpnet.runner import RecordedRunner

    problems: list[Problem] = []
    versions = read_versions(
        debian_root,
        env={},
        python_path=[],
        drivers=["erdma", "mlx5", "unknown"],
        gpu_report=GpuReport(source="none"),
        gpudirect=read_gpudirect(debian_root),
        torch_python=None,
        torch_timeout_seconds=1,
        runner=RecordedRunner({}),
        problems=problems,
    )
    assert versions.rdma_core == "44.0"
    assert versions.libibverbs.version == "1.14.44.0"
    assert versions.librdmacm.version == "1.3.44.0"
    assert [(p.name, p.path is not None) for p in versions.providers] == [
        ("erdma", True), ("mlx5", True), ("unknown", False)
    ]  # fmt: skip
    assert versions.nccl == () and versions.torch is None and problems == []
