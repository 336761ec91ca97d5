"""How much each kind of problem weighs: the one table behind `hpnet check`'s order,
for the node view and the cluster view alike (hpnet.check.judge).

Impact ranks (lower is worse; hpnet.check.model): 1 keeps traffic off RDMA
altogether (4-10x); 2 stops or misroutes jobs; 3 leaves a setting the user meant
without effect, or bandwidth far below the link; 4 costs some bandwidth; 5 warns.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CHECK_IMPACT",
    "DOCTOR_BY_STATUS",
    "DOCTOR_IMPACT",
    "VERIFY_IMPACT",
    "doctor_impact",
    "verify_impact",
]

#: the doctor's checks whose findings weigh more (or less) than their status says
#: (ids of hpnet.doctor.registry.CHECKS; a test holds the two together)
DOCTOR_IMPACT: Final[dict[str, int]] = {
    "vars.ib_disabled": 1,
    "vars.net": 1,
    "vars.transport": 1,
    "devices.uverbs": 1,
    "devices.rdma_cm": 2,
    "vars.hca": 2,
    "vars.gid": 2,
    "vars.ifname": 1,  # a bootstrap that finds no interface: NCCL never starts
    "vars.syntax": 2,
    "ports.state": 2,
    "limits.memlock": 2,
    "versions.nccl": 2,
    "versions.cuda": 2,
    "versions.known_bad": 2,
    "vars.unknown": 3,
    "gpudirect.module": 4,
    "gpudirect.acs": 4,
    "gpudirect.locality": 4,
    "ports.mixed": 4,
}
#: the doctor's checks that weigh what their status says: FAIL 2, WARN 5
DOCTOR_BY_STATUS: Final[frozenset[str]] = frozenset(
    {
        "vars.debug",
        "userspace.libibverbs",
        "userspace.providers",
        "userspace.librdmacm",
        "limits.shm",
        "limits.nofile",
    }
)
#: an error finding of NCCL's log (hpnet verify's finding ids) -> impact; others 2
VERIFY_IMPACT: Final[dict[str, int]] = {
    "socket-fallback": 1,
}
#: the check's own findings, by their source's kind
CHECK_IMPACT: Final[dict[str, int]] = {
    "hardware:gpu": 1,  # no GPU: NCCL has nothing to run on
    "hardware:rdma": 1,  # no RDMA network: sockets between nodes
    "verify:intent": 1,  # the log shows another network than the one intended
    "bench:failed": 2,
    "bench:wrong": 2,  # wrong results
    "bandwidth:FAIL": 3,
    "bandwidth:WARN": 4,
    "cluster:env": 2,
    "cluster:versions": 2,
    "cluster:slow-node": 3,
    "cluster:slow-link": 3,
}


def doctor_impact(check_id: str, status: str) -> int:
    """A doctor WARN or FAIL's impact.

    >>> doctor_impact("vars.ib_disabled", "WARN"), doctor_impact("limits.shm", "WARN")
    (1, 5)
    """
    return DOCTOR_IMPACT.get(check_id, 2 if status == "FAIL" else 5)


def verify_impact(finding_id: str) -> int:
    """An error finding of NCCL's log's impact.

    >>> verify_impact("socket-fallback"), verify_impact("nccl-failure")
    (1, 2)
    """
    return VERIFY_IMPACT.get(finding_id, 2)
