"""Checks of the node: versions, RDMA user space, device nodes, limits, GPUDirect, ports."""

from __future__ import annotations

from hpnet.doctor.checks._util import Port, kind_word, result, selected_ports, usable
from hpnet.doctor.model import CheckResult, Facts, Status
from hpnet.nccl.fill import version_tuple
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
NOFILE_MIN = 65536


def _skip_no_rdma(facts: Facts, check_id: str, area: str) -> CheckResult | None:
    if not facts.inventory.rdma_devices:
        return result(check_id, area, Status.SKIP, "no RDMA device on this node")
    return None


def _install_fix(facts: Facts, what: str) -> str:
    profile = facts.profile
    if profile and profile.packages:
        package = profile.packages[0]
        command = "apt-get install -y" if package.manager == "apt" else "yum install -y"
        return f"{command} {' '.join(package.packages)} (the {profile.name} guide's packages)"
    return (
        f"install rdma-core's {what} (Debian/Ubuntu: apt-get install -y libibverbs1 "
        "ibverbs-providers librdmacm1; RHEL: yum install -y rdma-core libibverbs librdmacm)"
    )


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
            fix=f"install NCCL {req.nccl_min} or later",
        )
    if req.nccl_max and have[:2] > (version_tuple(req.nccl_max) or ())[:2]:
        return result(
            "versions.nccl",
            "versions",
            Status.FAIL,
            f"NCCL {facts.nccl_version} is newer than the {req.nccl_max}.x the "
            f"{facts.profile.name if facts.profile else ''} setup supports",
            fix=f"use NCCL {req.nccl_min}-{req.nccl_max}.x with this plugin",
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
            fix=f"upgrade the NVIDIA driver to one supporting CUDA {req.cuda_min}",
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
        return result(
            "userspace.libibverbs",
            "userspace",
            Status.FAIL,
            "libibverbs is not installed: NCCL cannot use RDMA "
            "('NET/IB : Failed to open libibverbs.so')",
            fix=_install_fix(facts, "libibverbs"),
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
        return result(
            "userspace.providers",
            "userspace",
            Status.FAIL,
            f"no verbs provider for {', '.join(missing)}: libibverbs will list no "
            "device ('NET/IB : No device found')",
            fix=_install_fix(facts, "providers (ibverbs-providers)"),
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
        return result(
            "userspace.librdmacm",
            "userspace",
            Status.WARN,
            "librdmacm is not installed (the vendor guides install it; RDMA CM "
            "tools and some plugins need it)",
            fix=_install_fix(facts, "librdmacm"),
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
        return result(
            "devices.uverbs", "devices", Status.SKIP, "NCCL_IB_HCA selects no device (see vars.hca)"
        )
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
    flags = " ".join(
        f"--device=/dev/infiniband/{d.uverbs.name}" for d in bad if d.uverbs is not None
    )
    lines = []
    for d in bad:
        if d.uverbs is None:
            lines.append(f"{d.name}: no uverbs device at all (is ib_uverbs loaded?)")
        elif not d.uverbs.present:
            lines.append(f"{d.name}: {d.uverbs.path} missing in this container")
        else:
            lines.append(f"{d.name}: {d.uverbs.path} cannot be opened by this user")
    return result(
        "devices.uverbs",
        "devices",
        Status.FAIL,
        f"{len(bad)} RDMA device(s) cannot be opened here: NCCL will not see them",
        *lines,
        fix=f"docker run {flags} --device=/dev/infiniband/rdma_cm ...; in Kubernetes "
        "request the RDMA device plugin's resource"
        if flags
        else "modprobe ib_uverbs",
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
        fix="docker run --device=/dev/infiniband/rdma_cm ...",
    )


# ---------------------------------------------------------------- limits


def check_memlock(facts: Facts) -> CheckResult:
    limits = facts.inventory.limits
    if limits is None:
        return result("limits.memlock", "limits", Status.SKIP, "process limits are live-only")
    if limits.memlock_unlimited:
        return result("limits.memlock", "limits", Status.PASS, "memlock is unlimited")
    soft = limits.memlock_soft_bytes
    severity = Status.FAIL if facts.inventory.rdma_devices else Status.WARN
    return result(
        "limits.memlock",
        "limits",
        severity,
        f"memlock is {soft} bytes: RDMA registration pins memory and fails "
        "('ibv_reg_mr failed' / 'Cannot allocate memory')",
        fix="docker run --ulimit memlock=-1 ...; on a host: ulimit -l unlimited "
        "(/etc/security/limits.conf: * - memlock unlimited); Kubernetes: IPC_LOCK",
    )


def check_shm(facts: Facts) -> CheckResult:
    limits = facts.inventory.limits
    if limits is None:
        return result("limits.shm", "limits", Status.SKIP, "/dev/shm is checked on the live node")
    if limits.shm_bytes is None:
        return result(
            "limits.shm",
            "limits",
            Status.FAIL,
            "/dev/shm is not mounted",
            fix="docker run --ipc=host (or --shm-size=8g) ...",
        )
    if limits.shm_bytes < SHM_MIN_BYTES:
        return result(
            "limits.shm",
            "limits",
            Status.WARN,
            f"/dev/shm is {limits.shm_bytes >> 20} MiB: NCCL's SHM transport and data "
            "loaders run out (Docker's default is 64 MiB)",
            fix="docker run --ipc=host or --shm-size=8g ...; Kubernetes: an emptyDir "
            "with medium: Memory on /dev/shm",
        )
    return result(
        "limits.shm", "limits", Status.PASS, f"/dev/shm is {limits.shm_bytes / GIB:.1f} GiB"
    )


def check_nofile(facts: Facts) -> CheckResult:
    limits = facts.inventory.limits
    if limits is None:
        return result("limits.nofile", "limits", Status.SKIP, "process limits are live-only")
    soft = limits.nofile_soft
    if soft == "unlimited" or (isinstance(soft, int) and soft >= NOFILE_MIN):
        return result("limits.nofile", "limits", Status.PASS, f"open files: {soft}")
    return result(
        "limits.nofile",
        "limits",
        Status.WARN,
        f"open files limited to {soft}: NCCL's sockets and proxies, and many ranks "
        "per node, need more",
        fix="ulimit -n 1048576 (docker: --ulimit nofile=1048576)",
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
        fix="modprobe nvidia_peermem (or use the open GPU "
        "kernel module on Linux >= 5.12 for dma-buf)",
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
            fix="; ".join(f"setpci -s {bdf} ECAP_ACS+0x6.w=0000" for bdf in on)
            + " (or disable ACS in the BIOS)",
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
            fix="place GPUs and NICs under the same PCIe switch, or raise "
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
        fix="check the cable and switch port (ibstat); for INIT start a subnet "
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
        return result(
            "ports.mixed",
            "ports",
            Status.WARN,
            "the selected ports mix link layers or rates: rings run at the slowest",
            *lines,
            fix="select one kind and speed with NCCL_IB_HCA (e.g. the InfiniBand ports only)",
        )
    return result(
        "ports.mixed",
        "ports",
        Status.PASS,
        f"{len(good)} ports, all {layers.pop()}" + (f" at {rates.pop():g} Gb/s" if rates else ""),
    )
