"""Generic starting points, from NCCL's own documentation: the node's detection
fills the HCAs, the GID index and the interface."""

from __future__ import annotations

import dataclasses

from hpnet.profiles.alibaba import ECS_ERDMA, PAI_DLC_ERDMA
from hpnet.profiles.model import PackageSet, Profile, Setting, Source
from hpnet.profiles.rdma_core import RDMA_CORE_APT

__all__ = ["AUTO", "ERDMA", "IB", "ROCE", "SOCKET"]

NCCL_DOCS = Source(
    title="NCCL user guide: Environment Variables",
    url="https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
)
IB_DISABLE = Source(
    title=NCCL_DOCS.title, url=f"{NCCL_DOCS.url}#nccl-ib-disable", section="NCCL_IB_DISABLE"
)


def _ib_on() -> Setting:
    return Setting(
        name="NCCL_IB_DISABLE",
        value="0",
        why="use the IB verbs transport (InfiniBand, RoCE, eRDMA)",
        source=IB_DISABLE,
    )


IB = Profile(
    name="ib",
    title="InfiniBand (generic)",
    transport="ib",
    summary="NCCL's IB transport over the node's ACTIVE InfiniBand ports; the GID index "
    "does not apply to InfiniBand.",
    sources=(NCCL_DOCS,),
    settings=(_ib_on(),),
    detect=("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"),
)
ROCE = Profile(
    name="roce",
    title="RoCE (generic)",
    transport="roce",
    summary="NCCL's IB transport over the node's ACTIVE Ethernet (RoCE) ports, with a "
    "RoCE v2 GID that routes.",
    sources=(NCCL_DOCS,),
    settings=(_ib_on(),),
)
#: eRDMA's user space: Alibaba's eRDMA repository as the two Alibaba guides add it (without
#: ECS's AIACC plugin, which the generic profile does not use), and on releases whose own
#: rdma-core (44 and later) already carries the erdma provider, the distribution's: Debian
#: 12's ibverbs-providers 44.0 ships liberdma-rdmav34.so and erdma.driver
#: (tests/data/packages/dpkg-L-rdma-core-44.0-debian12.txt), Ubuntu 24.04's 50.0 too
#: (tests/data/images/cuda13-torch-ubuntu24.04.facts.txt).
_ERDMA_PACKAGES: tuple[PackageSet, ...] = (
    *PAI_DLC_ERDMA.packages,
    *(dataclasses.replace(p, plugin_package=None) for p in ECS_ERDMA.packages),
    dataclasses.replace(RDMA_CORE_APT, distros=("debian12", "ubuntu24.04")),
)

ERDMA = Profile(
    name="erdma",
    title="Alibaba eRDMA (generic, NCCL's IB transport without a plugin)",
    transport="erdma",
    summary="NCCL's IB transport over erdma devices, which NCCL sees as RoCE.",
    sources=(NCCL_DOCS,),
    providers=("erdma",),
    packages=_ERDMA_PACKAGES,
    settings=(_ib_on(),),
)
SOCKET = Profile(
    name="socket",
    title="TCP sockets only",
    transport="socket",
    summary="No RDMA: NCCL's Socket transport over the best IP interface.",
    sources=(NCCL_DOCS,),
    settings=(
        Setting(
            name="NCCL_IB_DISABLE",
            value="1",
            why="no usable RDMA device: do not try the IB transport",
            source=IB_DISABLE,
        ),
    ),
    detect=("NCCL_SOCKET_IFNAME",),
)
AUTO = Profile(
    name="auto",
    title="Chosen from this node's detection",
    transport="auto",
    summary="ib, roce, erdma or socket, whichever the node's usable devices call for.",
    sources=(NCCL_DOCS,),
)
