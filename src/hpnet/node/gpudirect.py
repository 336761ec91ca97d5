"""GPUDirect RDMA prerequisites visible in sysfs.

GPUDirect RDMA needs the ``nvidia_peermem`` module (``nv_peer_mem`` before
driver 470) or dma-buf (Linux >= 5.12 with the open kernel module); NCCL then
logs ``/GDRDMA`` on its network connections.
"""

from __future__ import annotations

import dataclasses
import os

from hpnet.node.sysfs import FsRoot

__all__ = ["GpuDirect", "read_gpudirect"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GpuDirect:
    nvidia_peermem: bool
    nv_peer_mem: bool
    kernel_release: str | None
    nvidia_module_version: str | None


def read_gpudirect(fs: FsRoot) -> GpuDirect:
    """Loaded GPUDirect modules from ``sys/module`` under the root."""
    return GpuDirect(
        nvidia_peermem=fs.is_dir("sys/module/nvidia_peermem"),
        nv_peer_mem=fs.is_dir("sys/module/nv_peer_mem"),
        kernel_release=os.uname().release if fs.is_live else fs.read("proc/sys/kernel/osrelease"),
        nvidia_module_version=fs.read("sys/module/nvidia/version"),
    )
