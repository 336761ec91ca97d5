"""Checks of the node: versions, RDMA user space, device nodes, limits, GPUDirect, ports."""

from __future__ import annotations

import shlex

from hpnet.doctor.checks._util import (
    Port,
    export,
    fix_lines,
    kind_word,
    result,
    selected_ports,
    usable,
)
from hpnet.doctor.model import CheckResult, Facts, Status
from hpnet.doctor.packages import install_fix
from hpnet.nccl.fill import unknown_ports, version_tuple
from hpnet.node.topology import PcieRelation
from hpnet.rdma.model import PortState

__all__ = [
    "check_acs",
    "check_cuda_version",
    "check_gpudirect",
    "check_libibverbs",
    "check_librdmacm",
    "check_locality",
    "check_memlock",
    "check_mixed_ports",
    "check_nccl_version",
    "check_nofile",
    "check_port_state",
    "check_providers",
    "check_rdma_cm",
    "check_shm",
    "check_uverbs",
]

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


def _skip_no_rdma(facts: Facts, check_id: str, area: str) -> CheckResult | None:
    if not facts.inventory.rdma_devices:
        return result(check_id, area, Status.SKIP, "no RDMA device on this node")
    return None


def _missing(facts: Facts, check_id: str, status: Status, summary: str) -> CheckResult:
    """A missing RDMA library, fixed by the profile's guide steps for this distribution,
    else rdma-core's packages (:mod:`hpnet.doctor.packages`)."""
    found = install_fix(facts.profile, facts.distro)
    return result(check_id, "userspace", status, summary, fix=found.commands, fix_note=found.note)


# ---------------------------------------------------------------- versions


def check_nccl_version(facts: Facts) -> CheckResult:
    req = facts.profile.requirements if facts.profile else None
    if req is None or not (req.nccl_min or req.nccl_max):
        return result("versions.nccl", "versions", Status.SKIP, "no NCCL requirement to check")
    have = version_tuple(facts.nccl_version)
    if have is None:
        return result(
            "versions.nccl",
            "versions",
            Status.SKIP,
            "the NCCL version is not known here (pass --nccl-version)",
        )
    wanted = f"{req.nccl_min or ''}..{req.nccl_max + '.x' if req.nccl_max else ''}"
    if req.nccl_min and have < (version_tuple(req.nccl_min) or ()):
        return result(
            "versions.nccl",
            "versions",
            Status.FAIL,
            f"NCCL {facts.nccl_version} is older than {req.nccl_min}",
            fix_note=f"install NCCL {req.nccl_min} or later (or use an image that has it)",
        )
    if req.nccl_max and have[:2] > (version_tuple(req.nccl_max) or ())[:2]:
        return result(
            "versions.nccl",
            "versions",
            Status.FAIL,
            f"NCCL {facts.nccl_version} is newer than the {req.nccl_max}.x the "
            f"{facts.profile.name if facts.profile else ''} setup supports",
            fix_note=f"use NCCL {req.nccl_min} to {req.nccl_max}.x with this plugin",
        )
    return result(
        "versions.nccl", "versions", Status.PASS, f"NCCL {facts.nccl_version} within {wanted}"
    )


def check_cuda_version(facts: Facts) -> CheckResult:
    req = facts.profile.requirements if facts.profile else None
    if req is None or not req.cuda_min:
        return result("versions.cuda", "versions", Status.SKIP, "no CUDA requirement to check")
    versions = facts.inventory.versions
    have = version_tuple(versions.cuda_driver if versions else None)
    if have is None:
        return result("versions.cuda", "versions", Status.SKIP, "no CUDA driver found here")
    if have < (version_tuple(req.cuda_min) or ()):
        return result(
            "versions.cuda",
            "versions",
            Status.FAIL,
            f"the driver supports CUDA {versions.cuda_driver if versions else ''}, "
            f"below the {req.cuda_min} required",
            fix_note=f"upgrade the NVIDIA driver to one supporting CUDA {req.cuda_min}",
        )
    return result(
        "versions.cuda",
        "versions",
        Status.PASS,
        f"CUDA driver {versions.cuda_driver if versions else ''} >= {req.cuda_min}",
    )


# ---------------------------------------------------------------- RDMA user space


