"""Small helpers the checks share."""

from __future__ import annotations

import re
import shlex

from hpnet.doctor.model import CheckResult, Facts, Status
from hpnet.nccl.fill import port_kind, usable_ports
from hpnet.nccl.lists import parse_list
from hpnet.rdma.model import RdmaDevice, RdmaPort

__all__ = [
    "Port",
    "export",
    "fix_lines",
    "kind_word",
    "result",
    "selected_ports",
    "unset",
    "usable",
    "valid_name",
]

Port = tuple[RdmaDevice, RdmaPort]

#: a name a POSIX shell can export and unset: anything else never reaches a fix
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def valid_name(name: str) -> bool:
    """Whether ``name`` is a shell variable name (``[A-Za-z_][A-Za-z0-9_]*``).

    >>> valid_name("NCCL_IB_HCA"), valid_name("NCCL_X$(id)")
    (True, False)
    """
    return _SHELL_NAME.fullmatch(name) is not None


def export(name: str, value: str) -> str:
    """``export NAME=VALUE`` with the value shell-quoted (``=mlx5_0:1`` included: zsh
    would expand an unquoted leading ``=``).

    >>> export("NCCL_IB_HCA", "=mlx5_0:1"), export("NCCL_IB_TIMEOUT", "22")
    ("export NCCL_IB_HCA='=mlx5_0:1'", 'export NCCL_IB_TIMEOUT=22')
    """
    _check_names(name)
    quoted = shlex.quote(value)
    if quoted == value and value[:1] in "=~":
        quoted = f"'{value}'"  # shlex leaves these bare; zsh would expand them
    return f"export {name}={quoted}"


def unset(*names: str) -> str:
    _check_names(*names)
    return "unset " + " ".join(names)


def _check_names(*names: str) -> None:
    bad = [name for name in names if not valid_name(name)]
    if bad:  # a programmer error: callers filter names before building a fix
        raise ValueError(f"not a shell variable name: {bad[0]!r}")


def fix_lines(*lines: str | None) -> str | None:
    """Commands, one per line (None and empty lines dropped); None when there are none."""
    kept = [line for line in lines if line]
    return "\n".join(kept) if kept else None


def result(
    id: str,
    area: str,
    status: Status,
    summary: str,
    *evidence: str,
    fix: str | None = None,
    fix_note: str | None = None,
) -> CheckResult:
    return CheckResult(
        id=id,
        area=area,
        status=status,
        summary=summary,
        evidence=tuple(evidence),
        fix=fix,
        fix_note=fix_note,
    )


def selected_ports(facts: Facts) -> list[Port]:
    """The ports NCCL would consider: those NCCL_IB_HCA selects (all if unset)."""
    value = facts.variables.get("NCCL_IB_HCA")
    spec = parse_list(value) if value is not None else None
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
