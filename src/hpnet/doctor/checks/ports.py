"""Checks of the RDMA ports NCCL_IB_HCA selects: their state, and a mix of link layers
or rates."""

from __future__ import annotations

from hpnet.doctor.checks._util import (
    Port,
    decisions,
    kind_word,
    result,
    selected_ports,
    skip_no_rdma,
    usable,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.nccl.shown import unknown_port_notes, unknown_ports
from hpnet.rdma.model import PhysState, PortState, RdmaPort
from hpnet.result import Status

__all__ = ["check_mixed_ports", "check_port_state"]


def _physical(port: RdmaPort) -> str:
    """A port's physical state and what it says of why the port is not up (IBTA
    PortPhysicalState; a RoCE port's follows its netdev's carrier)."""
    phys = port.phys_state
    if phys is None:
        return ""
    netdev = port.netdev or "<netdev>"
    off = {
        "Ethernet": f"its netdev is down (`ip link set {netdev} up`)",
        "InfiniBand": "by the subnet manager, a switch, or `ibportstate`",
    }.get(
        port.link_layer or "",
        f"RoCE: its netdev is down (`ip link set {netdev} up`); InfiniBand: the subnet manager, "
        "a switch or `ibportstate` disabled it",
    )
    means = {
        PhysState.POLLING: "no link partner answers: the cable, the switch port or the peer's "
        "port is down",
        PhysState.DISABLED: f"the port is switched off: {off}",
        PhysState.LINK_ERROR_RECOVERY: "the link is retraining after errors: a bad cable or "
        "transceiver",
    }.get(phys)
    return f" ({phys.value}: {means})" if means else f" ({phys.value})"


def check_port_state(facts: Facts) -> CheckResult:
    if skipped := skip_no_rdma(facts, "ports.state", "ports"):
        return skipped
    chosen = selected_ports(facts)
    if not chosen:
        unknown = unknown_ports(facts.inventory)
        if unknown:
            # a listing that does not show the ports: no verdict on a node whose RDMA
            # state is not known
            return result(
                "ports.state",
                "ports",
                Status.WARN,
                "the listing does not show whether any RDMA port is usable here",
                *unknown,
                fix_note="pass `ibv_devinfo -v` output with --from (for RoCE also "
                "`show_gids`), or run hpnet doctor on the node itself",
            )
        return result(
            "ports.state", "ports", Status.SKIP, "NCCL_IB_HCA selects no port (see vars.hca)"
        )
    shown_active = {f"{d.name}:{p.number}" for d, p in chosen if p.state is PortState.ACTIVE}
    # what the listing leaves unknown about a selected ACTIVE port (its GIDs, its link
    # layer): using it is not shown either, as hpnet env says (no PASS on it)
    untold = [said for port, said in unknown_port_notes(facts.inventory) if port in shown_active]
    bad: list[Port] = [(d, p) for d, p in chosen if p.state is not PortState.ACTIVE]
    lines = []
    for d, p in bad:
        if p.state is PortState.INIT:
            lines.append(f"{d.name}:{p.number}: INIT, link up but no subnet manager configured it")
        elif p.state is not PortState.UNKNOWN:
            lines.append(f"{d.name}:{p.number}: {p.state.value}{_physical(p)}")
    unshown = [f"{d.name}:{p.number}" for d, p in bad if p.state is PortState.UNKNOWN]
    if unshown:
        # a listing that does not show a port's state: never a PASS on it, nor a FAIL
        # for the others (an unshown one may be ACTIVE): the state is unknown
        num_active = len([1 for _, p in chosen if p.state is PortState.ACTIVE])
        return result(
            "ports.state",
            "ports",
            Status.WARN,
            f"the state of {len(unshown)} selected port(s) is not shown: "
            + ", ".join(unshown[:8])
            + (f" and {len(unshown) - 8} more" if len(unshown) > 8 else ""),
            *([f"{num_active} other selected port(s) ACTIVE"] if num_active else []),
            *lines,
            fix_note="pass `ibv_devinfo` or `ibstat` output with --from (they show each "
            "port's state), or run hpnet doctor on the node itself",
        )
    if not lines and untold:
        return result(
            "ports.state",
            "ports",
            Status.WARN,
            f"{len(chosen)} selected port(s) ACTIVE, but the listing does not show what "
            "using them takes",
            *untold,
            fix_note="pass `show_gids` or `ibv_devinfo -v` output with --from, or run hpnet "
            "doctor on the node itself",
        )
    if not lines:
        return result("ports.state", "ports", Status.PASS, f"{len(chosen)} selected port(s) ACTIVE")
    active = [pair for pair in chosen if pair[1].state is PortState.ACTIVE]
    if active and facts.variables.get("NCCL_IB_HCA") is None:
        # NCCL_IB_HCA unset: NCCL opens every ACTIVE port and skips the others
        # (net_ib.cc's init: portAttr.state != IBV_PORT_ACTIVE -> continue); a port down
        # on a node is still worth a look (a cable, a switch port), not a selection error
        return result(
            "ports.state",
            "ports",
            Status.WARN,
            f"{len(active)} port(s) ACTIVE; NCCL skips the {len(lines)} that are not",
            *lines,
            fix_note="if these ports should carry traffic, check the cable and switch port "
            "(ibstat); if they are not meant for NCCL, nothing to do",
        )
    status = Status.FAIL if not active else Status.WARN
    return result(
        "ports.state",
        "ports",
        status,
        f"{len(lines)} selected port(s) not ACTIVE",
        *lines,
        fix_note="what each port's physical state says: a cable or switch port (Polling), "
        "a port switched off (Disabled); for INIT start a subnet manager (opensm); or leave "
        "the port out of NCCL_IB_HCA",
    )


def check_mixed_ports(facts: Facts) -> CheckResult:
    """The ports NCCL is to open share one link layer and one rate (a ring runs at its
    slowest port). vars.hca judges the selection (a mix is its WARN, and its fix); this
    check says what the ports are once they do not mix."""
    decided = decisions(facts).hca
    if decided is not None and decided.flagged:
        return result("ports.mixed", "ports", Status.SKIP, "vars.hca judges the selection")
    good = usable(facts)
    if len(good) < 2:
        return result("ports.mixed", "ports", Status.SKIP, "fewer than two usable ports")
    layers = sorted({kind_word(d, p) for d, p in good})
    rates = sorted({p.rate_gbps for _, p in good if p.rate_gbps})
    return result(
        "ports.mixed",
        "ports",
        Status.PASS,
        f"{len(good)} ports, all {' and '.join(layers)}"
        + (f" at {' and '.join(f'{r:g}' for r in rates)} Gb/s" if rates else ""),
    )