def check_libibverbs(facts: Facts) -> CheckResult:
    if skipped := _skip_no_rdma(facts, "userspace.libibverbs", "userspace"):
        return skipped
    versions = facts.inventory.versions
    if versions is None:
        return result(
            "userspace.libibverbs",
            "userspace",
            Status.SKIP,
            "libraries are only checked on the live node",
        )
    if versions.libibverbs.path is None:
        return _missing(
            facts,
            "userspace.libibverbs",
            Status.FAIL,
            "libibverbs is not installed: NCCL cannot use RDMA "
            "('NET/IB : Failed to open libibverbs.so')",
        )
    return result(
        "userspace.libibverbs",
        "userspace",
        Status.PASS,
        f"libibverbs {versions.libibverbs.version or ''} at {versions.libibverbs.path}",
    )


def check_providers(facts: Facts) -> CheckResult:
    if skipped := _skip_no_rdma(facts, "userspace.providers", "userspace"):
        return skipped
    versions = facts.inventory.versions
    if versions is None:
        return result(
            "userspace.providers",
            "userspace",
            Status.SKIP,
            "libraries are only checked on the live node",
        )
    missing = [p.name for p in versions.providers if p.path is None]
    if missing:
        return _missing(
            facts,
            "userspace.providers",
            Status.FAIL,
            f"no verbs provider for {', '.join(missing)}: libibverbs will list no "
            "device ('NET/IB : No device found')",
        )
    found = ", ".join(f"{p.name} ({p.path})" for p in versions.providers)
    return result("userspace.providers", "userspace", Status.PASS, f"providers: {found}")


def check_librdmacm(facts: Facts) -> CheckResult:
    if skipped := _skip_no_rdma(facts, "userspace.librdmacm", "userspace"):
        return skipped
    versions = facts.inventory.versions
    if versions is None:
        return result(
            "userspace.librdmacm",
            "userspace",
            Status.SKIP,
            "libraries are only checked on the live node",
        )
    if versions.librdmacm.path is None:
        return _missing(
            facts,
            "userspace.librdmacm",
            Status.WARN,
            "librdmacm is not installed (the vendor guides install it; RDMA CM "
            "tools and some plugins need it)",
        )
    return result(
        "userspace.librdmacm", "userspace", Status.PASS, f"librdmacm at {versions.librdmacm.path}"
    )


# ---------------------------------------------------------------- device nodes


def check_uverbs(facts: Facts) -> CheckResult:
    if skipped := _skip_no_rdma(facts, "devices.uverbs", "devices"):
        return skipped
    devices = {d.name: d for d, _ in selected_ports(facts)}
    if not devices:
        why = (
            "no device with a usable port is shown (see ports.state)"
            if unknown_ports(facts.inventory)
            else "NCCL_IB_HCA selects no device (see vars.hca)"
        )
        return result("devices.uverbs", "devices", Status.SKIP, why)
    if (
        all(d.uverbs is None for d in devices.values())
        and "netdevs" in facts.inventory.not_collected
    ):
        return result(
            "devices.uverbs",
            "devices",
            Status.SKIP,
            "device nodes are not known from a saved listing",
        )
    bad = [
        d
        for d in devices.values()
        if d.uverbs is None or not d.uverbs.present or d.uverbs.accessible is False
    ]
    if not bad:
        unknown = [d.name for d in devices.values() if d.uverbs and d.uverbs.accessible is None]
        note = " (permissions not known from a recorded tree)" if unknown else ""
        return result(
            "devices.uverbs",
            "devices",
            Status.PASS,
            f"uverbs nodes present for {', '.join(devices)}{note}",
        )
    missing = [d for d in bad if d.uverbs is not None and not d.uverbs.present]
    denied = [d for d in bad if d.uverbs is not None and d.uverbs.present]
    lines = []
    for d in bad:
        if d.uverbs is None:
            lines.append(f"{d.name}: no uverbs device at all (is ib_uverbs loaded?)")
        elif not d.uverbs.present:
            lines.append(f"{d.name}: {d.uverbs.path} missing in this container")
        else:
            lines.append(f"{d.name}: {d.uverbs.path} cannot be opened by this user")
    notes = []
    if missing:
        flags = " ".join(f"--device={d.uverbs.path}" for d in missing if d.uverbs is not None)
        notes.append(
            f"start the container with {flags} --device=/dev/infiniband/rdma_cm (docker run "
            "flags, as the ECS eRDMA guide does); in Kubernetes request the RDMA device "
            "plugin's resource"
        )
    if denied:
        notes.append(
            "give this user read and write access to the device nodes (the rdma group or a "
            "udev rule), or run the job as a user that has it"
        )
    return result(
        "devices.uverbs",
        "devices",
        Status.FAIL,
        f"{len(bad)} RDMA device(s) cannot be opened here: NCCL will not see them",
        *lines,
        # no uverbs device at all: the kernel module that creates them is not loaded
        fix="modprobe ib_uverbs" if any(d.uverbs is None for d in bad) else None,
        fix_note="; ".join(notes) or None,
    )


