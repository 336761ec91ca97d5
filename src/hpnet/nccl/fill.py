"""The node-dependent decisions, judged once (pure), and ``hpnet env``'s rendering of
them as its detected layer.

:func:`decide` judges, for a profile and a :class:`~hpnet.detect.NodeInventory`, the
transport, the RDMA ports (``NCCL_IB_HCA``), the RoCE GID index
(``NCCL_IB_GID_INDEX``) and the socket interface (``NCCL_SOCKET_IFNAME``), one
:class:`~hpnet.nccl.decision.Decision` each (:mod:`hpnet.nccl.fill_ports`,
:mod:`hpnet.nccl.fill_gid`, :mod:`hpnet.nccl.fill_ifname`), against the value the
layers give now (profile < user < environment). ``hpnet doctor`` renders the same
decisions as checks (:mod:`hpnet.doctor.checks.decided`).

:func:`detected_values` is env's rendering: an answer for a variable the profile sets
or leaves unset becomes the detected layer (a profile's value that does not fit is
replaced, the reason naming the fact that rules it out); a user's or the
environment's value is kept (they win) and a finding says what is wrong with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hpnet.nccl.decision import (
    RDMA_KINDS,
    Decision,
    Judged,
    NodeDecisions,
    PortView,
    device_unknowns,
    notes,
    port_views,
)
from hpnet.nccl.fill_gid import decide_gid
from hpnet.nccl.fill_ifname import decide_ifname
from hpnet.nccl.fill_model import Current, Detected
from hpnet.nccl.fill_ports import decide_hca
from hpnet.nccl.fill_transport import decide_disabled, decide_transport, gid_unused
from hpnet.nccl.lists import parse_list
from hpnet.nccl.rules import gid_family, version_tuple
from hpnet.nccl.shown import unknown_ports
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = [
    "Current",
    "Detected",
    "choose_transport",
    "decide",
    "detected_values",
    "unknown_ports",
]

#: the short name of each decided variable, in finding codes (``hca-mismatch``)
SHORT = {"NCCL_IB_HCA": "hca", "NCCL_IB_GID_INDEX": "gid", "NCCL_SOCKET_IFNAME": "ifname"}


def decide(
    profile: Profile,
    inventory: NodeInventory,
    current: Mapping[str, Current],
    nccl_version: str | None,
) -> NodeDecisions:
    """Every node-dependent decision, once, for the values ``current`` gives."""
    variables = {name: value for name, (value, _) in current.items()}
    family = gid_family(variables.get("NCCL_IB_ADDR_FAMILY"), variables.get("NCCL_SOCKET_FAMILY"))
    views = port_views(inventory, family)
    word, transport = decide_transport(profile, inventory, views)
    disabled = decide_disabled(word, views, current)
    hca = gid = None
    # a profile's RDMA transport on a node without any RDMA device: there is no port to
    # judge NCCL_IB_HCA against, and "disable IB" would contradict the profile; what is
    # missing is the transport decision's to say (the devices, not the variable)
    if word in RDMA_KINDS and (inventory.rdma_devices or not transport.flagged):
        hca = decide_hca(
            views,
            word,
            current.get("NCCL_IB_HCA"),
            family=family,
            unknown=device_unknowns(inventory),
        )
    if word not in ("roce", "erdma") and "NCCL_IB_GID_INDEX" in current:
        gid = gid_unused(word, current["NCCL_IB_GID_INDEX"])
    if word in ("roce", "erdma"):
        chosen = [
            v
            for v in views
            if v.kind in (word, "unknown")
            and v.usable is not False
            and (hca is None or not hca.answer_known or hca.answer is None or _in(hca.answer, v))
        ]
        visible = {n.name for n in inventory.netdevs} if inventory.netdevs else None
        hca_now = current.get("NCCL_IB_HCA")
        opened = [
            v
            for v in views
            if v.kind in (word, "unknown")
            and v.usable is not False
            and (hca_now is None or _in(hca_now[0], v))
        ]
        if not (opened or chosen):
            gid = (
                gid_unused("none", current["NCCL_IB_GID_INDEX"])
                if "NCCL_IB_GID_INDEX" in current
                else None
            )
        else:
            gid = decide_gid(
                opened or chosen,
                current.get("NCCL_IB_GID_INDEX"),
                answer_ports=chosen,
                family=family,
                variables=variables,
                version=version_tuple(nccl_version),
                visible=visible,
            )
    if gid is not None and gid.flagged and not gid.changes and hca is not None and hca.changes:
        # the index is right on the ports NCCL is to open, wrong on others it opens now
        gid = dataclasses.replace(
            gid,
            note=notes(
                f"GID {gid.answer} works on {hca.answer}: the fix is NCCL_IB_HCA={hca.answer} "
                "(vars.hca)"
                if hca.answer
                else None,
                gid.note,
            ),
        )
    ifname = decide_ifname(
        inventory, current.get("NCCL_SOCKET_IFNAME"), variables.get("NCCL_SOCKET_FAMILY")
    )
    return NodeDecisions(
        transport=word,
        transport_decision=transport,
        disabled=disabled,
        hca=hca,
        gid=gid,
        ifname=ifname,
    )


def _in(value: str, view: PortView) -> bool:
    return parse_list(value).matches(view.device.name, view.port.number)


def choose_transport(profile: Profile, inventory: NodeInventory) -> str:
    """The transport the node supports for this profile: ib, roce, erdma or socket.

    From a source that shows RDMA devices but not whether using them is possible,
    ``auto`` cannot choose: sockets would be a guess that turns the node's RDMA off.
    That is an input error naming what is missing.
    """
    word, decision = decide_transport(profile, inventory, port_views(inventory, "AF_INET"))
    if word == "unknown":
        _refuse(inventory, decision)
    return word


def _refuse(inventory: NodeInventory, decision: Decision) -> None:
    from hpnet.errors import InputError  # noqa: PLC0415 - the error path only

    raise InputError(
        decision.summary + ": " + "; ".join(decision.unknown[:6]),
        code="listing-incomplete",
        where=inventory.source,
        fix="pass `ibv_devinfo -v` output with --from (for RoCE also `show_gids`, "
        "--from may be repeated), or name the transport with --profile ib|roce|erdma",
    )


def detected_values(
    profile: Profile,
    inventory: NodeInventory,
    *,
    decisions: NodeDecisions,
) -> tuple[list[Detected], list[Finding]]:
    """env's rendering of the decisions: the detected layer and the findings."""
    if decisions.transport == "unknown":
        _refuse(inventory, decisions.transport_decision)
    detected: list[Detected] = []
    findings: list[Finding] = []
    transport = decisions.transport_decision
    if transport.flagged:
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="no-usable-rdma",
                title=transport.summary
                + (f" ({'; '.join(transport.evidence)})" if transport.evidence else ""),
            )
        )
    if decisions.disabled.flagged:
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="ib-disabled",
                title=f"{decisions.disabled.summary}: NCCL will use TCP sockets, 4-10x "
                f"slower; the node's answer: {decisions.disabled.note}",
            )
        )
    untold: list[str] = []
    for decision in (decisions.hca, decisions.gid, decisions.ifname):
        if decision is None:
            continue
        if not (decision.judged is Judged.UNKNOWN and decision.given is not None):
            untold += decision.unknown  # an -unchecked finding says these itself
        if decision.variable in profile.detect or decision.origin is not None:
            _render(decision, detected, findings, in_profile=decision.variable in profile.detect)
    untold += transport.unknown
    if untold and inventory.source.startswith("listing"):
        findings.insert(
            0,
            Finding(
                severity=Severity.WARNING,
                id="listing-incomplete",
                title="the listing does not show everything these settings depend on: "
                + "; ".join(dict.fromkeys(untold)),
            ),
        )
    return detected, findings


