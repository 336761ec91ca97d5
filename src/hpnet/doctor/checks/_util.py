"""Small helpers the checks share."""

from __future__ import annotations

from hpnet.doctor.model import CheckResult, Facts, Status
from hpnet.nccl.fill import port_kind, usable_ports
from hpnet.nccl.lists import parse_list
from hpnet.rdma.model import RdmaDevice, RdmaPort

__all__ = ["Port", "kind_word", "result", "selected_ports", "usable"]

Port = tuple[RdmaDevice, RdmaPort]


def result(
    id: str,
    area: str,
    status: Status,
    summary: str,
    *evidence: str,
    fix: str | None = None,
) -> CheckResult:
    return CheckResult(
        id=id, area=area, status=status, summary=summary, evidence=tuple(evidence), fix=fix
    )


def selected_ports(facts: Facts) -> list[Port]:
    """The ports NCCL would consider: those NCCL_IB_HCA selects (all if unset)."""
    value = facts.variables.get("NCCL_IB_HCA")
    try:
        spec = parse_list(value) if value else None
    except ValueError:
        spec = None
    return [
        (device, port)
        for device in facts.inventory.rdma_devices
        for port in device.ports
        if spec is None or spec.matches(device.name, port.number)
    ]


def usable(facts: Facts) -> list[Port]:
    """Selected ports a process here can use."""
    return [(d, p) for d, p in selected_ports(facts) if p in usable_ports(d)]


def kind_word(device: RdmaDevice, port: RdmaPort) -> str:
    return {"ib": "InfiniBand", "roce": "RoCE", "erdma": "eRDMA"}[port_kind(device, port)]
