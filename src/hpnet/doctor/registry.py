"""The checks, in report order: one literal table, no registration by import."""

from __future__ import annotations

from collections.abc import Callable

from hpnet.doctor.checks import gpudirect, hca, limits, node, ports, variables
from hpnet.doctor.model import CheckResult, Facts

__all__ = ["CHECKS", "run_checks"]

Check = Callable[[Facts], CheckResult]

CHECKS: dict[str, Check] = {
    "vars.syntax": variables.check_syntax,
    "vars.unknown": variables.check_unknown,
    "vars.hca": hca.check_hca,
    "vars.gid": hca.check_gid,
    "vars.ifname": hca.check_ifname,
    "vars.net": variables.check_net,
    "vars.ib_disabled": hca.check_ib_disabled,
    "vars.transport": hca.check_transport,
    "vars.debug": variables.check_debug,
    "versions.nccl": node.check_nccl_version,
    "versions.known_bad": node.check_known_bad,
    "versions.cuda": node.check_cuda_version,
    "userspace.libibverbs": node.check_libibverbs,
    "userspace.providers": node.check_providers,
    "userspace.librdmacm": node.check_librdmacm,
    "devices.uverbs": node.check_uverbs,
    "devices.rdma_cm": node.check_rdma_cm,
    "limits.memlock": limits.check_memlock,
    "limits.shm": limits.check_shm,
    "limits.nofile": limits.check_nofile,
    "gpudirect.module": gpudirect.check_gpudirect,
    "gpudirect.acs": gpudirect.check_acs,
    "gpudirect.locality": gpudirect.check_locality,
    "ports.state": ports.check_port_state,
    "ports.mixed": ports.check_mixed_ports,
}


def run_checks(facts: Facts) -> tuple[CheckResult, ...]:
    """Every check over the same facts (pure)."""
    return tuple(check(facts) for check in CHECKS.values())
