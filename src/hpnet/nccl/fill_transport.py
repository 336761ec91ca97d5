"""The transport decision (pure): which transport the node carries for a profile, and
NCCL_IB_DISABLE / NCCL_NET=Socket against it (:mod:`hpnet.nccl.decision`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hpnet.nccl.catalog import nccl_int, validate
from hpnet.nccl.decision import Decision, Judged, PortView, device_unknowns, names
from hpnet.nccl.fill_model import Current
from hpnet.nccl.rules import transport_word

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = ["decide_disabled", "decide_transport", "gid_unused"]


def _above_words(higher: list[PortView], order: tuple[str, ...], devices: bool) -> list[str]:
    """The transports the ports not shown enough may carry, that come first."""
    kinds = {v.kind for v in higher if v.kind != "unknown"}
    if devices or any(v.kind == "unknown" for v in higher):
        kinds.add(order[0])
    return [transport_word(k) for k in order if k in kinds]


def decide_transport(
    profile: Profile, inventory: NodeInventory, views: list[PortView]
) -> tuple[str, Decision]:
    """The transport word and its decision (``vars.transport``)."""
    fixed = profile.transport not in ("auto", "rdma")
    order: tuple[str, ...] = (
        ("ib", "erdma", "roce") if profile.transport == "auto" else ("ib", "roce")
    )
    if fixed:
        order = (profile.transport,)
    # a RoCE port without a routable RoCE v2 GID is still opened by NCCL (and its
    # connections fail): the transport is RoCE, and vars.hca / vars.gid say what fails
    known = [v for v in views if v.usable is True and v.kind in order]
    maybe = [v for v in views if v.unsure()]
    devices = device_unknowns(inventory)
    untold = tuple(dict.fromkeys([*(v.unknown for v in maybe if v.unknown), *devices]))
    # the transport is no variable's value: its answer is the word (ib, roce, socket...)
    base = functools.partial(
        Decision, variable="transport", given=None, origin=None, unknown=untold
    )
    if profile.transport == "socket":
        return "socket", base(judged=Judged.NA, answer="socket", summary=f"{profile.name}: sockets")
    if known:
        best = next(k for k in order if any(v.kind == k for v in known))
        # a port the source does not show enough of, of a kind that would come first
        # or of a kind not shown, may change the answer: then it is not known
        above = (*order[: order.index(best)], "unknown") if best != order[0] else ()
        higher = [v for v in maybe if v.kind in above]
        if higher or (above and devices):
            return "unknown", base(
                judged=Judged.UNKNOWN,
                answer=None,
                answer_known=False,
                summary=f"{names([v for v in known if v.kind == best])} usable "
                f"({transport_word(best)}), but the source does not show enough of "
                f"{names(higher) if higher else 'the other devices'} to rule out "
                + " or ".join(_above_words(higher, order, bool(devices)))
                + ", which hpnet chooses first",
            )
        ports = [v for v in known if v.kind == best]
        return best, base(
            judged=Judged.OK,
            answer=best,
            summary=(f"{profile.name} needs {transport_word(best)}: " if fixed else "")
            + f"{names(ports)} usable here ({transport_word(best)})",
        )
    kinds = {v.kind for v in maybe}
    if maybe or devices:
        if fixed or (len(kinds) == 1 and kinds <= set(order) and not devices):
            word = profile.transport if fixed else kinds.pop()
            return word, base(
                judged=Judged.UNKNOWN,
                answer=word,
                summary=f"the source does not show whether {names(maybe) if maybe else 'the ports'}"
                f" are usable ({transport_word(word)} if one is ACTIVE, else sockets)",
            )
        return "unknown", base(
            judged=Judged.UNKNOWN,
            answer=None,
            answer_known=False,
            summary="the source shows RDMA devices but not whether a process can use them",
        )
    word = profile.transport if fixed else "socket"
    reasons = [_why_not(v) for v in views if v.kind != "efa" or profile.transport == "auto"]
    needs_rdma = fixed or profile.transport == "rdma"
    want = transport_word(word) if fixed else "RDMA"
    if not inventory.rdma_devices:
        judged, summary = (
            (Judged.WARN, f"{profile.name} needs {want}, but there is no RDMA device")
            if needs_rdma
            else (Judged.OK, "no RDMA device on this node: NCCL uses its Socket transport")
        )
    else:
        judged = Judged.WARN
        summary = (
            f"{profile.name} needs {want}, but no {want} port is usable here"
            if needs_rdma
            else f"{len(inventory.rdma_devices)} RDMA device(s), none usable here"
        ) + ": NCCL will fall back to its Socket transport, 4-10x slower"
    return word, base(
        judged=judged,
        answer=word,
        code="no-usable-rdma" if judged is Judged.WARN else None,
        summary=summary,
        evidence=tuple(reasons),
        note="run on a node with usable RDMA (devices.uverbs and ports.state say why none "
        "is), or use --profile socket if sockets are intended"
        if judged is Judged.WARN
        else None,
    )


def _why_not(view: PortView) -> str:
    device = view.device
    if device.driver == "efa":
        return (
            f"{device.name}: AWS EFA, which NCCL's IB transport does not use (the aws-ofi-nccl "
            "plugin does: without it, sockets)"
        )
    if device.uverbs is not None and not device.uverbs.present:
        return f"{view.name}: no {device.uverbs.path} in this container"
    if device.uverbs is not None and device.uverbs.accessible is False:
        return f"{view.name}: {device.uverbs.path} cannot be opened"
    if view.usable and view.routable is False:
        return f"{view.name}: ACTIVE, but no routable RoCE v2 GID in this namespace"
    return f"{view.name}: port {view.port.state.value}"


def gid_unused(word: str, given: Current) -> Decision:
    """NCCL_IB_GID_INDEX where no RoCE port is used: harmless, unless NCCL cannot read it."""
    value, origin = given
    where = (
        "these are InfiniBand ports: NCCL routes them by LID and does not use the GID index "
        "there (ncclIbRtrQp sets a GID only on Ethernet ports)"
        if word == "ib"
        else "no RoCE port is used here"
    )
    judged = validate("NCCL_IB_GID_INDEX", value)
    if not judged.ok:
        return Decision(
            variable="NCCL_IB_GID_INDEX",
            given=value,
            origin=origin,
            judged=Judged.FAIL if judged.severity == "fail" else Judged.WARN,
            code="invalid",
            answer=None,
            summary=f"NCCL_IB_GID_INDEX={value!r} is not an index: {judged.message} ({where})",
        )
    return Decision(
        variable="NCCL_IB_GID_INDEX",
        given=value,
        origin=origin,
        judged=Judged.NA,
        answer=value,
        summary=where,
    )


def decide_disabled(word: str, views: list[PortView], current: Mapping[str, Current]) -> Decision:
    """NCCL_IB_DISABLE / NCCL_NET=Socket against the transport (``vars.ib_disabled``)."""
    forced, unset = [], []
    disable = current.get("NCCL_IB_DISABLE")
    # ncclParamIbDisable (net_ib/init.cc): any non-zero strtoll value disables IB
    if disable is not None and nccl_int(disable[0], 0) != 0:
        forced.append(f"NCCL_IB_DISABLE={disable[0]}")
        unset.append("NCCL_IB_DISABLE")
    net = current.get("NCCL_NET")
    # ncclNetInit compares NCCL_NET with strcasecmp (src/plugin/net.cc)
    if net is not None and net[0].lower() == "socket":
        forced.append(f"NCCL_NET={net[0]}")
        unset.append("NCCL_NET")
    given, origin = disable if disable is not None else (None, None)
    base = functools.partial(Decision, variable="NCCL_IB_DISABLE", given=given, origin=origin)
    if not forced:
        return base(judged=Judged.OK, answer=given, summary="the IB transport is not disabled")
    said = " and ".join(forced)
    if word == "socket":
        return base(
            judged=Judged.OK,
            answer=given,
            summary=f"{said}: right, no usable RDMA port here",
        )
    if word == "unknown":
        return base(
            judged=Judged.UNKNOWN,
            answer=given,
            summary=f"{said}: whether RDMA is usable here is not shown",
        )
    usable = [v for v in views if v.usable is True and v.kind == word]
    return base(
        judged=Judged.WARN,
        code="ib-disabled",
        answer=None,
        summary=f"{said} although {names(usable)} are usable",
        evidence=("NCCL will use TCP sockets, typically 4-10x slower than RDMA",),
        note="unset " + " ".join(unset),
    )
