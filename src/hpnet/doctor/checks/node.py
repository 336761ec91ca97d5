"""Checks of the node: versions, RDMA user space and device nodes (limits, GPUDirect
and ports have modules of their own: :mod:`~hpnet.doctor.checks.limits`,
:mod:`~hpnet.doctor.checks.gpudirect`, :mod:`~hpnet.doctor.checks.ports`)."""

from __future__ import annotations

from hpnet.doctor.checks._util import (
    result,
    selected_ports,
    skip_no_rdma,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.doctor.packages import install_fix
from hpnet.nccl.known_bad import KnownBad, affecting, conditions_met
from hpnet.nccl.rules import version_tuple
from hpnet.nccl.shown import unknown_ports
from hpnet.result import Status

__all__ = [
    "check_cuda_version",
    "check_known_bad",
    "check_libibverbs",
    "check_librdmacm",
    "check_nccl_version",
    "check_providers",
    "check_rdma_cm",
    "check_uverbs",
]


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


def check_known_bad(facts: Facts) -> CheckResult:
    """The node's NCCL against the cited known-bug table (:mod:`hpnet.nccl.known_bad`).

    A node cannot know the job's node count or network, so those conditions count as
    possible; a workaround already in the settings (``NCCL_PXN_DISABLE=1``) passes, and a
    bug only an outside action triggers (a RAS query) is noted without a warning.
    """
    bugs = affecting(facts.nccl_version)
    if not facts.nccl_version:
        return result(
            "versions.known_bad", "versions", Status.SKIP, "the NCCL version is not known here"
        )
    shows = frozenset({"ras-enabled", "unknown:multi-node", "unknown:net-ib"})
    warn: list[tuple[KnownBad, str]] = []
    noted: list[tuple[KnownBad, str]] = []
    for bug in bugs:
        _, worked_around = conditions_met(bug, env=facts.variables, shows=shows)
        line = f"{bug.id}: {bug.what} ({'; '.join(bug.citations)})"
        (noted if worked_around or bug.trigger else warn).append((bug, line))
    if warn:
        fixes = [
            f"{b.fix}, or set " + " ".join(f"{k}={v}" for k, v in b.workaround.items())
            for b, _ in warn
        ]
        return result(
            "versions.known_bad",
            "versions",
            Status.WARN,
            f"NCCL {facts.nccl_version} has {len(warn)} known bug(s): "
            + "; ".join(b.what for b, _ in warn),
            *(line for _, line in warn + noted),
            fix_note="; ".join(fixes),
            fix=" ".join(f"export {k}={v}" for b, _ in warn for k, v in b.workaround.items()),
        )
    summary = f"NCCL {facts.nccl_version}: no known bug that applies here"
    if noted:
        summary += " (noted: " + ", ".join(b.id for b, _ in noted) + ")"
    return result(
        "versions.known_bad", "versions", Status.PASS, summary, *(line for _, line in noted)
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
    if skipped := skip_no_rdma(facts, "userspace.libibverbs", "userspace"):
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
    if skipped := skip_no_rdma(facts, "userspace.providers", "userspace"):
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
    if skipped := skip_no_rdma(facts, "userspace.librdmacm", "userspace"):
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
    if skipped := skip_no_rdma(facts, "devices.uverbs", "devices"):
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
    if skipped := skip_no_rdma(facts, "devices.rdma_cm", "devices"):
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
