from __future__ import annotations

from pathlib import Path

import pytest

from hpnet.node.context import classify_context
from hpnet.node.gpudirect import GpuDirect, parse_nvidia_proc_version, read_gpudirect
from hpnet.node.limits import read_limits
from hpnet.node.sysfs import FsRoot
from tests.conftest import DATA

# a cgroup v1 line in the shape kubelet gives pods (/kubepods/<qos>/pod<uid>/<container id>)
KUBEPODS_CGROUP = (
    "12:memory:/kubepods/besteffort/pod5b8f1c2e-1f3a-4e0d-9c55-0a3e2d6f7b11/"
    "0e6a1d6c3b5a4e2f9f3c1b2a0d9e8f7c6b5a4e3d2c1b0a9f8e7d6c5b4a3f2e1d\n"
)


def test_bare_host() -> None:
    context = classify_context(
        dockerenv=False, containerenv=False, cgroup="0::/init.scope\n", env={}
    )
    assert not context.in_container and context.runtime is None and not context.kubernetes


def test_docker() -> None:
    context = classify_context(dockerenv=True, containerenv=False, cgroup="0::/\n", env={})
    assert context.in_container and context.runtime == "docker"
    assert context.evidence == ("/.dockerenv exists",)


def test_kubernetes_pod() -> None:
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}
    context = classify_context(dockerenv=False, containerenv=False, cgroup=KUBEPODS_CGROUP, env=env)
    assert context.in_container and context.kubernetes


def test_podman() -> None:
    context = classify_context(
        dockerenv=False, containerenv=True, cgroup="0::/\n", env={"container": "podman"}
    )
    assert context.runtime == "podman"


def proc_self_limits() -> dict[str, tuple[str, str]]:
    """/proc/self/limits (proc(5)): an independent view of the same limits."""
    rows = {}
    for line in Path("/proc/self/limits").read_text().splitlines()[1:]:
        name = line[:26].strip()
        soft, hard = line[26:].split()[:2]
        rows[name] = (soft, hard)
    return rows


def as_proc(value: int | str) -> str:
    return "unlimited" if value == "unlimited" else str(value)


def test_limits_agree_with_proc_self_limits() -> None:
    limits = read_limits()
    proc = proc_self_limits()
    assert (as_proc(limits.memlock_soft_bytes), as_proc(limits.memlock_hard_bytes)) == proc[
        "Max locked memory"
    ]
    assert (as_proc(limits.nofile_soft), as_proc(limits.nofile_hard)) == proc["Max open files"]


def test_gpudirect_module_from_sysfs(tmp_path: Path) -> None:
    (tmp_path / "sys/module/nvidia_peermem").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia/version").write_text("535.129.03\n")
    gpudirect = read_gpudirect(FsRoot(tmp_path))
    assert gpudirect.nvidia_peermem and not gpudirect.nv_peer_mem
    assert gpudirect.nvidia_module_version == "535.129.03"


@pytest.mark.parametrize(
    ("name", "version", "open_module"),
    [
        ("proc-driver-nvidia-version-open-580.txt", "580.95.05", True),
        ("proc-driver-nvidia-version-open-580-h100.txt", "580.159.04", True),
        ("proc-driver-nvidia-version-proprietary-515.txt", "515.76", False),
    ],
)
def test_proc_nvidia_version(name: str, version: str, open_module: bool) -> None:
    text = (DATA / "commands" / name).read_text()
    assert parse_nvidia_proc_version(text) == (version, open_module)


@pytest.mark.parametrize(
    ("release", "open_module", "expected"),
    [
        ("6.8.0-45-generic", True, True),
        ("5.12.0", True, True),
        ("5.4.0-150-generic", True, False),
        ("6.8.0-45-generic", False, False),
        ("6.8.0-45-generic", None, None),
        (None, True, None),
    ],
)
def test_dmabuf_possible(
    release: str | None, open_module: bool | None, expected: bool | None
) -> None:
    gpudirect = GpuDirect(
        nvidia_peermem=False,
        nv_peer_mem=False,
        kernel_release=release,
        nvidia_module_version=None,
        nvidia_open_kernel_module=open_module,
    )
    assert gpudirect.dmabuf_possible is expected
