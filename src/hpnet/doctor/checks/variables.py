"""Checks of the NCCL_* variables under test, against the catalog and the node.

Every value is read the way NCCL reads it (:mod:`hpnet.nccl.catalog`,
:mod:`hpnet.nccl.lists`); a variable with a dedicated check (``NCCL_IB_HCA``,
``NCCL_IB_GID_INDEX``, ``NCCL_SOCKET_IFNAME``) is judged there only, syntax included,
so that one value never gets two verdicts.
"""

from __future__ import annotations

import re

from hpnet.doctor.checks._util import (
    Port,
    export,
    fix_lines,
    result,
    selected_ports,
    unset,
    usable,
    valid_name,
)
from hpnet.doctor.model import CheckResult, Facts, Status
from hpnet.nccl.catalog import foreign, lookup, nccl_int, suggest, validate
from hpnet.nccl.fill import (
    auto_gid_choices,
    auto_gid_problems,
    gid_index,
    gid_problem,
    interface_candidates,
    nccl_family,
    port_kind,
    usable_ports,
    version_tuple,
)
from hpnet.nccl.gid_select import AUTO_GID_SINCE
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.nccl.model import Kind
from hpnet.node.netdevs import NetKind
from hpnet.rdma.model import RdmaDevice, RdmaPort

__all__ = [
    "check_debug",
    "check_gid",
    "check_hca",
    "check_ib_disabled",
    "check_ifname",
    "check_net",
    "check_syntax",
    "check_transport",
    "check_unknown",
]

AREA = "variables"
#: variables a dedicated check judges, syntax included
_OWNED = {
    "NCCL_IB_HCA": "vars.hca",
    "NCCL_IB_GID_INDEX": "vars.gid",
    "NCCL_SOCKET_IFNAME": "vars.ifname",
}
_FAMILIES = ("AF_INET", "AF_INET6")


def _nccl(facts: Facts) -> dict[str, str]:
    return {k: v for k, v in facts.variables.items() if k.startswith("NCCL_") and valid_name(k)}


def _edit_note(facts: Facts) -> str | None:
    if facts.env_file is None:
        return None
    return f"the commands fix the current shell; edit {facts.env_file} the same way"


def _notes(*notes: str | None) -> str | None:
    kept = [note for note in notes if note]
    return "; ".join(kept) if kept else None


def _corrected(name: str, value: str) -> str | None:
    """The value the user evidently meant, when NCCL misreads it and the intent is
    plain (``0136`` -> ``136``, ``22s`` -> ``22``, `` INFO`` -> ``INFO``); else None."""
    var = lookup(name)
    if var is None:
        return None
    text = value.strip()
    candidates: list[str] = []
    if var.kind in (Kind.INT, Kind.SIZE, Kind.BOOL):
        if re.fullmatch(r"[+-]?0[0-7]+", text):
            candidates.append(str(int(text, 10)))
        if lead := re.match(r"[+-]?[0-9]+", text):
            candidates.append(lead.group(0))
        if var.kind is Kind.BOOL and nccl_int(value, 0) not in (0, 1):
            candidates.append("1")
    else:
        candidates += [text, text.upper()]
    return next((c for c in candidates if c != value and validate(name, c).ok), None)


def check_syntax(facts: Facts) -> CheckResult:
    """Every known NCCL_* value (but those with a check of their own) as NCCL reads it."""
    variables = _nccl(facts)
    known = {k: v for k, v in sorted(variables.items()) if lookup(k) and k not in _OWNED}
    elsewhere = [f"{k}: judged by {_OWNED[k]}" for k in sorted(variables) if k in _OWNED]
    if not known:
        return result(
            "vars.syntax",
            AREA,
            Status.SKIP,
            f"no NCCL variables to check in {facts.variables_source}",
            *elsewhere,
        )
    judged = {k: validate(k, v) for k, v in known.items()}
    bad = [(k, known[k], j) for k, j in judged.items() if not j.ok]
    if not bad:
        return result(
            "vars.syntax",
            AREA,
            Status.PASS,
            f"{len(known)} NCCL variable(s) valid",
            *(f"{k}={v}" for k, v in known.items()),
            *elsewhere,
        )
    failing = [k for k, _, j in bad if j.severity == "fail"]
    fixes: list[str | None] = []
    for name, value, verdict in bad:
        if verdict.severity == "warn":
            # NCCL reads it as the message says: only an empty value is worth a command
            fixes.append(unset(name) if not value.strip() else None)
            continue
        better = _corrected(name, value)
        fixes.append(export(name, better) if better is not None else unset(name))
    docs = [f"{k}: {var.doc}" for k, _, _ in bad if (var := lookup(k))]
    return result(
        "vars.syntax",
        AREA,
        Status.FAIL if failing else Status.WARN,
        f"{len(failing)} NCCL value(s) NCCL misreads"
        if failing
        else f"{len(bad)} NCCL value(s) NCCL ignores or reads other than written",
        *(f"{k}={v!r}: {j.message}" for k, v, j in bad),
        fix=fix_lines(*fixes),
        fix_note=_notes(
            "unset returns a variable to NCCL's default; set a valid value instead if you "
            "meant one (see " + "; ".join(docs) + ")",
            _edit_note(facts),
        ),
    )


