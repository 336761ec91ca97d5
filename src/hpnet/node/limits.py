"""Process limits and kernel facts RDMA depends on.

Memory registration pins pages, so ``RLIMIT_MEMLOCK`` must be unlimited (or at
least cover every registered buffer), or ``ibv_reg_mr`` / ``ibv_create_cq`` fail
with "Cannot allocate memory". NCCL's SHM transport and PyTorch's data loaders
live in ``/dev/shm`` (Docker's default is 64 MiB). GPUDirect RDMA needs the
``nvidia_peermem`` module (``nv_peer_mem`` before driver 470) or dma-buf
(Linux >= 5.12 with the open kernel module).
"""

from __future__ import annotations

import dataclasses
import os
import resource
from typing import Literal

from hpnet.node.sysfs import FsRoot

__all__ = ["GpuDirect", "Limits", "read_gpudirect", "read_limits", "rlimit_value"]

RlimitValue = int | Literal["unlimited"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Limits:
    memlock_soft_bytes: RlimitValue
    memlock_hard_bytes: RlimitValue
    nofile_soft: RlimitValue
    nofile_hard: RlimitValue
    shm_bytes: int | None  # size of /dev/shm; None when it is not mounted

    @property
    def memlock_unlimited(self) -> bool:
        return self.memlock_soft_bytes == "unlimited"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GpuDirect:
    nvidia_peermem: bool
    nv_peer_mem: bool
    kernel_release: str | None
    nvidia_module_version: str | None


def rlimit_value(value: int) -> RlimitValue:
    return "unlimited" if value == resource.RLIM_INFINITY else value


def read_limits() -> Limits:
    """Limits of this process (the live node only)."""
    memlock = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        stats = os.statvfs("/dev/shm")
        shm: int | None = stats.f_blocks * stats.f_frsize
    except OSError:
        shm = None
    return Limits(
        memlock_soft_bytes=rlimit_value(memlock[0]),
        memlock_hard_bytes=rlimit_value(memlock[1]),
        nofile_soft=rlimit_value(nofile[0]),
        nofile_hard=rlimit_value(nofile[1]),
        shm_bytes=shm,
    )


def read_gpudirect(fs: FsRoot) -> GpuDirect:
    """Loaded GPUDirect modules from ``sys/module`` under the root."""
    return GpuDirect(
        nvidia_peermem=fs.is_dir("sys/module/nvidia_peermem"),
        nv_peer_mem=fs.is_dir("sys/module/nv_peer_mem"),
        kernel_release=os.uname().release if fs.is_live else fs.read("proc/sys/kernel/osrelease"),
        nvidia_module_version=fs.read("sys/module/nvidia/version"),
    )
