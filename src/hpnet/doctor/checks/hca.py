"""The doctor's checks of the node-dependent decisions: NCCL_IB_HCA, the RoCE GID index,
the socket interface, the transport and NCCL_IB_DISABLE / NCCL_NET=Socket.

The doctor judges none of them itself: :func:`hpnet.nccl.fill.decide` does, once, for
``hpnet env``, ``hpnet doctor`` and ``hpnet check`` alike; these checks render its
:class:`~hpnet.nccl.decision.Decision` (a value that works: PASS; one that does not:
WARN or FAIL with the node's answer as the fix; one the source cannot judge, or a
decision that does not arise here: SKIP, naming what would tell).
"""

from __future__ import annotations

from hpnet.doctor.checks._util import (
    VARIABLES_AREA,
    decisions,
    edit_note,
    export,
    fix_lines,
    notes,
    result,
    unset,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.nccl.decision import Decision, Judged
from hpnet.nccl.rules import transport_word
from hpnet.result import Status

__all__ = ["check_gid", "check_hca", "check_ib_disabled", "check_ifname", "check_transport"]

AREA = VARIABLES_AREA

_STATUS = {
    Judged.OK: Status.PASS,
    Judged.WARN: Status.WARN,
    Judged.FAIL: Status.FAIL,
    # what the source does not show about the RDMA ports the job uses is said, never
    # skipped (it is no PASS either); the socket interface NCCL picks itself is a SKIP
    Judged.UNKNOWN: Status.WARN,
    Judged.NA: Status.SKIP,
}


def _status(check_id: str, decision: Decision) -> Status:
    if decision.judged is Judged.UNKNOWN and check_id == "vars.ifname":
        return Status.SKIP
    return _STATUS[decision.judged]


def render(check_id: str, decision: Decision, facts: Facts, *extra: str | None) -> CheckResult:
    """One decision as a check: the node's answer is the fix (``extra``: more fix lines)."""
    status = _status(check_id, decision)
    evidence = list(decision.evidence)
    evidence += [f"not shown: {said}" for said in decision.unknown]
    fix = None
    if decision.flagged:
        own = None
        if decision.changes:
            own = (
                export(decision.variable, decision.answer)
                if decision.answer is not None
                else unset(decision.variable)
            )
        fix = fix_lines(own, *extra) if own or any(extra) else None
    note = decision.note
    if decision.flagged and not decision.answer_known and not note:
        note = "no value is known to work here"
    if decision.judged is Judged.UNKNOWN and decision.unknown:
        note = "pass the listing that shows it with --from, or run hpnet doctor on the node itself"
    return result(
        check_id,
        AREA,
        status,
        decision.summary,
        *evidence,
        fix=fix,
        fix_note=notes(note, edit_note(facts) if fix else None),
    )


def check_hca(facts: Facts) -> CheckResult:
    """NCCL_IB_HCA selects the node's usable ports of one transport and rate."""
    decided = decisions(facts)
    if decided.hca is None:
        why = {
            "socket": "no usable RDMA port here: NCCL uses its Socket transport",
            "unknown": "whether any RDMA port is usable is not shown (see vars.transport)",
        }.get(decided.transport) or (
            f"no RDMA device here, so no {transport_word(decided.transport)} port to select: "
            "the devices are what is missing (see vars.transport)"
        )
        value = facts.variables.get("NCCL_IB_HCA")
        said = (
            "NCCL_IB_HCA is not set"
            if not value
            else f"NCCL_IB_HCA={value} does not matter"
            if decided.transport in ("socket", "unknown")
            else f"NCCL_IB_HCA={value} is not judged"
        )
        return result("vars.hca", AREA, Status.SKIP, f"{said}: {why}")
    extra = None
    if decided.hca.answer is None and decided.hca.answer_known and decided.hca.given:
        extra = export("NCCL_IB_DISABLE", "1")
    return render("vars.hca", decided.hca, facts, extra)


def check_gid(facts: Facts) -> CheckResult:
    """The GID NCCL uses on every RoCE port it opens is RoCE v2, routable and in this
    namespace."""
    decided = decisions(facts)
    if decided.gid is None:
        value = facts.variables.get("NCCL_IB_GID_INDEX")
        said = f"NCCL_IB_GID_INDEX={value} is not used" if value else "NCCL_IB_GID_INDEX is not set"
        why = (
            "whether the ports are RoCE is not shown (see vars.transport)"
            if decisions(facts).transport == "unknown"
            else "no RoCE/eRDMA transport here (InfiniBand ports are routed by LID)"
        )
        return result("vars.gid", AREA, Status.SKIP, f"{said}: {why}")
    extra = None
    hca = decided.hca
    if (
        decided.gid.flagged
        and not decided.gid.changes
        and hca is not None
        and hca.changes
        and hca.answer is not None
    ):
        # the index is right on the ports NCCL is to open, wrong on others it opens now:
        # the fix is vars.hca's (the same answer)
        extra = export("NCCL_IB_HCA", hca.answer)
    return render("vars.gid", decided.gid, facts, extra)


def check_ifname(facts: Facts) -> CheckResult:
    """NCCL_SOCKET_IFNAME is read by NCCL and matches an interface that is up with an
    address, not only loopback."""
    decided = decisions(facts).ifname
    assert decided is not None  # noqa: S101 - decide() always judges the interface
    return render("vars.ifname", decided, facts)


def check_transport(facts: Facts) -> CheckResult:
    """The transport the profile needs (or, with auto, RDMA the node has) is usable here."""
    decided = decisions(facts).transport_decision
    status = _status("vars.transport", decided)
    if decided.judged is Judged.UNKNOWN:
        note: str | None = (
            "pass the listing that shows it with --from, or run hpnet doctor on the node itself"
        )
    else:
        note = decided.note
    # the transport follows from the node (and the profile): its fix is a fact to
    # change (devices.uverbs, ports.state), never a variable
    return result(
        "vars.transport",
        AREA,
        status,
        decided.summary,
        *decided.evidence,
        *(f"not shown: {said}" for said in decided.unknown),
        fix_note=note if status is not Status.PASS else None,
    )


def check_ib_disabled(facts: Facts) -> CheckResult:
    """Sockets forced on a node whose RDMA is usable: 4-10x slower for nothing."""
    decided = decisions(facts).disabled
    if not decided.flagged:
        return render("vars.ib_disabled", decided, facts)
    names = (decided.note or "").removeprefix("unset ").split()
    return result(
        "vars.ib_disabled",
        AREA,
        Status.WARN,
        decided.summary,
        *decided.evidence,
        fix=unset(*names),
        fix_note=edit_note(facts),
    )