def check_unknown(facts: Facts) -> CheckResult:
    """NCCL_* names NCCL does not know: it ignores them without a word. Names that
    images and frameworks set (NCCL_VERSION, PyTorch's NCCL_ASYNC_ERROR_HANDLING) are
    not NCCL's, and are only noted."""
    names = sorted(k for k in facts.variables if k.startswith("NCCL_"))
    badly_named = [k for k in names if not valid_name(k)]
    others = [k for k in names if valid_name(k) and foreign(k) is not None]
    unknown = [k for k in names if valid_name(k) and lookup(k) is None and foreign(k) is None]
    info = [f"{k}: not an NCCL setting: {foreign(k)}" for k in others]
    if not unknown and not badly_named:
        summary = "no unknown NCCL_* names"
        if others:
            summary += f" ({len(others)} set by other tools, which NCCL ignores)"
        return result("vars.unknown", AREA, Status.PASS, summary, *info)
    lines: list[str] = []
    fixes: list[str] = []
    renamed = False
    for name in unknown:
        value = facts.variables[name]
        close = suggest(name)
        if close is not None and close not in facts.variables:
            lines.append(f"{name}: not an NCCL variable; did you mean {close}? The fix renames it")
            fixes += [export(close, value), unset(name)]
            renamed = True
        elif close is not None:
            lines.append(
                f"{name}: not an NCCL variable; did you mean {close}? It is set too "
                f"({close}={facts.variables[close]!r}), and NCCL reads only that one"
            )
            fixes.append(unset(name))
        else:
            lines.append(f"{name}: not an NCCL variable")
            fixes.append(unset(name))
    lines += [
        f"{name!r}: not a shell variable name; NCCL ignores it and no shell can unset it"
        for name in badly_named
    ]
    return result(
        "vars.unknown",
        AREA,
        Status.WARN,
        f"{len(unknown) + len(badly_named)} NCCL_* name(s) NCCL silently ignores",
        *lines,
        *info,
        fix=fix_lines(*fixes),
        fix_note=_notes(
            "the export lines rename each misspelled variable to the name NCCL reads, with "
            "the same value"
            if renamed
            else None,
            "remove the badly named variables where the job's environment is built"
            if badly_named
            else None,
            _edit_note(facts),
        ),
    )


def _all_usable(facts: Facts) -> list[Port]:
    return [(d, p) for d in facts.inventory.rdma_devices for p in usable_ports(d)]


def _names(ports: list[Port]) -> str:
    return ", ".join(f"{d.name}:{p.number}" for d, p in ports) or "none"


def why_unusable(device: RdmaDevice, port: RdmaPort) -> str:
    if device.uverbs is not None and not device.uverbs.present:
        return f"{device.name}:{port.number}: no {device.uverbs.path} in this container"
    if device.uverbs is not None and device.uverbs.accessible is False:
        return f"{device.name}:{port.number}: {device.uverbs.path} cannot be opened"
    return f"{device.name}:{port.number}: port {port.state.value}"


