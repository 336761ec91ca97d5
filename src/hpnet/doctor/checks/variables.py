"""Checks of the NCCL_* variables under test, against the catalog and the node.

Every value is read the way NCCL reads it (:mod:`hpnet.nccl.catalog`,
:mod:`hpnet.nccl.lists`); a variable with a dedicated check (``NCCL_IB_HCA``,
``NCCL_IB_GID_INDEX``, ``NCCL_SOCKET_IFNAME``) is judged there only, syntax included,
so that one value never gets two verdicts (:mod:`hpnet.doctor.checks.hca`,
:mod:`hpnet.doctor.checks.gid`, :mod:`hpnet.doctor.checks.ifname`).
"""

from __future__ import annotations

import re

from hpnet.doctor.checks._util import (
    VARIABLES_AREA,
    all_usable,
    decisions,
    edit_note,
    export,
    fix_lines,
    notes,
    result,
    unset,
    valid_name,
)
from hpnet.doctor.model import CheckResult, Facts
from hpnet.nccl.catalog import foreign, lookup, nccl_int, suggest, validate
from hpnet.nccl.lists import parse_list
from hpnet.nccl.model import Kind
from hpnet.result import Status

__all__ = [
    "check_debug",
    "check_net",
    "check_syntax",
    "check_unknown",
]

AREA = VARIABLES_AREA

#: variables a dedicated check judges, syntax included
_OWNED = {
    "NCCL_IB_HCA": "vars.hca",
    "NCCL_IB_GID_INDEX": "vars.gid",
    "NCCL_SOCKET_IFNAME": "vars.ifname",
}


def _nccl(facts: Facts) -> dict[str, str]:
    return {k: v for k, v in facts.variables.items() if k.startswith("NCCL_") and valid_name(k)}


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
        fix_note=notes(
            "unset returns a variable to NCCL's default; set a valid value instead if you "
            "meant one (see " + "; ".join(docs) + ")",
            edit_note(facts),
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
            carried, why = _carried(facts, close, value)
            if why:
                lines.append(f"{name}: not an NCCL variable; did you mean {close}? {why}")
            else:
                lines.append(
                    f"{name}: not an NCCL variable; did you mean {close}? The fix renames it"
                )
                renamed = True
            fixes += [*([export(close, carried)] if carried is not None else []), unset(name)]
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
        fix_note=notes(
            "the export lines rename each misspelled variable to the name NCCL reads, with "
            "the same value"
            if renamed
            else None,
            "remove the badly named variables where the job's environment is built"
            if badly_named
            else None,
            edit_note(facts),
        ),
    )


def _carried(facts: Facts, name: str, value: str) -> tuple[str | None, str | None]:
    """The value a misspelled variable's rename sets, and why it is not the misspelled
    one's own (None: the rename carries the value over). A ports list that selects no
    port NCCL can use here is not carried: the node's own ports are (what ``hpnet env``
    exports), or nothing where no port is usable."""
    if name != "NCCL_IB_HCA":
        return value, None
    spec = parse_list(value)
    if spec.problems:
        return value, None  # vars.syntax-like problems: the rename keeps them visible
    decided = decisions(facts).hca
    answer = decided.answer if decided is not None and decided.answer_known else None
    ports = parse_list(answer) if answer else None
    if ports is not None and any(
        spec.matches(d.name, p.number) and ports.matches(d.name, p.number)
        for d in facts.inventory.rdma_devices
        for p in d.ports
    ):
        return value, None
    if answer is None:
        return None, (
            "No RDMA port is known to be usable here, so the fix removes it (vars.hca and "
            "ports.state say why)"
        )
    return answer, (
        f"Its value {value!r} selects none of the ports NCCL is to open here, so the fix "
        f"sets them ({answer}: vars.hca's answer) instead"
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
            fix_note=notes("use INFO only to verify the transport", edit_note(facts)),
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
            fix_note=edit_note(facts),
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
                fix_note=edit_note(facts),
            )
        if not all_usable(facts):
            return result(
                "vars.net",
                AREA,
                Status.FAIL,
                f"NCCL_NET={net} forces the IB transport, but no RDMA port is usable here: "
                "NCCL init fails instead of falling back to sockets",
                fix=unset("NCCL_NET"),
                fix_note=edit_note(facts),
            )
    if net and not internal and (plugin or "").lower() == "none":
        return result(
            "vars.net",
            AREA,
            Status.FAIL,
            f"NCCL_NET={net} names a plugin's network, but NCCL_NET_PLUGIN=none "
            "loads no plugin: NCCL init fails",
            fix=unset("NCCL_NET"),
            fix_note=notes("or unset NCCL_NET_PLUGIN so that the plugin loads", edit_note(facts)),
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
