"""The checks, in report order: one literal table, no registration by import."""

from __future__ import annotations

from collections.abc import Callable

from hpnet.doctor.checks import node, variables
from hpnet.doctor.model import CheckResult, Facts

__all__ = ["CHECKS", "run_checks"]

Check = Callable[[Facts], CheckResult]

CHECKS: dict[str, Check] = {
    "vars.syntax": variables.check_syntax,
    "vars.unknown": variables.check_unknown,
    "vars.hca": variables.check_hca,
    "vars.gid": variables.check_gid,
    "vars.ifname": variables.check_ifname,
    "vars.net": variables.check_net,
    "vars.ib_disabled": variables.check_ib_disabled,
    "vars.transport": variables.check_transport,
    "vars.debug": variables.check_debug,
    "versions.nccl": node.check_nccl_version,
    "versions.cuda": node.check_cuda_version,
    "userspace.libibverbs": node.check_libibverbs,
    "userspace.providers": node.check_providers,
    "userspace.librdmacm": node.check_librdmacm,
    "devices.uverbs": node.check_uverbs,
    "devices.rdma_cm": node.check_rdma_cm,
    "limits.memlock": node.check_memlock,
    "limits.shm": node.check_shm,
    "limits.nofile": node.check_nofile,
    "gpudirect.module": node.check_gpudirect,
    "gpudirect.acs": node.check_acs,
    "gpudirect.locality": node.check_locality,
    "ports.state": node.check_port_state,
    "ports.mixed": node.check_mixed_ports,
}


def run_checks(facts: Facts) -> tuple[CheckResult, ...]:
    """Every check over the same facts (pure)."""
    return tuple(check(facts) for check in CHECKS.values())
