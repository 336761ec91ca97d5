"""Small helpers the checks share."""

from __future__ import annotations

import shlex

from hpnet.doctor.model import CheckResult, Facts
from hpnet.nccl.decision import NodeDecisions
from hpnet.nccl.lists import parse_list
from hpnet.nccl.rules import (
    TRANSPORT_WORDS,
    Port,
    is_variable_name,
    port_kind,
    transport_word,
    usable_ports,
)
from hpnet.rdma.model import RdmaDevice, RdmaPort
from hpnet.result import Status

__all__ = [
    "VARIABLES_AREA",
    "Port",
    "all_usable",
    "decisions",
    "edit_note",
    "export",
    "fix_lines",
    "kind_word",
    "notes",
    "port_names",
    "result",
    "selected_ports",
    "skip_no_rdma",
    "unset",
    "usable",
    "valid_name",
    "why_unusable",
]

#: whether a name is one a POSIX shell can export and unset: anything else never
#: reaches a fix (the one definition, :data:`hpnet.nccl.rules.VARIABLE_NAME`)
valid_name = is_variable_name


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
    """The ports NCCL's IB transport would consider: those NCCL_IB_HCA selects (all if
    unset), less those whose link layer it never takes (EFA's, reported unspecified by
    its driver whatever a listing prints: net_ib's init skips a port that is neither
    InfiniBand nor Ethernet). A link layer not shown stays in: unknown, not excluded."""
    value = facts.variables.get("NCCL_IB_HCA")
    spec = parse_list(value) if value is not None else None
    return [
        (device, port)
        for device in facts.inventory.rdma_devices
        for port in device.ports
        if (spec is None or spec.matches(device.name, port.number))
        and device.driver != "efa"
        and port.link_layer in (None, "InfiniBand", "Ethernet")
    ]


def usable(facts: Facts) -> list[Port]:
    """Selected ports a process here can use."""
    return [(d, p) for d, p in selected_ports(facts) if p in usable_ports(d)]


def kind_word(device: RdmaDevice, port: RdmaPort) -> str:
    """The transport word of a port; a port whose link layer is neither InfiniBand nor
    Ethernet (EFA's ``Unknown``) or not shown has none (NCCL's IB transport skips it)."""
    kind = port_kind(device, port)
    return transport_word(kind) if kind in TRANSPORT_WORDS else "link layer unknown"


#: the area the checks of NCCL variables report under
VARIABLES_AREA = "variables"


def edit_note(facts: Facts) -> str | None:
    """Where else the fix must go: the env file the variables came from."""
    if facts.env_file is None:
        return None
    return f"the commands fix the current shell; edit {facts.env_file} the same way"


def notes(*lines: str | None) -> str | None:
    """Notes joined with ``; `` (None and empty ones dropped); None when there are none."""
    kept = [line for line in lines if line]
    return "; ".join(kept) if kept else None


def all_usable(facts: Facts) -> list[Port]:
    """Every port on the node a process here can use, whatever NCCL_IB_HCA says."""
    return [(d, p) for d in facts.inventory.rdma_devices for p in usable_ports(d)]


def port_names(ports: list[Port]) -> str:
    return ", ".join(f"{d.name}:{p.number}" for d, p in ports) or "none"


def why_unusable(device: RdmaDevice, port: RdmaPort) -> str:
    if device.uverbs is not None and not device.uverbs.present:
        return f"{device.name}:{port.number}: no {device.uverbs.path} in this container"
    if device.uverbs is not None and device.uverbs.accessible is False:
        return f"{device.name}:{port.number}: {device.uverbs.path} cannot be opened"
    return f"{device.name}:{port.number}: port {port.state.value}"


def skip_no_rdma(facts: Facts, check_id: str, area: str) -> CheckResult | None:
    """A SKIP for a check of RDMA on a node without RDMA devices, or under a profile
    that means sockets (``--profile socket``: NCCL is not to open an RDMA device, and
    hpnet env says the same), else None."""
    if not facts.inventory.rdma_devices:
        return result(check_id, area, Status.SKIP, "no RDMA device on this node")
    if facts.profile is not None and facts.profile.transport == "socket":
        return result(
            check_id, area, Status.SKIP, f"profile {facts.profile.name}: NCCL is to use sockets"
        )
    return None


_DECIDED: dict[int, tuple[Facts, NodeDecisions]] = {}


def decisions(facts: Facts) -> NodeDecisions:
    """The node's decisions for the variables under test (:func:`hpnet.nccl.fill.decide`,
    the judge ``hpnet env`` renders too), once per facts. A value equal to the profile's
    preset is the profile's (``hpnet env`` replaces such a value where it does not fit,
    and keeps the environment's)."""
    from hpnet.nccl.fill import decide  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    cached = _DECIDED.get(id(facts))
    if cached is not None and cached[0] is facts:
        return cached[1]
    profile = facts.profile or get_profile("auto")
    presets = {s.name: s.value for s in profile.settings} if facts.profile else {}
    current = {
        name: (value, "profile" if presets.get(name) == value else "environment")
        for name, value in facts.variables.items()
    }
    decided = decide(profile, facts.inventory, current, facts.nccl_version)
    if len(_DECIDED) > 8:
        _DECIDED.clear()
    _DECIDED[id(facts)] = (facts, decided)
    return decided
