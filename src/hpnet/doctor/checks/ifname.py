"""The doctor's check of NCCL_SOCKET_IFNAME against the interfaces that are up here."""

from __future__ import annotations

from hpnet.doctor.checks._util import (
    VARIABLES_AREA,
    edit_note,
    export,
    notes,
    result,
    unset,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.nccl.catalog import validate
from hpnet.nccl.lists import parse_list
from hpnet.nccl.rules import (
    interface_candidates,
    socket_family,
)
from hpnet.node.netdevs import NetKind
from hpnet.result import Status

__all__ = ["check_ifname"]

AREA = VARIABLES_AREA


def check_ifname(facts: Facts) -> CheckResult:
    """NCCL_SOCKET_IFNAME is read by NCCL and matches an interface that is up with an
    address, not only loopback."""
    value = facts.variables.get("NCCL_SOCKET_IFNAME")
    if value is None:
        return result(
            "vars.ifname",
            AREA,
            Status.SKIP,
            "NCCL_SOCKET_IFNAME is not set: NCCL picks (ib* first, not docker/lo)",
        )
    known = "netdevs" not in facts.inventory.not_collected
    addresses_known = "addresses" not in facts.inventory.not_collected
    family = socket_family(facts.variables.get("NCCL_SOCKET_FAMILY"))
    candidates = (
        interface_candidates(facts.inventory.netdevs, family, addresses_known=addresses_known)
        if known
        else []
    )
    best = export("NCCL_SOCKET_IFNAME", f"={candidates[0].name}") if candidates else None
    judged = validate("NCCL_SOCKET_IFNAME", value)
    if not judged.ok:
        return result(
            "vars.ifname",
            AREA,
            Status.FAIL if judged.severity == "fail" else Status.WARN,
            f"NCCL_SOCKET_IFNAME={value!r}: {judged.message}",
            fix=best or unset("NCCL_SOCKET_IFNAME"),
            fix_note=notes(
                None if best else "unset, NCCL picks the interface itself", edit_note(facts)
            ),
        )
    if not known:
        return result("vars.ifname", AREA, Status.SKIP, "interfaces are not known from this source")
    spec = parse_list(value)
    matched = [n.name for n in candidates if spec.matches(n.name)]
    loopback = [
        n.name
        for n in facts.inventory.netdevs
        if n.kind is NetKind.LOOPBACK and n.is_up and spec.matches(n.name)
    ]
    if loopback:
        # ncclOsFindInterfaces takes every running interface the list matches, lo
        # included, and the bootstrap uses the first (getifaddrs order: lo comes first)
        only = not matched
        return result(
            "vars.ifname",
            AREA,
            Status.WARN,
            f"NCCL_SOCKET_IFNAME={value} selects {', '.join(loopback)}"
            + (" only" if only else f" as well as {', '.join(matched)}")
            + ": other nodes cannot reach this one over loopback",
            "NCCL uses a loopback interface the list names; its bootstrap takes the first "
            "match in getifaddrs order, where lo comes first",
            fix=best,
            fix_note=notes(
                None if best else "name an interface other nodes can reach", edit_note(facts)
            ),
        )
    if not matched:
        present = [n for n in facts.inventory.netdevs if spec.matches(n.name)]
        if addresses_known:
            summary = f"NCCL_SOCKET_IFNAME={value} matches no interface that is up with an address"
        elif present:
            summary = (
                f"NCCL_SOCKET_IFNAME={value} matches {', '.join(n.name for n in present)}, "
                "which is not up"
            )
        else:
            summary = f"NCCL_SOCKET_IFNAME={value} matches no interface here"
        up = ", ".join(n.name for n in candidates) or "none"
        return result(
            "vars.ifname",
            AREA,
            Status.FAIL,
            summary,
            f"usable interfaces: {up}"
            + ("" if addresses_known else " (up; addresses are not recorded in this source)"),
            "NCCL fails: 'Bootstrap : no socket interface found'",
            fix=best,
            fix_note=notes(
                None if best else "bring an interface up or name one that is", edit_note(facts)
            ),
        )
    unchecked = "" if addresses_known else " (addresses are not recorded: not checked)"
    return result(
        "vars.ifname",
        AREA,
        Status.PASS,
        f"NCCL_SOCKET_IFNAME={value} matches {', '.join(matched)}{unchecked}",
    )
