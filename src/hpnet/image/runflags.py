"""``hpnet image run-flags``: the ``docker run`` flags and the Kubernetes pod settings
that give a container this node's RDMA network (pure: profile + inventory in).

The ECS eRDMA guide starts its containers with (seed 002, "Option 2")::

    docker run --runtime=nvidia --shm-size=8g --ipc=host \\
      --device=/dev/infiniband/rdma_cm --device=/dev/infiniband/uverbs0 \\
      --device=/dev/infiniband/uverbs1 --ulimit memlock=-1 --net=host IMAGE

and explains each: the devices pass the NICs in, memlock unlimited lets RDMA pin
memory, host networking passes the underlay interfaces in. hpnet keeps that set for
every RDMA profile, with the ``uverbsN`` of *this* node's devices instead of the
guide's two: a device whose uverbs node is not passed is invisible in the container
(``NET/IB : No device found``). Host networking matters beyond eRDMA: a RoCE GID is
usable only where its netdev is in the container's network namespace.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from hpnet.rdma.model import PortState

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile
    from hpnet.rdma.model import RdmaDevice

__all__ = ["Flag", "RunFlags", "not_found", "plan_run_flags"]

#: the ECS guide's --shm-size; Docker's own default (64 MiB) is too small for NCCL's
#: SHM transport and data loaders
SHM_SIZE = "8g"
SHM_SIZE_K8S = "8Gi"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Flag:
    """One ``docker run`` flag, why it is there and where that comes from."""

    flag: str
    why: str
    source: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RunFlags:
    profile: str
    node: str
    docker: tuple[Flag, ...]
    #: the RDMA devices whose uverbs nodes are passed in, and those left out with why
    devices: tuple[str, ...]
    left_out: tuple[str, ...]
    #: the settings for one pod's spec (``hostNetwork``, ``containers[0]``, ``volumes``)
    pod: dict[str, Any]
    notes: tuple[str, ...]

    @property
    def argv(self) -> list[str]:
        """The flags as ``docker run`` arguments (``--ulimit memlock=-1`` is two words)."""
        return [word for flag in self.docker for word in flag.flag.split(" ", 1)]


def plan_run_flags(
    profile: Profile,
    inventory: NodeInventory,
    *,
    host_network: bool = True,
    rdma_resource: str | None = None,
    dev_infiniband: tuple[str, ...] | None = None,
) -> RunFlags:
    """The flags for ``profile`` on the node ``inventory`` describes; ``dev_infiniband``
    lists that node's ``/dev/infiniband`` (None: not known, rdma_cm assumed there).

    ``rdma_resource`` (``rdma/hca_shared_devices_a=1``, ``aliyun/erdma=1``) is the
    cluster's RDMA device-plugin resource for the pod: it differs per cluster, so it
    is asked for, not guessed.
    """
    guide = {flag.split("=", 1)[0].split(" ", 1)[0]: flag for flag in profile.container_flags}
    cite = f"the {profile.name} guide" if profile.container_flags else "hpnet"
    ecs = "the ECS eRDMA guide (seed 002)"
    rdma = profile.transport != "socket"
    usable, left_out = _devices(inventory)
    flags: list[Flag] = []
    notes: list[str] = []

    runtime = guide.get("--runtime")
    if runtime:
        flags.append(
            Flag(flag=runtime, why="the NVIDIA container runtime gives the GPUs", source=cite)
        )
    elif inventory.gpus:
        flags.append(
            Flag(
                flag="--gpus all",
                why=f"every GPU ({len(inventory.gpus)} here; NVIDIA Container Toolkit)",
                source="Docker's --gpus (19.03+)",
            )
        )
    else:
        notes.append("no GPU on this node: add --gpus all where the container runs on GPUs")
    if rdma and dev_infiniband is not None and "rdma_cm" not in dev_infiniband:
        # docker run refuses a --device that is not there
        notes.append(
            "/dev/infiniband/rdma_cm is not on this node, so it is left out: `modprobe rdma_ucm` "
            "creates it (the guides pass it in)"
        )
    elif rdma:
        flags.append(
            Flag(
                flag="--device=/dev/infiniband/rdma_cm",
                why="the RDMA connection manager",
                source=cite if "--device" in guide else ecs,
            )
        )
        flags += [
            Flag(
                flag=f"--device={device.uverbs.path}",
                why=f"{device.name} ({device.driver}), detected on this node",
                source="hpnet detect",
            )
            for device in usable
            if device.uverbs is not None  # _devices keeps only those with one
        ]
        guide_devices = [
            f for f in profile.container_flags if f.startswith("--device=/dev/infiniband/uverbs")
        ]
        passed = {f"--device={d.uverbs.path}" for d in usable if d.uverbs is not None}
        if guide_devices and set(guide_devices) != passed:
            notes.append(
                "the guide passes "
                + " ".join(guide_devices)
                + f" (its instance type's NICs); this node has {len(usable)} usable: "
                + (" ".join(sorted(passed)) or "none")
            )
        wrong = [d.name for d in usable if profile.providers and d.driver not in profile.providers]
        if wrong:
            notes.append(
                f"{', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not "
                f"{' or '.join(profile.providers)}, the NICs {profile.name} is for: is this the "
                "platform's node?"
            )
        if not usable:
            notes.append(
                "no RDMA device with an ACTIVE port and a uverbs node on this node: "
                "run this on the node the container will run on"
            )
        flags.append(
            Flag(
                flag="--ulimit memlock=-1",
                why="unlimited locked memory: RDMA registration pins buffers "
                "('Call to ibv_reg_mr failed' otherwise)",
                source=cite if "--ulimit" in guide else ecs,
            )
        )
    if host_network:
        flags.append(
            Flag(
                flag="--net=host",
                why="the node's interfaces in the container: NCCL's sockets and bootstrap, and "
                "the netdev a RoCE GID belongs to",
                source=cite if "--net" in guide else ecs,
            )
        )
    flags.append(
        Flag(
            flag="--ipc=host",
            why="shared memory between the ranks of the node (NCCL's SHM transport, CUDA IPC)",
            source=cite if "--ipc" in guide else ecs,
        )
    )
    flags.append(
        Flag(
            flag=guide.get("--shm-size", f"--shm-size={SHM_SIZE}"),
            why="a /dev/shm larger than Docker's 64 MiB (it has no effect with --ipc=host, which "
            "shares the node's)",
            source=cite if "--shm-size" in guide else ecs,
        )
    )
    pod = _pod(inventory, rdma=rdma, host_network=host_network, rdma_resource=rdma_resource)
    if rdma and rdma_resource is None:
        notes.append(
            "Kubernetes: add the RDMA device plugin's resource of your cluster with "
            "--rdma-resource (rdma/hca_shared_devices_a=1 for Mellanox's shared device plugin, "
            "aliyun/erdma=1 on ACK with eRDMA)"
        )
    return RunFlags(
        profile=profile.name,
        node=inventory.hostname or inventory.source,
        docker=tuple(flags),
        devices=tuple(d.name for d in usable),
        left_out=left_out,
        pod=pod,
        notes=tuple(notes),
    )


def not_found(flags: RunFlags, inventory: NodeInventory) -> tuple[str, ...]:
    """What the node lacks that a GPU job's container is given, and so has no flag:
    an NVIDIA GPU (``--gpus all``), a usable RDMA device (its ``--device`` flags),
    ``/dev/infiniband/rdma_cm``. ``--format docker`` and ``k8s`` print only the flags
    or the pod (for ``$(...)``): the CLI says these on stderr, so that an empty-looking
    result is not taken for a complete one (issue 26).

    >>> from types import SimpleNamespace
    >>> bare = SimpleNamespace(gpus=(), rdma_devices=())  # a node with neither
    >>> flags = RunFlags(profile="socket", node="vm", docker=(), devices=(), left_out=(),
    ...     pod={}, notes=())
    >>> for line in not_found(flags, bare): print(line)
    no NVIDIA GPU found, so no --gpus all (nor a pod's nvidia.com/gpu limit)
    no RDMA device found, so no --device flags
    """
    missing = []
    if not inventory.gpus:
        missing.append("no NVIDIA GPU found, so no --gpus all (nor a pod's nvidia.com/gpu limit)")
    if not flags.devices:
        found = (
            f"no usable RDMA device found ({'; '.join(flags.left_out)})"
            if inventory.rdma_devices
            else "no RDMA device found"
        )
        missing.append(f"{found}, so no --device flags")
    elif any(f.flag.startswith("--device=/dev/infiniband/uverbs") for f in flags.docker) and all(
        f.flag != "--device=/dev/infiniband/rdma_cm" for f in flags.docker
    ):
        missing.append(
            "/dev/infiniband/rdma_cm not found, so no --device for it (`modprobe rdma_ucm` "
            "creates it)"
        )
    return tuple(missing)


def _devices(inventory: NodeInventory) -> tuple[list[RdmaDevice], tuple[str, ...]]:
    usable: list[RdmaDevice] = []
    left_out = []
    for device in inventory.rdma_devices:
        if not any(p.state is PortState.ACTIVE for p in device.ports):
            left_out.append(f"{device.name}: no ACTIVE port")
        elif device.uverbs is None:
            left_out.append(f"{device.name}: no uverbs device (is ib_uverbs loaded?)")
        elif not device.uverbs.present:  # docker run fails on a --device that is not there
            left_out.append(f"{device.name}: {device.uverbs.path} is not here (in a container?)")
        else:
            usable.append(device)
    return usable, tuple(left_out)


def _pod(
    inventory: NodeInventory, *, rdma: bool, host_network: bool, rdma_resource: str | None
) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    if inventory.gpus:
        limits["nvidia.com/gpu"] = len(inventory.gpus)
    if rdma and rdma_resource:
        key, _, value = rdma_resource.partition("=")
        limits[key] = int(value) if value.isdigit() else value
    container: dict[str, Any] = {"name": "worker"}
    if rdma:  # the Kubernetes form of --ulimit memlock=-1: pinning memory for RDMA
        container["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if limits:
        container["resources"] = {"limits": limits}
    spec: dict[str, Any] = {
        "containers": [container],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE_K8S}}],
    }
    if host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    return spec
