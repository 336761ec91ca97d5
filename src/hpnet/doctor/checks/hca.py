"""The doctor's checks of which RDMA ports NCCL gets: NCCL_IB_HCA, sockets forced by
NCCL_IB_DISABLE / NCCL_NET, and a profile's transport against the node."""

from __future__ import annotations

from hpnet.doctor.checks._util import (
    VARIABLES_AREA,
    all_usable,
    edit_note,
    export,
    fix_lines,
    notes,
    port_names,
    result,
    selected_ports,
    unset,
    usable,
    why_unusable,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.nccl.catalog import nccl_int, validate
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.nccl.rules import (
    family_word,
    gid_family,
    has_routable_gid,
    port_kind,
    transport_word,
)
from hpnet.result import Status

__all__ = ["check_hca", "check_ib_disabled", "check_transport"]

AREA = VARIABLES_AREA


def _hca_fix(facts: Facts) -> tuple[str | None, str | None]:
    """The value to set: the node's usable ports exactly, else sockets on purpose."""
    node_usable = all_usable(facts)
    if node_usable:
        exact = exact_list([(d.name, p.number) for d, p in node_usable])
        return export("NCCL_IB_HCA", exact), edit_note(facts)
    return (
        fix_lines(unset("NCCL_IB_HCA"), export("NCCL_IB_DISABLE", "1")),
        notes(
            "no usable RDMA port here: NCCL uses its Socket transport either way, and "
            "NCCL_IB_DISABLE=1 says so",
            edit_note(facts),
        ),
    )


def check_hca(facts: Facts) -> CheckResult:
    """NCCL_IB_HCA parses as NCCL reads it and selects devices that exist, have an
    ACTIVE port and are usable here."""
    value = facts.variables.get("NCCL_IB_HCA")
    if value is None:
        return result(
            "vars.hca", AREA, Status.SKIP, "NCCL_IB_HCA is not set: NCCL takes every ACTIVE port"
        )
    fix, note = _hca_fix(facts)
    judged = validate("NCCL_IB_HCA", value)
    if not judged.ok:
        return result(
            "vars.hca",
            AREA,
            Status.FAIL if judged.severity == "fail" else Status.WARN,
            f"NCCL_IB_HCA={value!r}: {judged.message}",
            *(f"also: {p}" for p in parse_list(value).problems[1:]),
            fix=fix,
            fix_note=note,
        )
    chosen = selected_ports(facts)
    good = usable(facts)
    if not chosen:
        devices = ", ".join(d.name for d in facts.inventory.rdma_devices) or "none"
        return result(
            "vars.hca",
            AREA,
            Status.FAIL,
            f"NCCL_IB_HCA={value} matches no RDMA device here",
            f"RDMA devices on this node: {devices}",
            fix=fix,
            fix_note=note,
        )
    if not good:
        return result(
            "vars.hca",
            AREA,
            Status.FAIL,
            f"NCCL_IB_HCA={value} selects no usable port: NCCL falls back to sockets",
            *(why_unusable(d, p) for d, p in chosen),
            fix=fix,
            fix_note=note,
        )
    skipped = [(d, p) for d, p in chosen if (d, p) not in good]
    # a port the value matches and NCCL skips (down, or not openable here) costs nothing
    # the value could change: NCCL opens the usable ones either way, as hpnet env judges
    # it; ports.state and devices.uverbs say what is wrong with the others
    said = f" (NCCL skips {port_names(skipped)}: not usable here)" if skipped else ""
    # a RoCE port whose GID table (known) has no routable RoCE v2 GID of the family:
    # NCCL opens it and its connections do not route (hpnet env leaves it out too)
    family = gid_family(
        facts.variables.get("NCCL_IB_ADDR_FAMILY"), facts.variables.get("NCCL_SOCKET_FAMILY")
    )
    unroutable = [
        (d, p)
        for d, p in good
        if port_kind(d, p) in ("roce", "erdma") and p.gids and not has_routable_gid(p, family)
    ]
    if unroutable:
        routable = [pair for pair in good if pair not in unroutable]
        return result(
            "vars.hca",
            AREA,
            Status.WARN,
            f"NCCL_IB_HCA={value} also selects {port_names(unroutable)}, which has no "
            f"routable RoCE v2 {family_word(family)} GID",
            f"routable: {port_names(routable)}",
            fix=export("NCCL_IB_HCA", exact_list([(d.name, p.number) for d, p in routable]))
            if routable
            else fix,
            fix_note=note,
        )
    return result(
        "vars.hca", AREA, Status.PASS, f"NCCL_IB_HCA={value} selects {port_names(good)}{said}"
    )


def check_ib_disabled(facts: Facts) -> CheckResult:
    """Sockets forced on a node whose RDMA is usable: 4-10x slower for nothing."""
    forced = []
    names = []
    disable = facts.variables.get("NCCL_IB_DISABLE")
    # ncclParamIbDisable (net_ib/init.cc): any non-zero strtoll value disables IB
    if disable is not None and nccl_int(disable, 0) != 0:
        forced.append(f"NCCL_IB_DISABLE={disable}")
        names.append("NCCL_IB_DISABLE")
    net = facts.variables.get("NCCL_NET")
    # ncclNetInit compares NCCL_NET with strcasecmp (src/plugin/net.cc)
    if net is not None and net.lower() == "socket":
        forced.append(f"NCCL_NET={net}")
        names.append("NCCL_NET")
    if not forced:
        return result("vars.ib_disabled", AREA, Status.PASS, "the IB transport is not disabled")
    usable_here = all_usable(facts)
    if not usable_here:
        return result(
            "vars.ib_disabled",
            AREA,
            Status.PASS,
            f"{' and '.join(forced)}: right, no usable RDMA port here",
        )
    return result(
        "vars.ib_disabled",
        AREA,
        Status.WARN,
        f"{' and '.join(forced)} although {port_names(usable_here)} are usable",
        "NCCL will use TCP sockets, typically 4-10x slower than RDMA",
        fix=unset(*names),
        fix_note=edit_note(facts),
    )


#: the transports a profile asks for, as rules.port_kind words
_PROFILE_KINDS = {"ib": ("ib",), "roce": ("roce",), "erdma": ("erdma",), "rdma": ("ib", "roce")}


def check_transport(facts: Facts) -> CheckResult:
    """A profile that needs RDMA, on a node where no RDMA port is usable: NCCL falls
    back to sockets without a word (``NET/IB : No device found``)."""
    profile = facts.profile
    kinds = _PROFILE_KINDS.get(profile.transport) if profile else None
    if profile is None or kinds is None:
        return result("vars.transport", AREA, Status.SKIP, "no profile that requires RDMA")
    word = " or ".join(transport_word(k) for k in kinds)
    ports = [(d, p) for d, p in all_usable(facts) if port_kind(d, p) in kinds]
    if ports:
        return result(
            "vars.transport",
            AREA,
            Status.PASS,
            f"{profile.name} needs {word}: {port_names(ports)} usable here",
        )
    devices = facts.inventory.rdma_devices
    return result(
        "vars.transport",
        AREA,
        Status.WARN,
        f"{profile.name} needs {word}, but no {word} port is usable here: NCCL will fall "
        "back to its Socket transport, 4-10x slower",
        *(why_unusable(d, p) for d in devices for p in d.ports),
        *(() if devices else ("no RDMA device on this node",)),
        fix_note="run on a node with usable RDMA (see devices.uverbs and ports.state for "
        "why none is), or use --profile socket if sockets are intended",
    )