def _hca_fix(facts: Facts) -> tuple[str | None, str | None]:
    """The value to set: the node's usable ports exactly, else sockets on purpose."""
    node_usable = _all_usable(facts)
    if node_usable:
        exact = exact_list([(d.name, p.number) for d, p in node_usable])
        return export("NCCL_IB_HCA", exact), _edit_note(facts)
    return (
        fix_lines(unset("NCCL_IB_HCA"), export("NCCL_IB_DISABLE", "1")),
        _notes(
            "no usable RDMA port here: NCCL uses its Socket transport either way, and "
            "NCCL_IB_DISABLE=1 says so",
            _edit_note(facts),
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
    if skipped:
        return result(
            "vars.hca",
            AREA,
            Status.WARN,
            f"NCCL_IB_HCA={value} selects {_names(good)}, and {_names(skipped)} "
            "which NCCL will skip",
            *(why_unusable(d, p) for d, p in skipped),
            fix=fix,
            fix_note=note,
        )
    return result("vars.hca", AREA, Status.PASS, f"NCCL_IB_HCA={value} selects {_names(good)}")


def _family(facts: Facts) -> str:
    """The family a routable GID must have: NCCL_IB_ADDR_FAMILY, else NCCL_SOCKET_FAMILY
    (each only when NCCL would accept its value), else AF_INET."""
    for name in ("NCCL_IB_ADDR_FAMILY", "NCCL_SOCKET_FAMILY"):
        if facts.variables.get(name) in _FAMILIES:
            return facts.variables[name]
    return "AF_INET"


def _visible(facts: Facts) -> set[str] | None:
    return {n.name for n in facts.inventory.netdevs} if facts.inventory.netdevs else None


def _good_indexes(ethernet: list[Port], family: str, visible: set[str] | None) -> list[int]:
    good = [
        {g.index for g in p.gids if gid_problem(p, g.index, family, visible) is None}
        for _, p in ethernet
    ]
    return sorted(set.intersection(*good)) if good else []


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
                fix_note=_notes(
                    "unset, NCCL >= 2.21.5 chooses the GID per port; or set the index this "
                    "check finds once the value is readable",
                    _edit_note(facts),
                ),
            )
    # the ports NCCL_IB_HCA selects; if it selects none, the ones its fix would
    ports = usable(facts) or _all_usable(facts)
    ethernet = [(d, p) for d, p in ports if port_kind(d, p) != "ib" and p.gids]
    index = gid_index(value, version)
    automatic = index < 0 and (version is None or version >= AUTO_GID_SINCE)
    shown = "not set" if value is None else f"{value} (negative)"
    if not ethernet:
        return result(
            "vars.gid",
            AREA,
            Status.SKIP,
            f"NCCL_IB_GID_INDEX is {shown}: no usable RoCE/eRDMA port with a known GID "
            "table to check it on (InfiniBand ports are routed by LID and do not use it)",
        )
    visible = _visible(facts)
    family = _family(facts)
    common = _good_indexes(ethernet, family, visible)
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
            f"GID {index} is RoCE v2 and routable on {_names(ethernet)}",
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
        if working and index >= 0:
            fix = export("NCCL_IB_HCA", exact_list([(d.name, p.number) for d, p in working]))
            note = f"GID {index} works on these ports only: keep them"
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
        fix_note=_notes(note, _edit_note(facts)),
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
        fix_note=_notes(note, _edit_note(facts)),
    )


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
    family = facts.variables.get("NCCL_SOCKET_FAMILY")
    candidates = (
        interface_candidates(facts.inventory, family if family in _FAMILIES else "any")
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
            fix_note=_notes(
                None if best else "unset, NCCL picks the interface itself", _edit_note(facts)
            ),
        )
    if not known:
        return result("vars.ifname", AREA, Status.SKIP, "interfaces are not known from this source")
    spec = parse_list(value)
    addresses_known = "addresses" not in facts.inventory.not_collected
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
            fix_note=_notes(
                None if best else "name an interface other nodes can reach", _edit_note(facts)
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
            fix_note=_notes(
                None if best else "bring an interface up or name one that is", _edit_note(facts)
            ),
        )
    unchecked = "" if addresses_known else " (addresses are not recorded: not checked)"
    return result(
        "vars.ifname",
        AREA,
        Status.PASS,
        f"NCCL_SOCKET_IFNAME={value} matches {', '.join(matched)}{unchecked}",
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
    usable_here = _all_usable(facts)
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
        f"{' and '.join(forced)} although {_names(usable_here)} are usable",
        "NCCL will use TCP sockets, typically 4-10x slower than RDMA",
        fix=unset(*names),
        fix_note=_edit_note(facts),
    )


#: the transports a profile asks for, as fill.port_kind words
_PROFILE_KINDS = {"ib": ("ib",), "roce": ("roce",), "erdma": ("erdma",), "rdma": ("ib", "roce")}