def check_rdma_cm(facts: Facts) -> CheckResult:
    if skipped := _skip_no_rdma(facts, "devices.rdma_cm", "devices"):
        return skipped
    if facts.dev_infiniband is None:
        return result("devices.rdma_cm", "devices", Status.SKIP, "/dev/infiniband not known here")
    if "rdma_cm" in facts.dev_infiniband:
        return result("devices.rdma_cm", "devices", Status.PASS, "/dev/infiniband/rdma_cm present")
    return result(
        "devices.rdma_cm",
        "devices",
        Status.WARN,
        "/dev/infiniband/rdma_cm is missing (the vendor guides pass it to containers)",
        fix_note="start the container with --device=/dev/infiniband/rdma_cm; on a host, "
        "modprobe rdma_ucm creates it",
    )


# ---------------------------------------------------------------- limits


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


# ---------------------------------------------------------------- GPUDirect RDMA


def _gpus_and_nics(facts: Facts) -> bool:
    return bool(facts.inventory.gpus and usable(facts))


def check_gpudirect(facts: Facts) -> CheckResult:
    if not _gpus_and_nics(facts):
        return result("gpudirect.module", "gpudirect", Status.SKIP, "needs GPUs and usable RDMA")
    g = facts.inventory.gpudirect
    if g is not None and (g.nvidia_peermem or g.nv_peer_mem):
        module = "nvidia_peermem" if g.nvidia_peermem else "nv_peer_mem"
        return result("gpudirect.module", "gpudirect", Status.PASS, f"{module} is loaded")
    if g is not None and g.dmabuf_possible:
        return result(
            "gpudirect.module",
            "gpudirect",
            Status.PASS,
            "dma-buf is possible (open GPU kernel module, Linux >= 5.12)",
        )
    return result(
        "gpudirect.module",
        "gpudirect",
        Status.WARN,
        "GPUDirect RDMA is not available: NCCL stages through host memory (no /GDRDMA in the log)",
        fix="modprobe nvidia_peermem",
        fix_note="or use the open GPU kernel module on Linux >= 5.12, which gives dma-buf",
    )


def check_acs(facts: Facts) -> CheckResult:
    if not _gpus_and_nics(facts):
        return result("gpudirect.acs", "gpudirect", Status.SKIP, "needs GPUs and usable RDMA")
    if not facts.acs:
        return result(
            "gpudirect.acs",
            "gpudirect",
            Status.SKIP,
            "PCI config space not readable here (root on the live node)",
        )
    on = sorted(bdf for bdf, redirect in facts.acs.items() if redirect)
    if on:
        return result(
            "gpudirect.acs",
            "gpudirect",
            Status.FAIL,
            f"ACS redirects peer-to-peer traffic on {len(on)} bridge(s) between GPUs "
            "and NICs: GPUDirect goes through the root complex (slow, can hang)",
            *on,
            fix=fix_lines(*(f"setpci -s {shlex.quote(bdf)} ECAP_ACS+0x6.w=0000" for bdf in on)),
            fix_note="as root; lost at reboot (or disable ACS in the BIOS)",
        )
    return result(
        "gpudirect.acs",
        "gpudirect",
        Status.PASS,
        f"no ACS redirect on the {len(facts.acs)} bridge(s) between GPUs and NICs",
    )


_CLOSE = (PcieRelation.SELF, PcieRelation.PIX, PcieRelation.PXB)


