"""``hpnet image run-flags``: detect this node -> :func:`hpnet.image.runflags.plan_run_flags`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.image.runflags import RunFlags

#: of `hpnet image run-flags --json` (docs/image-schema.md)
SCHEMA_VERSION = 1

DESCRIPTION = """\
The docker run flags and Kubernetes pod settings that give a container this node's
RDMA network: the rdma_cm and uverbs device of every RDMA NIC with an ACTIVE port,
unlimited memlock (IPC_LOCK in a pod), host networking and IPC, a large /dev/shm.
Each flag says why and where it comes from.

  hpnet image run-flags --profile ecs-erdma
  hpnet image run-flags --profile roce --format docker     just the flags, for $(...)
  hpnet image run-flags --profile pai-dlc-erdma --format k8s --rdma-resource aliyun/erdma=1
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="auto", help="the platform profile (default: auto)")
    parser.add_argument(
        "--sysfs-root",
        default="/",
        metavar="DIR",
        help="read sysfs and /dev under DIR instead of / (default: /)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "docker", "k8s"),
        default="text",
        help="text: flags with reasons and the pod settings (default); docker: the flags on one "
        "line; k8s: the pod settings as YAML",
    )
    parser.add_argument(
        "--no-host-network", action="store_true", help="leave out --net=host / hostNetwork"
    )
    parser.add_argument(
        "--rdma-resource",
        metavar="NAME=N",
        help="the cluster's RDMA device-plugin resource for the pod (rdma/hca_shared_devices_a=1)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(namespace: argparse.Namespace) -> int:
    from hpnet.detect import DetectOptions, detect  # noqa: PLC0415
    from hpnet.errors import UsageError  # noqa: PLC0415
    from hpnet.image.runflags import plan_run_flags  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    resource = namespace.rdma_resource
    if resource is not None and not _is_resource(resource):
        raise UsageError(
            f"{resource!r} is not NAME=N",
            code="usage",
            where="--rdma-resource",
            fix="e.g. --rdma-resource rdma/hca_shared_devices_a=1",
        )
    profile = get_profile(namespace.profile)
    # GPUs count for the pod's nvidia.com/gpu; versions are not needed
    inventory = detect(
        DetectOptions(sysfs_root=namespace.sysfs_root), env=os.environ, python_path=sys.path
    )
    if profile.name == "auto":  # the node decides: ib, roce, erdma or socket
        from hpnet.nccl.fill import choose_transport  # noqa: PLC0415

        profile = get_profile(choose_transport(profile, inventory))
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415

    fs = FsRoot(namespace.sysfs_root)
    flags = plan_run_flags(
        profile,
        inventory,
        host_network=not namespace.no_host_network,
        rdma_resource=resource,
        dev_infiniband=tuple(fs.listdir("dev/infiniband")) if fs.is_dir("dev/infiniband") else (),
    )
    if namespace.json:
        import dataclasses  # noqa: PLC0415

        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        body = dataclasses.asdict(flags)
        print(dumps(envelope(body, schema_version=SCHEMA_VERSION, argv=flags.argv)))
        return 0
    from hpnet.render.image import render_run_flags  # noqa: PLC0415

    print(render_run_flags(flags, namespace.format), end="")
    if namespace.format != "text":
        _say_not_found(flags, inventory)
    return 0


def _say_not_found(flags: RunFlags, inventory: NodeInventory) -> None:
    """On stderr, what the node lacks and so has no flag: stdout holds only the flags
    (``docker run $(hpnet image run-flags --format docker) IMAGE``) or the pod, which
    alone do not show that a GPU or an RDMA device was looked for and not found."""
    from hpnet.image.runflags import not_found  # noqa: PLC0415

    missing = not_found(flags, inventory)
    for line in missing:
        print(f"hpnet image run-flags: node {flags.node}: {line}", file=sys.stderr)
    if missing:
        print(
            "hpnet image run-flags: `hpnet detect` shows what the node has (run it where the "
            "container will run; the flags are valid as printed)",
            file=sys.stderr,
        )


def _is_resource(text: str) -> bool:
    import re  # noqa: PLC0415

    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*=[0-9]+", text) is not None
