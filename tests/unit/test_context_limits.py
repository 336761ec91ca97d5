from __future__ import annotations

from pathlib import Path

from hpnet.node.context import classify_context
from hpnet.node.gpudirect import read_gpudirect
from hpnet.node.limits import read_limits
from hpnet.node.sysfs import FsRoot

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


def test_limits_of_this_process_are_read() -> None:
    limits = read_limits()
    assert limits.memlock_soft_bytes == "unlimited" or limits.memlock_soft_bytes >= 0
    assert limits.nofile_soft == "unlimited" or limits.nofile_soft > 0


def test_gpudirect_module_from_sysfs(tmp_path: Path) -> None:
    (tmp_path / "sys/module/nvidia_peermem").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia/version").write_text("535.129.03\n")
    gpudirect = read_gpudirect(FsRoot(tmp_path))
    assert gpudirect.nvidia_peermem and not gpudirect.nv_peer_mem
    assert gpudirect.nvidia_module_version == "535.129.03"
