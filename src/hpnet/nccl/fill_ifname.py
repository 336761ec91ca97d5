"""The NCCL_SOCKET_IFNAME decision: the interface NCCL's bootstrap and socket
transport should use, and what is right or wrong with the value the job runs with now
(pure; :mod:`hpnet.nccl.decision`)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from hpnet.nccl.catalog import validate
from hpnet.nccl.decision import Decision, Judged
from hpnet.nccl.fill_model import Current
from hpnet.nccl.lists import parse_list
from hpnet.nccl.rules import interface_candidates, interface_rank, socket_family
from hpnet.node.netdevs import Netdev, NetKind

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory

__all__ = ["decide_ifname"]

NO_INTERFACE = "NCCL fails: 'Bootstrap : no socket interface found'"


def decide_ifname(
    inventory: NodeInventory, given: Current | None, family_value: str | None
) -> Decision:
    """NCCL_SOCKET_IFNAME against the interfaces up here; ``family_value`` is
    NCCL_SOCKET_FAMILY."""
    value, origin = given if given is not None else (None, None)
    base = functools.partial(Decision, variable="NCCL_SOCKET_IFNAME", given=value, origin=origin)
    if "netdevs" in inventory.not_collected:
        return base(
            judged=Judged.UNKNOWN,
            answer=value,
            answer_known=value is not None,
            summary=f"NCCL_SOCKET_IFNAME={value} is not checked"
            if value is not None
            else "NCCL_SOCKET_IFNAME is not set: NCCL picks (ib* first, not docker/lo); "
            "interfaces are not known from this source",
            unknown=("interfaces not shown (`ip -br addr` shows them)",),
        )
    family = socket_family(family_value)
    addresses_known = "addresses" not in inventory.not_collected
    candidates = interface_candidates(inventory.netdevs, family, addresses_known=addresses_known)
    best = candidates[0] if candidates else None
    answer = f"={best.name}" if best else None
    caveat = () if addresses_known else ("addresses (a recorded tree does not hold them)",)
    reason = (
        f"{best.name} is up ({_netdev_word(best)})"
        + ("" if addresses_known else " (addresses are not known from a recorded tree)")
        + "; unset, NCCL would pick by its own rules "
        "(ib* first, then any but docker and lo)"
        if best
        else ""
    )
    base = functools.partial(base, answer=answer, reason=reason, unknown=caveat)
    if value is not None and len(value) <= 1:
        # ncclFindInterfaces: 'if (env && strlen(env) > 1)', else the automatic choice
        return base(
            judged=Judged.WARN,
            code="ignored",
            summary=f"NCCL_SOCKET_IFNAME={value!r} is one character or less: NCCL ignores it "
            "and picks the interface itself",
        )
    if value is not None and not (judged := validate("NCCL_SOCKET_IFNAME", value)).ok:
        return base(
            judged=Judged.FAIL if judged.severity == "fail" else Judged.WARN,
            code="invalid",
            summary=f"NCCL_SOCKET_IFNAME={value!r}: {judged.message}",
        )
    if not candidates:
        up = "up with an address" if addresses_known else "up (addresses are not recorded)"
        return base(
            answer=value,
            judged=Judged.FAIL,
            code="no-interface",
            answer_known=False,
            summary=f"no interface is {up}: NCCL cannot bootstrap",
            evidence=(NO_INTERFACE,),
            note="bring an interface up or name one that is",
        )
    if value is None:
        return base(
            judged=Judged.OK,
            summary="NCCL_SOCKET_IFNAME is not set: NCCL picks (ib* first, not docker/lo)",
        )
    spec = parse_list(value)
    matched = [n for n in candidates if spec.matches(n.name)]
    loopback = [
        n.name
        for n in inventory.netdevs
        if n.kind is NetKind.LOOPBACK and n.is_up and spec.matches(n.name)
    ]
    if loopback:
        # ncclOsFindInterfaces takes every running interface the list matches, lo
        # included, and the bootstrap uses the first (getifaddrs order: lo comes first)
        return base(
            answer=f"={matched[0].name}" if matched else answer,
            judged=Judged.WARN,
            code="loopback",
            summary=f"NCCL_SOCKET_IFNAME={value} selects {', '.join(loopback)}"
            + (" only" if not matched else f" as well as {', '.join(n.name for n in matched)}")
            + ": other nodes cannot reach this one over loopback",
            evidence=(
                "NCCL uses a loopback interface the list names; its bootstrap takes the first "
                "match in getifaddrs order, where lo comes first",
            ),
        )
    if not matched:
        present = [n for n in inventory.netdevs if spec.matches(n.name)]
        if addresses_known:
            summary = f"NCCL_SOCKET_IFNAME={value} matches no interface that is up with an address"
        elif present:
            summary = (
                f"NCCL_SOCKET_IFNAME={value} matches {', '.join(n.name for n in present)}, "
                "which is not up"
            )
        else:
            summary = f"NCCL_SOCKET_IFNAME={value} matches no interface here"
        return base(
            judged=Judged.FAIL,
            code="mismatch",
            summary=summary,
            evidence=(
                f"usable interfaces: {', '.join(n.name for n in candidates)}"
                + ("" if addresses_known else " (up; addresses are not recorded in this source)"),
                NO_INTERFACE,
            ),
        )
    avoid = [n.name for n in matched if interface_rank(n)[0] >= 10]
    note = None
    if avoid and len(matched) > 1:
        note = (
            f"as a prefix it also takes {', '.join(avoid)}: write ={matched[0].name} to name "
            "one interface exactly"
        )
    return base(
        answer=value,
        judged=Judged.OK,
        summary=f"NCCL_SOCKET_IFNAME={value} matches "
        + ", ".join(f"{n.name} ({_netdev_word(n)})" for n in matched)
        + ("" if addresses_known else " (addresses are not recorded: not checked)"),
        note=note,
    )


def _netdev_word(netdev: Netdev) -> str:
    inet = [a.address for a in netdev.addresses if a.family == "inet"]
    return netdev.kind.value + (f", {inet[0]}" if inet else "")
