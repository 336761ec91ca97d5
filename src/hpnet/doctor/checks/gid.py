"""The doctor's check of the RoCE GID NCCL uses: NCCL_IB_GID_INDEX, or NCCL's own
choice when it is unset or negative (by the rules in :mod:`hpnet.nccl.rules`)."""

from __future__ import annotations

from hpnet.doctor.checks._util import (
    VARIABLES_AREA,
    Port,
    all_usable,
    edit_note,
    export,
    fix_lines,
    notes,
    port_names,
    result,
    unset,
    usable,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.nccl.catalog import validate
from hpnet.nccl.gid_select import AUTO_GID_SINCE
from hpnet.nccl.lists import exact_list
from hpnet.nccl.rules import (
    auto_gid_choices,
    auto_gid_problems,
    common_gid_indexes,
    gid_family,
    gid_index,
    gid_problem,
    has_routable_gid,
    nccl_family,
    port_kind,
    version_tuple,
)
from hpnet.result import Status

__all__ = ["check_gid"]

AREA = VARIABLES_AREA


def _family(facts: Facts) -> str:
    """The family a routable GID must have (:func:`~hpnet.nccl.rules.gid_family`)."""
    return gid_family(
        facts.variables.get("NCCL_IB_ADDR_FAMILY"), facts.variables.get("NCCL_SOCKET_FAMILY")
    )


def _visible(facts: Facts) -> set[str] | None:
    return {n.name for n in facts.inventory.netdevs} if facts.inventory.netdevs else None


def check_gid(facts: Facts) -> CheckResult:
    """The GID NCCL uses on every selected RoCE port is RoCE v2, routable and in this
    namespace: the index NCCL_IB_GID_INDEX names, or, when it is unset or negative
    (NCCL >= 2.21.5), the one NCCL's own choice picks."""
    value = facts.variables.get("NCCL_IB_GID_INDEX")
    version = version_tuple(facts.nccl_version)
    if value is not None:
        judged = validate("NCCL_IB_GID_INDEX", value)
        if not judged.ok:
            return result(
                "vars.gid",
                AREA,
                Status.FAIL if judged.severity == "fail" else Status.WARN,
                f"NCCL_IB_GID_INDEX={value!r} is not an index: {judged.message}",
                fix=unset("NCCL_IB_GID_INDEX"),
                fix_note=notes(
                    "unset, NCCL >= 2.21.5 chooses the GID per port; or set the index this "
                    "check finds once the value is readable",
                    edit_note(facts),
                ),
            )
    # the ports NCCL_IB_HCA selects; if it selects none, the ones its fix would
    ports = usable(facts) or all_usable(facts)
    ethernet = [(d, p) for d, p in ports if port_kind(d, p) != "ib" and p.gids]
    index = gid_index(value, version)
    automatic = index < 0 and (version is None or version >= AUTO_GID_SINCE)
    # "negative" only for a negative value: the skip below is reached by any value
    shown = "not set" if not value else f"{value} (negative)" if index < 0 else value
    if not ethernet:
        said = (
            "NCCL_IB_GID_INDEX is not set"
            if not value
            else f"NCCL_IB_GID_INDEX={value} is not checked"
        )
        return result(
            "vars.gid",
            AREA,
            Status.SKIP,
            f"{said}: no usable RoCE/eRDMA port with a known GID "
            "table to check it on (InfiniBand ports are routed by LID and do not use it)",
        )
    visible = _visible(facts)
    family = _family(facts)
    common = common_gid_indexes(ethernet, family, visible)
    if automatic:
        return _check_auto_gid(facts, ethernet, shown, common, visible)
    problems = [
        f"{d.name}:{p.number} {problem}"
        for d, p in ethernet
        if (problem := gid_problem(p, index, family, visible))
    ]
    if index < 0:
        problems.insert(
            0,
            f"NCCL {facts.nccl_version} predates the automatic choice (2.21.5): it uses "
            f"{index} as an index",
        )
    if not problems:
        return result(
            "vars.gid",
            AREA,
            Status.PASS,
            f"GID {index} is RoCE v2 and routable on {port_names(ethernet)}",
        )
    auto_era = version is None or version >= AUTO_GID_SINCE
    fix = export("NCCL_IB_GID_INDEX", str(common[0])) if common else None
    # unset helps only where NCCL's own choice then gets every port right
    auto_fails = (
        fix is None
        and auto_era
        and bool(
            auto_gid_problems(
                auto_gid_choices(ethernet, facts.variables),
                nccl_family(facts.variables.get("NCCL_IB_ADDR_FAMILY")),
                visible,
            )
        )
    )
    note: str | None = None
    if fix is None and auto_era and not auto_fails:
        fix = unset("NCCL_IB_GID_INDEX")
        note = "no one index works on every selected port: unset, NCCL >= 2.21.5 chooses per port"
    elif fix is None:
        working = [(d, p) for d, p in ethernet if not gid_problem(p, index, family, visible)]
        # the ports that can route RoCE v2 at all, and an index every one of them has
        routable = [(d, p) for d, p in ethernet if has_routable_gid(p, family)]
        shared = common_gid_indexes(routable, family, visible) if routable else []
        if working and index >= 0:
            fix = export("NCCL_IB_HCA", exact_list([(d.name, p.number) for d, p in working]))
            note = f"GID {index} works on these ports only: keep them"
        elif shared:
            # what hpnet env sets: the ports with a routable RoCE v2 GID, and their index
            fix = fix_lines(
                export("NCCL_IB_HCA", exact_list([(d.name, p.number) for d, p in routable])),
                export("NCCL_IB_GID_INDEX", str(shared[0])),
            )
            note = (
                f"GID {shared[0]} is RoCE v2 and routable on {port_names(routable)}; the other "
                "ports have no routable RoCE v2 GID"
            )
        elif any("namespace" in problem for problem in problems):
            note = (
                "the GIDs' interfaces are not in this network namespace: start the container "
                "with the host's network (--net=host; hostNetwork: true in a pod)"
            )
        else:
            note = (
                "no one index works on every selected port: select fewer HCAs or fix the GID tables"
            )
    return result(
        "vars.gid",
        AREA,
        Status.FAIL,
        f"NCCL_IB_GID_INDEX={value} does not work on this node"
        if value is not None
        else f"NCCL_IB_GID_INDEX is not set, so NCCL {facts.nccl_version} uses GID 0, which "
        "does not work on this node",
        *problems,
        fix=fix,
        fix_note=notes(note, edit_note(facts)),
    )


def _check_auto_gid(
    facts: Facts, ethernet: list[Port], shown: str, common: list[int], visible: set[str] | None
) -> CheckResult:
    """Replay NCCL's automatic choice (ncclIbGetGidIndex, connect.cc) on every port."""
    choices = auto_gid_choices(ethernet, facts.variables)
    picks = ", ".join(f"{d.name}:{p.number}->{c}" for (d, p), c in choices)
    family = nccl_family(facts.variables.get("NCCL_IB_ADDR_FAMILY"))
    bad = auto_gid_problems(choices, family, visible)
    unknown = [f"{d.name}:{p.number}" for (d, p), choice in choices if choice is None]
    if unknown and not bad:
        # ncclIbGetGidIndex starts from GID 0: a table without it (a filtered listing,
        # `show_gids | grep v2`) cannot be replayed, and saying "routable" would be a guess
        return result(
            "vars.gid",
            AREA,
            Status.WARN,
            f"NCCL_IB_GID_INDEX is {shown}: NCCL's own choice cannot be told on "
            f"{', '.join(unknown)} from this source (its GID table has no index 0)",
            f"NCCL's picks: {picks}",
            fix_note="run `hpnet doctor` on the node itself, or pass the full listing "
            "(ibv_devinfo -v or show_gids without a filter)",
        )
    if not bad:
        return result(
            "vars.gid",
            AREA,
            Status.PASS,
            f"NCCL_IB_GID_INDEX is {shown}: NCCL picks {picks}, each RoCE v2 and routable",
        )
    good_ports = [
        (d, p)
        for (d, p), choice in choices
        if choice is not None and gid_problem(p, choice, family, visible) is None
    ]
    if common:
        fix: str | None = export("NCCL_IB_GID_INDEX", str(common[0]))
        note = f"GID {common[0]} is RoCE v2 and routable on every selected port"
    elif good_ports:
        fix = export("NCCL_IB_HCA", exact_list([(d.name, p.number) for d, p in good_ports]))
        note = "no one index works on every port: keep only the ports NCCL's choice gets right"
    else:
        fix = None
        note = (
            "no port has a routable RoCE v2 GID: give the RoCE netdevs an IP address (the "
            "IPv4-mapped GID appears with it) or set NCCL_IB_ADDR_FAMILY / NCCL_IB_ROCE_VERSION_NUM"
        )
    return result(
        "vars.gid",
        AREA,
        Status.FAIL if not good_ports else Status.WARN,
        f"NCCL_IB_GID_INDEX is {shown}: NCCL's own choice picks a GID that does not "
        f"route on {len(bad)} of {len(choices)} port(s)",
        *bad,
        f"NCCL's picks: {picks}",
        fix=fix,
        fix_note=notes(note, edit_note(facts)),
    )