def check_locality(facts: Facts) -> CheckResult:
    """Each GPU has a usable NIC within PXB (NCCL_NET_GDR_LEVEL's default)."""
    if not _gpus_and_nics(facts):
        return result("gpudirect.locality", "gpudirect", Status.SKIP, "needs GPUs and usable RDMA")
    names = {d.name for d, _ in usable(facts)}
    far = []
    for gpu in facts.inventory.gpus:
        relations = [
            t.relation
            for t in facts.inventory.topology
            if t.gpu == gpu.index and t.rdma_device in names
        ]
        if relations and not any(r in _CLOSE for r in relations):
            best = min(relations, key=list(PcieRelation).index)
            far.append(f"GPU{gpu.index} ({gpu.pci_bus_id}): nearest usable NIC is {best.value}")
    if far:
        return result(
            "gpudirect.locality",
            "gpudirect",
            Status.WARN,
            f"{len(far)} GPU(s) have no NIC within PXB: NCCL disables GPUDirect RDMA "
            "for them by default (NCCL_NET_GDR_LEVEL=PXB)",
            *far,
            fix_note="place GPUs and NICs under the same PCIe switch, or raise "
            "NCCL_NET_GDR_LEVEL to PHB/SYS after measuring",
        )
    return result(
        "gpudirect.locality", "gpudirect", Status.PASS, "every GPU has a usable NIC within PXB"
    )


# ---------------------------------------------------------------- ports


def check_port_state(facts: Facts) -> CheckResult:
    if skipped := _skip_no_rdma(facts, "ports.state", "ports"):
        return skipped
    chosen = selected_ports(facts)
    if not chosen:
        unknown = unknown_ports(facts.inventory)
        if unknown:
            # a listing that does not show the ports: no verdict on a node whose RDMA
            # state is not known
            return result(
                "ports.state",
                "ports",
                Status.WARN,
                "the listing does not show whether any RDMA port is usable here",
                *unknown,
                fix_note="pass `ibv_devinfo -v` output with --from (for RoCE also "
                "`show_gids`), or run hpnet doctor on the node itself",
            )
        return result(
            "ports.state", "ports", Status.SKIP, "NCCL_IB_HCA selects no port (see vars.hca)"
        )
    bad: list[Port] = [(d, p) for d, p in chosen if p.state is not PortState.ACTIVE]
    lines = []
    for d, p in bad:
        if p.state is PortState.INIT:
            lines.append(f"{d.name}:{p.number}: INIT, link up but no subnet manager configured it")
        elif p.state is not PortState.UNKNOWN:
            phys = f" ({p.phys_state.value})" if p.phys_state else ""
            lines.append(f"{d.name}:{p.number}: {p.state.value}{phys}")
    lines = [line for line in lines if line]
    if not lines:
        return result("ports.state", "ports", Status.PASS, f"{len(chosen)} selected port(s) ACTIVE")
    active = [pair for pair in chosen if pair[1].state is PortState.ACTIVE]
    status = Status.FAIL if not active else Status.WARN
    return result(
        "ports.state",
        "ports",
        status,
        f"{len(lines)} selected port(s) not ACTIVE",
        *lines,
        fix_note="check the cable and switch port (ibstat); for INIT start a subnet "
        "manager (opensm); or leave the port out of NCCL_IB_HCA",
    )


def check_mixed_ports(facts: Facts) -> CheckResult:
    good = usable(facts)
    if len(good) < 2:
        return result("ports.mixed", "ports", Status.SKIP, "fewer than two usable ports")
    layers = {kind_word(d, p) for d, p in good}
    rates = {p.rate_gbps for _, p in good if p.rate_gbps}
    if len(layers) > 1 or len(rates) > 1:
        lines = [
            f"{d.name}:{p.number}: {kind_word(d, p)}, {p.rate or 'rate unknown'}" for d, p in good
        ]
        # keep the group of one kind and speed with the most bandwidth (ports x rate: a
        # ring over k NICs of rate r moves about k x r), the faster one on a tie
        groups: dict[tuple[str, float], list[str]] = {}
        for d, p in good:
            groups.setdefault((kind_word(d, p), p.rate_gbps or 0.0), []).append(
                f"{d.name}:{p.number}"
            )
        (kind, rate), keep = max(groups.items(), key=lambda g: (len(g[1]) * g[0][1], g[0][1]))
        return result(
            "ports.mixed",
            "ports",
            Status.WARN,
            "the selected ports mix link layers or rates: rings run at the slowest",
            *lines,
            fix=export("NCCL_IB_HCA", "=" + ",".join(keep)),
            fix_note=f"keeps the {len(keep)} {kind} port(s)"
            + (f" at {rate:g} Gb/s" if rate else "")
            + "; NCCL_IB_HCA's '=' matches these names exactly",
        )
    return result(
        "ports.mixed",
        "ports",
        Status.PASS,
        f"{len(good)} ports, all {layers.pop()}" + (f" at {rates.pop():g} Gb/s" if rates else ""),
    )
