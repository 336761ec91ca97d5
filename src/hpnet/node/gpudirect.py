"""GPUDirect RDMA prerequisites visible in sysfs and /proc.

GPUDirect RDMA registers GPU memory with the NIC through one of two kernel
paths: the ``nvidia_peermem`` module (``nv_peer_mem`` before driver 470), or
dma-buf, which NVIDIA recommends and which needs Linux >= 5.12 and the open GPU
kernel module (NVIDIA GPU Operator, "GPUDirect RDMA and GPUDirect Storage").
NCCL then logs ``/GDRDMA`` on its network connections.
``/proc/driver/nvidia/version`` names the module: ``NVIDIA UNIX Open Kernel
Module for x86_64  580.95.05 ...`` or ``NVIDIA UNIX x86_64 Kernel Module  515.76 ...``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import ClassVar

from hpnet.node.sysfs import FsRoot

__all__ = ["GpuDirect", "kernel_at_least", "parse_nvidia_proc_version", "read_gpudirect"]

_PROC_VERSION = re.compile(
    r"NVRM version: NVIDIA UNIX (Open )?.*?Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)"
)


def parse_nvidia_proc_version(text: str) -> tuple[str | None, bool | None]:
    """``(driver version, open kernel module?)`` from ``/proc/driver/nvidia/version``.

    >>> parse_nvidia_proc_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon")
    ('515.76', False)
    """
    match = _PROC_VERSION.search(text)
    if not match:
        return None, None
    return match.group(2), match.group(1) is not None


def kernel_at_least(release: str | None, major: int, minor: int) -> bool | None:
    """Whether a kernel release (``6.8.0-45-generic``) is at least ``major.minor``."""
    match = re.match(r"(\d+)\.(\d+)", release or "")
    if not match:
        return None
    return (int(match.group(1)), int(match.group(2))) >= (major, minor)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GpuDirect:
    nvidia_peermem: bool
    nv_peer_mem: bool
    kernel_release: str | None
    nvidia_module_version: str | None
    #: True for NVIDIA's open GPU kernel module, False for the proprietary one, None if unknown
    nvidia_open_kernel_module: bool | None = None

    JSON_PROPERTIES: ClassVar[tuple[str, ...]] = ("dmabuf_possible",)

    @property
    def dmabuf_possible(self) -> bool | None:
        """Linux >= 5.12 and the open GPU kernel module; None when either is unknown."""
        if self.nvidia_open_kernel_module is None:
            return None
        new_enough = kernel_at_least(self.kernel_release, 5, 12)
        if new_enough is None:
            return None
        return new_enough and self.nvidia_open_kernel_module


def read_gpudirect(fs: FsRoot) -> GpuDirect:
    """Loaded GPUDirect modules from ``sys/module`` under the root."""
    proc_version, open_module = parse_nvidia_proc_version(
        fs.read("proc/driver/nvidia/version") or ""
    )
    return GpuDirect(
        nvidia_peermem=fs.is_dir("sys/module/nvidia_peermem"),
        nv_peer_mem=fs.is_dir("sys/module/nv_peer_mem"),
        kernel_release=os.uname().release if fs.is_live else fs.read("proc/sys/kernel/osrelease"),
        nvidia_module_version=fs.read("sys/module/nvidia/version") or proc_version,
        nvidia_open_kernel_module=open_module,
    )