def _answer_words(decision: Decision) -> str:
    if not decision.changes and decision.note:
        return decision.note
    if not decision.answer_known:
        return f"no value is known to work: {decision.note}" if decision.note else ""
    if decision.answer is None:
        return f"the node's answer: unset {decision.variable}"
    return f"the node's answer: {decision.variable}={decision.answer}"


def _render(
    decision: Decision, detected: list[Detected], findings: list[Finding], *, in_profile: bool
) -> None:
    short = SHORT[decision.variable]
    name, origin = decision.variable, decision.origin
    if decision.judged in (Judged.OK, Judged.NA) and decision.given is not None:
        detected.append(
            Detected(name=name, value=decision.given, reason=decision.summary, confirmation=True)
        )
        return
    if decision.judged is Judged.UNKNOWN and decision.given is not None:
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id=f"{short}-unchecked",
                title=f"{decision.summary}: " + "; ".join(decision.unknown[:4]),
            )
        )
        return
    replace = in_profile and origin in (None, "profile") and decision.changes
    if replace:
        detected.append(
            Detected(
                name=name,
                value=decision.answer,
                replaces_profile=origin == "profile",
                reason=(
                    f"the profile's {decision.given!r} does not fit: {decision.summary}; "
                    if origin == "profile"
                    else ""
                )
                + (decision.reason or decision.summary),
            )
        )
    if not decision.flagged:
        return
    if decision.code == "no-interface":
        code = "no-socket-interface"
    elif origin == "profile":
        code = f"profile-{short}-mismatch"
    else:
        code = f"{short}-{decision.code or 'mismatch'}"
    answer = _answer_words(decision)
    findings.append(
        Finding(
            severity=Severity.WARNING,
            id=code,
            title=decision.summary
            + (f" ({'; '.join(decision.evidence)})" if decision.evidence else "")
            + (f"; {answer}" if answer else ""),
        )
    )
