"""The NCCL_IB_GID_INDEX decision: the RoCE GID index NCCL should use on the ports the
NCCL_IB_HCA decision names, and what is right or wrong with the one the job runs with
now (pure; :mod:`hpnet.nccl.decision`).

An NCCL version that is not known is taken to choose the GID itself when the index is
unset or negative (2.21.5 and later, the NCCL every current framework ships), and the
decision says so: an index that works on every port is the answer whatever the version.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from hpnet.nccl.catalog import validate
from hpnet.nccl.decision import Decision, Judged, PortView, notes
from hpnet.nccl.fill_model import Current
from hpnet.nccl.gid_select import AUTO_GID_SINCE
from hpnet.nccl.rules import (
    auto_gid_choices,
    auto_gid_problems,
    family_word,
    gid_index,
    gid_problem,
    good_gid_indexes,
    nccl_family,
)

__all__ = ["decide_gid"]

#: how to learn the NCCL version a job loads, where the auto-choice depends on it
VERSION_COMMAND = "python -c 'import torch; print(torch.cuda.nccl.version())'"


def decide_gid(
    ports: Sequence[PortView],
    given: Current | None,
    *,
    family: str,
    variables: Mapping[str, str],
    version: tuple[int, ...] | None,
    visible: set[str] | None,
    answer_ports: Sequence[PortView] | None = None,
) -> Decision:
    """NCCL_IB_GID_INDEX on the RoCE/eRDMA ``ports`` the job opens now (their state may
    be unknown: the GID tables still say which index is right); the answer is the index
    for ``answer_ports`` (the ports the NCCL_IB_HCA decision names; default: the same
    ports). ``family``: the family
    a routable GID must have; ``variables``: the values NCCL's own choice reads;
    ``visible``: the netdevs in this namespace (None: not known)."""
    value, origin = given if given is not None else (None, None)
    known = [v for v in ports if v.port.gids]
    targets = [v for v in (ports if answer_ports is None else answer_ports) if v.port.gids]
    untold = tuple(
        v.unknown
        or f"{v.name}: its GID table is not shown (`show_gids` or `ibv_devinfo -v` shows it)"
        for v in ports
        if not v.port.gids
    )
    base = functools.partial(Decision, variable="NCCL_IB_GID_INDEX", given=value, origin=origin)
    if value is not None:
        judged = validate("NCCL_IB_GID_INDEX", value)
        if not judged.ok:
            return base(
                judged=Judged.FAIL if judged.severity == "fail" else Judged.WARN,
                code="invalid",
                answer=_best(targets, family, visible, variables, version)[0],
                answer_known=bool(known)
                and _best(targets, family, visible, variables, version)[2] is None,
                summary=f"NCCL_IB_GID_INDEX={value!r} is not an index: {judged.message}",
                unknown=untold,
            )
    if not known:
        return base(
            judged=Judged.UNKNOWN,
            answer=value,
            answer_known=False,
            summary=(
                f"NCCL_IB_GID_INDEX={value} is not checked"
                if value is not None
                else "NCCL_IB_GID_INDEX is not set"
            )
            + ": the source does not show the GID tables of the RoCE ports",
            unknown=untold or ("the RoCE ports' GID tables (`show_gids` shows them)",),
        )
    answer, reason, note = _best(targets, family, visible, variables, version)
    known_answer = note is None  # _best's note: no value works
    auto_era = version is None or version >= AUTO_GID_SINCE
    index = gid_index(value, version)
    shown = "not set" if value is None else value
    if index < 0 and auto_era:
        # ncclIbGetGidIndex: 'if (*gidIndex >= 0) return' - unset or negative: NCCL chooses
        choices = auto_gid_choices([v.pair for v in known], variables)
        picks = ", ".join(f"{d.name}:{p.number}->{c}" for (d, p), c in choices)
        bad = auto_gid_problems(choices, nccl_family(variables.get("NCCL_IB_ADDR_FAMILY")), visible)
        cannot = [f"{d.name}:{p.number}" for (d, p), c in choices if c is None]
        # an unknown version matters only where the answer leaves the choice to NCCL
        caveat = () if version is not None or answer is not None else (_version_unknown(),)
        if cannot and not bad:
            return base(
                judged=Judged.UNKNOWN,
                answer=answer,
                answer_known=known_answer,
                reason=reason,
                summary=f"NCCL_IB_GID_INDEX is {shown}: NCCL's own choice cannot be told on "
                f"{', '.join(cannot)} from this source (its GID table has no index 0)",
                evidence=(f"NCCL's picks: {picks}",),
                unknown=(*untold, "the full GID table (`show_gids` without a filter)"),
            )
        if not bad:
            return base(
                judged=Judged.OK,
                answer=value if value is not None and answer is None else answer,
                reason=reason,
                summary=f"NCCL_IB_GID_INDEX is {shown}: NCCL picks {picks}, each RoCE v2 and "
                "routable",
                unknown=(*untold, *caveat),
            )
        return base(
            judged=Judged.FAIL,
            code="auto-unroutable" if value is None or index < 0 else "mismatch",
            answer=answer,
            answer_known=known_answer,
            reason=reason,
            summary=f"NCCL_IB_GID_INDEX is {shown}: NCCL's own choice picks a GID that does "
            f"not route on {len(bad)} of {len(choices)} port(s)",
            evidence=(*bad, f"NCCL's picks: {picks}"),
            unknown=untold,
            note=note,
        )
    problems = [
        f"{v.name} {problem}"
        for v in known
        if (problem := gid_problem(v.port, index, family, visible))
    ]
    if value is None or index < 0:
        problems.insert(
            0,
            f"NCCL {'.'.join(map(str, version or ()))} predates the automatic choice (2.21.5): "
            f"it uses GID {max(index, 0)}",
        )
    if not problems:
        return base(
            judged=Judged.OK,
            answer=value,
            reason=reason,
            summary=f"GID {index} is RoCE v2 and {family_word(family)} on {_names(known)}",
            unknown=untold,
        )
    if any("namespace" in problem for problem in problems):
        note = notes(
            note,
            "the GIDs' interfaces are not in this network namespace: start the container "
            "with the host's network (--net=host; hostNetwork: true in a pod)",
        )
    return base(
        judged=Judged.FAIL,
        code="mismatch",
        answer=answer,
        answer_known=known_answer,
        reason=reason,
        summary=f"NCCL_IB_GID_INDEX={value} does not work on this node"
        if value is not None
        else "NCCL_IB_GID_INDEX is not set, and GID 0 does not work on this node",
        evidence=tuple(problems),
        unknown=untold,
        note=note,
    )


def _names(views: Sequence[PortView]) -> str:
    return ", ".join(v.name for v in views)


def _version_unknown() -> str:
    return (
        "the NCCL version (NCCL older than 2.21.5 uses GID 0 when the index is unset: "
        f"`{VERSION_COMMAND}` tells)"
    )


def _best(
    known: Sequence[PortView],
    family: str,
    visible: set[str] | None,
    variables: Mapping[str, str],
    version: tuple[int, ...] | None,
) -> tuple[str | None, str, str | None]:
    """The index to run with (None: unset, NCCL chooses per port), why, and a note when
    no value works (what would)."""
    if not known:
        return None, "", None
    good = [good_gid_indexes(v.port, family, visible) for v in known]
    common = sorted(set.intersection(*good))
    if common:
        best = common[0]
        shown = []
        for view in known[:2]:
            gid = next(g for g in view.port.gids if g.index == best)
            shown.append(
                f"{view.device.name}: {gid.ipv4 or gid.gid}"
                + (f" on {gid.netdev}" if gid.netdev else "")
            )
        return (
            str(best),
            f"GID {best} is RoCE v2 {family_word(family)} on every selected port ("
            + "; ".join(shown)
            + (", ..." if len(known) > 2 else "")
            + ")"
            + _auto_note(best, known, variables, version),
            None,
        )
    per_port = ", ".join(
        f"{v.name}->{sorted(g) or 'none'}" for v, g in zip(known, good, strict=True)
    )
    choices = auto_gid_choices([v.pair for v in known], variables)
    auto_bad = auto_gid_problems(
        choices, nccl_family(variables.get("NCCL_IB_ADDR_FAMILY")), visible
    )
    if (version is None or version >= AUTO_GID_SINCE) and not auto_bad:
        return (
            None,
            f"no one GID index is RoCE v2 and routable on every selected port (usable indexes "
            f"per port: {per_port}): unset, NCCL >= 2.21.5 chooses per port",
            None,
        )
    return (
        None,
        f"no one GID index is RoCE v2 and routable on every selected port ({per_port})",
        "no one index works on every selected port, and NCCL's own choice does not either: "
        "select fewer HCAs, or give the RoCE netdevs an IP address (the IPv4-mapped GID "
        "appears with it)",
    )


def _auto_note(
    index: int,
    known: Sequence[PortView],
    variables: Mapping[str, str],
    version: tuple[int, ...] | None,
) -> str:
    """What NCCL's own choice would do with the index unset, beside the answer."""
    if version is not None and version < AUTO_GID_SINCE:
        return ""
    picks = [
        (f"{d.name}:{p.number}", c)
        for (d, p), c in auto_gid_choices([v.pair for v in known], variables)
    ]
    who = f"NCCL {'.'.join(map(str, version))}" if version else "NCCL >= 2.21.5"
    if all(choice == index for _, choice in picks):
        return f"; {who} would choose GID {index} itself if NCCL_IB_GID_INDEX were left unset"
    return f"; left unset, {who} would choose " + ", ".join(f"{n}->{c}" for n, c in picks)