def check_transport(facts: Facts) -> CheckResult:
    """A profile that needs RDMA, on a node where no RDMA port is usable: NCCL falls
    back to sockets without a word (``NET/IB : No device found``)."""
    profile = facts.profile
    kinds = _PROFILE_KINDS.get(profile.transport) if profile else None
    if profile is None or kinds is None:
        return result("vars.transport", AREA, Status.SKIP, "no profile that requires RDMA")
    word = " or ".join({"ib": "InfiniBand", "roce": "RoCE", "erdma": "eRDMA"}[k] for k in kinds)
    ports = [(d, p) for d, p in _all_usable(facts) if port_kind(d, p) in kinds]
    if ports:
        return result(
            "vars.transport",
            AREA,
            Status.PASS,
            f"{profile.name} needs {word}: {_names(ports)} usable here",
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


def check_debug(facts: Facts) -> CheckResult:
    """NCCL_DEBUG=INFO or TRACE costs log volume on every rank of a production job."""
    level = facts.variables.get("NCCL_DEBUG", "").strip().upper()
    if level in ("INFO", "TRACE"):
        return result(
            "vars.debug",
            AREA,
            Status.WARN,
            f"NCCL_DEBUG={level}: fine for a probe, costly left on in production",
            fix=export("NCCL_DEBUG", "WARN"),
            fix_note=_notes("use INFO only to verify the transport", _edit_note(facts)),
        )
    return result("vars.debug", AREA, Status.PASS, f"NCCL_DEBUG={level or 'unset'}")


#: NCCL's built-in network modules, by the names ncclNetInit compares with strcasecmp
_INTERNAL_NETS = ("ib", "socket")


def check_net(facts: Facts) -> CheckResult:
    """NCCL_NET_PLUGIN and NCCL_NET name something NCCL can load.

    NCCL_NET_PLUGIN=<name> loads ``libnccl-net-<name>.so`` (a missing one is skipped
    with 'NET/Plugin: Could not find'); ``none`` loads no plugin. NCCL_NET names the
    network module to use: IB, Socket, or a plugin's, compared with ``strcasecmp``
    (``src/plugin/net.cc``, ``ncclNetInit``); a name nothing provides makes
    communicator initialisation fail.
    """
    plugin = facts.variables.get("NCCL_NET_PLUGIN")
    net = facts.variables.get("NCCL_NET")
    if plugin is None and net is None:
        return result("vars.net", AREA, Status.SKIP, "NCCL_NET and NCCL_NET_PLUGIN are not set")
    internal = net is not None and net.lower() in _INTERNAL_NETS
    if net is not None and not net:
        return result(
            "vars.net",
            AREA,
            Status.FAIL,
            "NCCL_NET is empty: no network module has that name, NCCL init fails",
            fix=unset("NCCL_NET"),
            fix_note=_edit_note(facts),
        )
    if net is not None and net.lower() == "ib":
        disable = facts.variables.get("NCCL_IB_DISABLE")
        if disable is not None and nccl_int(disable, 0) != 0:
            return result(
                "vars.net",
                AREA,
                Status.FAIL,
                f"NCCL_NET={net} asks for the IB transport that NCCL_IB_DISABLE={disable} "
                "turns off: NCCL init fails",
                fix=unset("NCCL_IB_DISABLE"),
                fix_note=_edit_note(facts),
            )
        if not _all_usable(facts):
            return result(
                "vars.net",
                AREA,
                Status.FAIL,
                f"NCCL_NET={net} forces the IB transport, but no RDMA port is usable here: "
                "NCCL init fails instead of falling back to sockets",
                fix=unset("NCCL_NET"),
                fix_note=_edit_note(facts),
            )
    if net and not internal and (plugin or "").lower() == "none":
        return result(
            "vars.net",
            AREA,
            Status.FAIL,
            f"NCCL_NET={net} names a plugin's network, but NCCL_NET_PLUGIN=none "
            "loads no plugin: NCCL init fails",
            fix=unset("NCCL_NET"),
            fix_note=_notes("or unset NCCL_NET_PLUGIN so that the plugin loads", _edit_note(facts)),
        )
    if plugin and plugin.lower() != "none":
        if facts.net_plugins is None:
            return result(
                "vars.net",
                AREA,
                Status.SKIP,
                f"NCCL_NET_PLUGIN={plugin}: libraries are checked on the live node",
            )
        wanted = plugin if "/" in plugin or plugin.endswith(".so") else f"libnccl-net-{plugin}.so"
        name = wanted.rsplit("/", 1)[-1]
        if not any(found.startswith(name) for found in facts.net_plugins):
            return result(
                "vars.net",
                AREA,
                Status.WARN,
                f"NCCL_NET_PLUGIN={plugin}: {name} is not on the library path; NCCL "
                "will skip it and use its built-in transports",
                f"plugins found: {', '.join(facts.net_plugins) or 'none'}",
                fix=export("NCCL_NET_PLUGIN", "none"),
                fix_note=f"or install the plugin so that {name} is on LD_LIBRARY_PATH",
            )
    if net and not internal and facts.net_plugins is not None and not facts.net_plugins:
        return result(
            "vars.net",
            AREA,
            Status.FAIL,
            f"NCCL_NET={net} is not a built-in network and no NCCL net plugin is "
            "installed: NCCL init fails",
            fix=unset("NCCL_NET"),
            fix_note="IB and Socket are built in; or install the plugin",
        )
    return result(
        "vars.net",
        AREA,
        Status.PASS,
        ", ".join(f"{k}={v}" for k, v in (("NCCL_NET_PLUGIN", plugin), ("NCCL_NET", net)) if v),
    )
