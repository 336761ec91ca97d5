"""Is this a container, and whose? Device and limit problems differ in one.

Evidence, in order of strength: Kubernetes puts ``KUBERNETES_SERVICE_HOST`` in
every pod's environment; Docker creates ``/.dockerenv``; Podman
``/run/.containerenv``; systemd-nspawn, Podman and LXC set ``container=``;
cgroup paths name the runtime (``/kubepods``, ``/docker/``, ``cri-containerd``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hpnet.node.sysfs import FsRoot

__all__ = ["Context", "classify_context", "read_context"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Context:
    in_container: bool
    runtime: str | None  # docker, podman, containerd, lxc, ... or None
    kubernetes: bool
    evidence: tuple[str, ...] = ()


_CGROUP_MARKERS = (
    ("kubepods", "kubernetes"),
    ("cri-containerd", "containerd"),
    ("containerd", "containerd"),
    ("docker", "docker"),
    ("libpod", "podman"),
    ("lxc", "lxc"),
)


def classify_context(
    *, dockerenv: bool, containerenv: bool, cgroup: str, env: Mapping[str, str]
) -> Context:
    """Decide the container context from gathered evidence (pure)."""
    evidence: list[str] = []
    runtime: str | None = None
    kubernetes = "KUBERNETES_SERVICE_HOST" in env
    if kubernetes:
        evidence.append("KUBERNETES_SERVICE_HOST is set")
    if dockerenv:
        runtime = "docker"
        evidence.append("/.dockerenv exists")
    if containerenv:
        runtime = "podman"
        evidence.append("/run/.containerenv exists")
    if env.get("container"):
        runtime = runtime or env["container"]
        evidence.append(f"container={env['container']}")
    for marker, name in _CGROUP_MARKERS:
        if marker in cgroup:
            if name == "kubernetes":
                kubernetes = True
            else:
                runtime = runtime or name
            evidence.append(f"/proc/1/cgroup mentions {marker}")
            break
    return Context(
        in_container=bool(evidence),
        runtime=runtime,
        kubernetes=kubernetes,
        evidence=tuple(evidence),
    )


def read_context(fs: FsRoot, env: Mapping[str, str]) -> Context:
    """Gather the evidence under ``fs`` and in ``env``, then :func:`classify_context`."""
    return classify_context(
        dockerenv=fs.exists(".dockerenv"),
        containerenv=fs.exists("run/.containerenv"),
        cgroup=fs.read("proc/1/cgroup") or "",
        env=env,
    )
