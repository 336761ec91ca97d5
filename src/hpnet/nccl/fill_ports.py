"""The NCCL_IB_HCA decision: the ports NCCL should open, and what is right or wrong
with the value the job runs with now (pure; :mod:`hpnet.nccl.decision`)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hpnet.nccl.catalog import validate
from hpnet.nccl.decision import RDMA_KINDS, Decision, Judged, PortView, names
from hpnet.nccl.fill_model import Current
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.nccl.rules import family_word, transport_word

__all__ = ["decide_hca", "fastest_group"]


def fastest_group(views: Sequence[PortView]) -> list[PortView]:
    """The ports of one rate that move the most (ports x rate: a ring over k NICs of
    rate r moves about k x r; the faster group on a tie): rings run at the slowest
    port, so a slower one costs every collective. A port whose rate is not shown
    joins whichever group is kept (nothing says it is slower)."""
    rates = {v.port.rate_gbps for v in views if v.port.rate_gbps}
    if len(rates) < 2:
        return list(views)
    groups = {r: [v for v in views if v.port.rate_gbps == r] for r in rates}
    best = max(rates, key=lambda r: (len(groups[r]) * r, r))
    return [v for v in views if v.port.rate_gbps in (best, None)]


def _why_left_out(view: PortView, word: str, kept: Sequence[PortView], family: str) -> str:
    if view.kind != word:
        return f"{view.name} ({transport_word(view.kind)}, not {transport_word(word)})"
    if view.routable is False:
        return f"{view.name} (no routable RoCE v2 {family_word(family)} GID in this namespace)"
    rate = next((v.port.rate for v in kept if v.port.rate), "")
    return f"{view.name} ({view.port.rate or 'slower'}, slower than {rate or 'the others'})"


def decide_hca(
    views: Sequence[PortView],
    word: str,
    given: Current | None,
    *,
    family: str,
    unknown: Sequence[str] = (),
) -> Decision:
    """NCCL_IB_HCA on transport ``word`` (``ib``, ``roce``, ``erdma``): the answer names
    the usable ports of that kind exactly (with a routable RoCE v2 GID where the GID
    table is shown; the fastest group where rates differ); ``unknown``: what the source
    leaves unknown about devices as a whole."""
    value, origin = given if given is not None else (None, None)
    kind = transport_word(word)
    of_kind = [v for v in views if v.kind == word and v.usable is True]
    good = fastest_group([v for v in of_kind if v.routable is not False])
    maybe = [v for v in views if v.unsure((word,))]
    untold = [
        *(v.unknown for v in (*maybe, *good) if v.unknown),
        *unknown,
    ]
    answer = exact_list([(v.device.name, v.port.number) for v in good]) if good else None
    known = bool(good) or not (maybe or unknown)
    base = functools.partial(
        Decision,
        variable="NCCL_IB_HCA",
        given=value,
        origin=origin,
        answer=answer,
        answer_known=known,
        unknown=tuple(untold),
        reason=f"the ACTIVE {kind} ports a process here can open"
        + (" that have a routable RoCE v2 GID" if any(v.routable is False for v in of_kind) else "")
        + f": {names(good)}",
    )
    if value is None:
        opens = [v for v in views if v.usable is True and v.kind in RDMA_KINDS]
        extra = [v for v in opens if v not in good]
        if not good and extra:
            why = "; ".join(_why_left_out(v, word, good, family) for v in extra)
            return base(
                judged=Judged.FAIL,
                code="unset",
                summary=f"NCCL_IB_HCA is not set, so NCCL opens {why}: no port here can carry "
                f"{kind} between nodes",
                note="give the RoCE netdevs an IP address (the IPv4-mapped RoCE v2 GID appears "
                "with it), or export NCCL_IB_DISABLE=1 to use sockets on purpose",
            )
        if not good:
            return base(
                judged=Judged.UNKNOWN if not known else Judged.NA,
                summary="NCCL_IB_HCA is not set, and the source does not show which "
                f"{kind} ports are usable"
                if not known
                else f"NCCL_IB_HCA is not set: no usable {kind} port here",
            )
        if extra:
            why = "; ".join(_why_left_out(v, word, good, family) for v in extra)
            return base(
                judged=Judged.WARN,
                code="unset",
                summary=f"NCCL_IB_HCA is not set, so NCCL opens every ACTIVE port: {why} "
                f"as well as {names(good)}",
                evidence=(f"NCCL opens {names(opens)}",),
            )
        unshown = [v for v in views if v.unsure() and v not in good]
        if unshown:
            # NCCL opens those too if they are ACTIVE: naming the usable ones settles it
            return base(
                judged=Judged.WARN,
                code="unset",
                summary=f"NCCL_IB_HCA is not set, so NCCL also opens whichever of "
                f"{names(unshown)} is usable, which the source does not show; the usable "
                f"{kind} ports: {names(good)}",
                evidence=tuple(v.unknown for v in unshown if v.unknown),
            )
        return base(
            judged=Judged.OK,
            summary=f"NCCL_IB_HCA is not set: NCCL opens {names(good)}, every usable {kind} "
            "port here",
        )
    judged = validate("NCCL_IB_HCA", value)
    if not judged.ok:
        return base(
            judged=Judged.FAIL if judged.severity == "fail" else Judged.WARN,
            code="invalid",
            summary=f"NCCL_IB_HCA={value!r}: {judged.message}",
            evidence=tuple(f"also: {p}" for p in parse_list(value).problems[1:]),
        )
    spec = parse_list(value)
    matched = [v for v in views if spec.matches(v.device.name, v.port.number)]
    opens = [v for v in matched if v.usable is True and v.kind in RDMA_KINDS]
    fallback = (
        "" if answer else "; NCCL uses its Socket transport either way: NCCL_IB_DISABLE=1 says so"
    )
    if not matched:
        devices = ", ".join(sorted({v.device.name for v in views})) or "none"
        return base(
            judged=Judged.FAIL,
            code="mismatch",
            summary=f"NCCL_IB_HCA={value} matches no RDMA port here",
            evidence=(f"RDMA devices on this node: {devices}",),
            note=None if answer else fallback.lstrip("; "),
        )
    if not opens:
        shown_not = [v for v in matched if v.usable is None]
        if shown_not:
            return base(
                answer=value,
                answer_known=True,
                judged=Judged.UNKNOWN,
                summary=f"NCCL_IB_HCA={value} selects {names(shown_not)}, whose state the "
                "source does not show",
            )
        return base(
            judged=Judged.FAIL,
            code="mismatch",
            summary=f"NCCL_IB_HCA={value} selects no usable port here (it matches "
            f"{names(matched)}): NCCL falls back to sockets",
            evidence=tuple(f"{v.name}: {_unusable(v)}" for v in matched),
            note=fallback.lstrip("; ") or None,
        )
    wrong = [v for v in opens if v not in good]
    if wrong or not good:
        left = "; ".join(_why_left_out(v, word, good, family) for v in wrong)
        return base(
            judged=Judged.WARN,
            code="mismatch",
            summary=f"NCCL_IB_HCA={value} also selects {left}"
            if good and [v for v in opens if v in good]
            else f"NCCL_IB_HCA={value} selects no usable {kind} port: {left}",
        )
    skipped = [v for v in matched if v not in opens]
    missed = [v for v in good if v not in opens]
    unsure = [v for v in matched if v.unsure()]
    if unsure:
        return base(
            answer=value,
            judged=Judged.UNKNOWN,
            summary=f"NCCL_IB_HCA={value} selects {names(opens)}, and matches {names(unsure)}, "
            "which the source does not show enough of to tell whether NCCL opens it",
        )
    return base(
        answer=value,
        judged=Judged.OK,
        summary=f"NCCL_IB_HCA={value} selects {names(opens)}"
        + (f" (NCCL skips {names(skipped)}: not usable here)" if skipped else "")
        + (f"; leaves out usable {names(missed)}" if missed else ""),
    )


def _unusable(view: PortView) -> str:
    device, port = view.pair
    if device.uverbs is not None and not device.uverbs.present:
        return f"no {device.uverbs.path} in this container"
    if device.uverbs is not None and device.uverbs.accessible is False:
        return f"{device.uverbs.path} cannot be opened"
    if view.kind not in RDMA_KINDS:
        return "a link layer NCCL's IB transport does not take"
    return f"port {port.state.value}"
