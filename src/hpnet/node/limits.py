"""Process limits and kernel facts RDMA depends on.

Memory registration pins pages, so ``RLIMIT_MEMLOCK`` must be unlimited (or at
least cover every registered buffer), or ``ibv_reg_mr`` / ``ibv_create_cq`` fail
with "Cannot allocate memory". NCCL's SHM transport and PyTorch's data loaders
live in ``/dev/shm`` (Docker's default is 64 MiB).
"""

from __future__ import annotations

import dataclasses
import os
import resource
from typing import Literal

__all__ = ["Limits", "RlimitValue", "read_limits", "rlimit_value"]

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


def rlimit_value(value: int) -> RlimitValue:
    """``RLIM_INFINITY`` as ``"unlimited"``, other values unchanged."""
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
