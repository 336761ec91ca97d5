"""``hpnet detect``: flags -> :class:`DetectArgs` -> library -> rendering."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from hpnet.cli._node import add_node_arguments, read_listings

DESCRIPTION = """\
Inventory this node: RDMA devices (driver, ports, state, link layer, rate, LID),
their full GID tables (RoCE v1/v2, IPv4-mapped / IPv6 / link-local, netdev),
/dev/infiniband access, network interfaces, GPUs, the PCIe relation of every GPU
to every NIC (PIX/PXB/PHB/NODE/SYS), NVIDIA driver / CUDA / NCCL / torch /
rdma-core versions, memlock and /dev/shm limits, GPUDirect modules, container.

  hpnet detect                          this node
  hpnet detect --sysfs-root DIR         a recorded tree (DIR/sys/class/infiniband/...)
  hpnet detect --from ibv_devinfo.txt   saved ibv_devinfo [-v] / ibstat / show_gids /
                                        ibdev2netdev output (repeatable; - is stdin)

--json prints one object (schema: docs/detect-schema.md).
"""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DetectArgs:
    sysfs_root: str
    listings: tuple[str, ...]
    torch: bool
    json: bool


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_node_arguments(parser)
    parser.add_argument(
        "--torch",
        action="store_true",
        help="import torch (in a child process, seconds) and ask it which NCCL it uses; "
        "without it torch's files are read and the NCCL its wheel pins is reported",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(namespace: argparse.Namespace) -> int:
    args = DetectArgs(
        sysfs_root=namespace.sysfs_root,
        listings=tuple(namespace.listings),
        torch=namespace.torch,
        json=namespace.json,
    )
    # The library is imported here, not at the top: `hpnet detect --help` needs none of it.
    from hpnet.detect import DetectOptions, detect, inventory_from_listings  # noqa: PLC0415

    if args.listings:
        listings = read_listings(args.listings, args.sysfs_root, "hpnet detect")
        inventory = inventory_from_listings(listings)
    else:
        options = DetectOptions(
            sysfs_root=args.sysfs_root, torch_python=sys.executable if args.torch else None
        )
        inventory = detect(options, env=os.environ, python_path=sys.path)
    if args.json:
        from hpnet.jsonout import dumps  # noqa: PLC0415

        print(dumps(inventory))
    else:
        from hpnet.render.detect import render_inventory  # noqa: PLC0415

        print(render_inventory(inventory), end="")
    return 0
