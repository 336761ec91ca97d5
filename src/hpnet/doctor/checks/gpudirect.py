"""Checks of GPUDirect RDMA: the kernel module, PCIe ACS, and GPU <-> NIC locality."""

from __future__ import annotations

import shlex

from hpnet.doctor.checks._util import (
    fix_lines,
    result,
    usable,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.node.topology import PcieRelation
from hpnet.result import Status

__all__ = ["check_acs", "check_gpudirect", "check_locality"]


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
