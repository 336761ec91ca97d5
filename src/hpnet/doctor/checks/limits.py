"""Checks of the process limits NCCL meets: locked memory, /dev/shm, open files."""

from __future__ import annotations

from hpnet.doctor.checks._util import (
    result,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.result import Status

__all__ = ["check_memlock", "check_nofile", "check_shm"]

GIB = 1 << 30
#: /dev/shm below this is too small for NCCL's SHM transport and data loaders (Docker's
#: default is 64 MiB; the ECS eRDMA guide starts containers with --shm-size=8g)
SHM_MIN_BYTES = 1 * GIB
#: NCCL's troubleshooting guide ("File Descriptors", runtime_and_mpi_issues.rst, v2.30.7):
#: "a 144-rank job using 16 GIN contexts may require over 32K file descriptors per
#: process"; its example limit is 131072. Below 32K a large job may run out, a small one
#: will not: a WARN that says so, never a FAIL.
NOFILE_MIN = 32768
NOFILE_SUGGESTED = 131072


def _context(facts: Facts) -> str:
    """host, container or kubernetes."""
    context = facts.inventory.context
    if context is None or not context.in_container:
        return "kubernetes" if context is not None and context.kubernetes else "host"
    return "kubernetes" if context.kubernetes else "container"


def check_memlock(facts: Facts) -> CheckResult:
    """RDMA registration pins memory against RLIMIT_MEMLOCK ('Call to ibv_reg_mr
    failed', NCCL's networking troubleshooting guide); without RDMA it does not matter."""
    limits = facts.inventory.limits
    if limits is None:
        return result("limits.memlock", "limits", Status.SKIP, "process limits are live-only")
    if limits.memlock_unlimited:
        return result("limits.memlock", "limits", Status.PASS, "memlock is unlimited")
    soft = limits.memlock_soft_bytes
    if not facts.inventory.rdma_devices:
        return result(
            "limits.memlock",
            "limits",
            Status.SKIP,
            f"memlock is {soft} bytes; it matters only for RDMA memory registration, and "
            "this node has no RDMA device",
        )
    summary = (
        f"memlock is {soft} bytes: RDMA registration pins memory and fails "
        "('NCCL WARN Call to ibv_reg_mr failed' / 'Cannot allocate memory')"
    )
    where = _context(facts)
    if limits.memlock_hard_bytes == "unlimited":
        return result(
            "limits.memlock",
            "limits",
            Status.FAIL,
            summary,
            f"the hard limit is unlimited: the soft one can be raised ({where})",
            fix="ulimit -l unlimited",
            fix_note="in the shell (or job script) that starts the ranks",
        )
    if where == "kubernetes":
        return result(
            "limits.memlock",
            "limits",
            Status.FAIL,
            summary,
            fix_note="give the container the IPC_LOCK capability (securityContext: "
            "capabilities: add: [IPC_LOCK]): the kernel then lets it register memory "
            "beyond the memlock limit",
        )
    if where == "container":
        return result(
            "limits.memlock",
            "limits",
            Status.FAIL,
            summary,
            fix_note="start the container with --ulimit memlock=-1 (docker run flag, as the "
            "ECS eRDMA guide does)",
        )
    return result(
        "limits.memlock",
        "limits",
        Status.FAIL,
        summary,
        # NCCL's networking troubleshooting guide: '* soft memlock unlimited' and
        # '* hard memlock unlimited' in /etc/security/limits.conf or equivalent
        fix="printf '* soft memlock unlimited\\n* hard memlock unlimited\\n' | "
        "sudo tee /etc/security/limits.d/99-memlock.conf",
        fix_note="then log in again (for Slurm, restart slurmd so that jobs inherit it) and "
        "check with ulimit -l",
    )


def check_shm(facts: Facts) -> CheckResult:
    limits = facts.inventory.limits
    if limits is None:
        return result("limits.shm", "limits", Status.SKIP, "/dev/shm is checked on the live node")
    where = _context(facts)
    notes = {
        "container": "start the container with --ipc=host or --shm-size=8g (docker run "
        "flags, as the ECS eRDMA guide does)",
        "kubernetes": "mount an emptyDir with medium: Memory on /dev/shm",
        "host": "as root; add it to /etc/fstab to keep it after a reboot",
    }
    if limits.shm_bytes is None:
        return result(
            "limits.shm",
            "limits",
            Status.FAIL,
            "/dev/shm is not mounted",
            fix="mount -t tmpfs -o size=8g tmpfs /dev/shm" if where == "host" else None,
            fix_note=notes[where],
        )
    if limits.shm_bytes < SHM_MIN_BYTES:
        return result(
            "limits.shm",
            "limits",
            Status.WARN,
            f"/dev/shm is {limits.shm_bytes >> 20} MiB: NCCL's SHM transport and data "
            "loaders run out (Docker's default is 64 MiB)",
            fix="mount -o remount,size=8g /dev/shm" if where == "host" else None,
            fix_note=notes[where],
        )
    return result(
        "limits.shm", "limits", Status.PASS, f"/dev/shm is {limits.shm_bytes / GIB:.1f} GiB"
    )


def check_nofile(facts: Facts) -> CheckResult:
    """Open files: NCCL's troubleshooting guide says large jobs need tens of thousands
    per process (see :data:`NOFILE_MIN`)."""
    limits = facts.inventory.limits
    if limits is None:
        return result("limits.nofile", "limits", Status.SKIP, "process limits are live-only")
    soft, hard = limits.nofile_soft, limits.nofile_hard
    if soft == "unlimited" or (isinstance(soft, int) and soft >= NOFILE_MIN):
        return result("limits.nofile", "limits", Status.PASS, f"open files: {soft}")
    # raising the soft limit up to the hard one needs no privilege
    target = NOFILE_SUGGESTED if hard == "unlimited" or not isinstance(hard, int) else hard
    target = min(target, NOFILE_SUGGESTED)
    room = hard == "unlimited" or (isinstance(hard, int) and hard >= NOFILE_MIN)
    return result(
        "limits.nofile",
        "limits",
        Status.WARN,
        f"open files limited to {soft}: enough for small jobs, but NCCL's troubleshooting "
        "guide says a 144-rank job with 16 GIN contexts may need over 32K per process",
        f"hard limit: {hard}",
        fix=f"ulimit -n {target}" if room else None,
        fix_note="in the shell that starts the ranks"
        if room
        else f"the hard limit is {hard}: raise it in /etc/security/limits.d/ "
        f"('* - nofile {NOFILE_SUGGESTED}', as NCCL's guide shows) or start the container "
        f"with --ulimit nofile={NOFILE_SUGGESTED}",
    )
