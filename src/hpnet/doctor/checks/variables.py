"""Checks of the NCCL_* variables under test, against the catalog and the node."""

from __future__ import annotations

from hpnet.doctor.checks._util import Port, result, selected_ports, usable
from hpnet.doctor.model import CheckResult, Facts, Status
from hpnet.nccl.catalog import lookup, suggest, validate
from hpnet.nccl.fill import gid_problem, interface_candidates, port_kind, usable_ports
from hpnet.nccl.lists import exact_list, parse_list
from hpnet.rdma.model import RdmaDevice, RdmaPort

__all__ = [
    "check_debug",
    "check_gid",
    "check_hca",
    "check_ib_disabled",
    "check_ifname",
    "check_net",
    "check_syntax",
    "check_unknown",
]

AREA = "variables"


def _nccl(facts: Facts) -> dict[str, str]:
    return {k: v for k, v in facts.variables.items() if k.startswith("NCCL_")}


def check_syntax(facts: Facts) -> CheckResult:
    """Every known NCCL_* value passes its catalog validator."""
    known = {k: v for k, v in sorted(_nccl(facts).items()) if lookup(k)}
    if not known:
        return result(
            "vars.syntax", AREA, Status.SKIP, f"no NCCL variables in {facts.variables_source}"
        )
    bad = [(k, v, validate(k, v).message) for k, v in known.items() if not validate(k, v).ok]
    if not bad:
        return result(
            "vars.syntax",
            AREA,
            Status.PASS,
            f"{len(known)} NCCL variable(s) valid",
            *(f"{k}={v}" for k, v in known.items()),
        )
    docs = [f"{k}: {var.doc}" for k, _, _ in bad if (var := lookup(k))]
    return result(
        "vars.syntax",
        AREA,
        Status.FAIL,
        f"{len(bad)} invalid NCCL value(s)",
        *(f"{k}={v!r}: {why}" for k, v, why in bad),
        fix="correct the value(s); " + "; ".join(docs),
    )


def check_unknown(facts: Facts) -> CheckResult:
    """NCCL_* names NCCL does not know: it ignores them without a word."""
    unknown = sorted(k for k in _nccl(facts) if lookup(k) is None)
    if not unknown:
        return result("vars.unknown", AREA, Status.PASS, "no unknown NCCL_* names")
    lines, fixes = [], []
    for name in unknown:
        close = suggest(name)
        lines.append(
            f"{name}: not an NCCL variable" + (f"; did you mean {close}?" if close else "")
        )
        fixes.append(f'export {close}="${name}"; unset {name}' if close else f"unset {name}")
    return result(
        "vars.unknown",
        AREA,
        Status.WARN,
        f"{len(unknown)} NCCL_* name(s) NCCL silently ignores",
        *lines,
        fix="; ".join(fixes),
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


def check_hca(facts: Facts) -> CheckResult:
    """NCCL_IB_HCA selects devices that exist, have an ACTIVE port and are usable here."""
    value = facts.variables.get("NCCL_IB_HCA")
    if not value:
        return result(
            "vars.hca", AREA, Status.SKIP, "NCCL_IB_HCA is not set: NCCL takes every ACTIVE port"
        )
    try:
        parse_list(value)
    except ValueError as exc:
        return result(
            "vars.hca",
            AREA,
            Status.FAIL,
            f"NCCL_IB_HCA={value}: {exc}",
            fix="write it as =dev:port,dev:port",
        )
    node_usable = _all_usable(facts)
    fix = (
        f"export NCCL_IB_HCA='{exact_list([(d.name, p.number) for d, p in node_usable])}'"
        if node_usable
        else "unset NCCL_IB_HCA; export NCCL_IB_DISABLE=1 (no usable RDMA port here)"
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
        )
    if not good:
        return result(
            "vars.hca",
            AREA,
            Status.FAIL,
            f"NCCL_IB_HCA={value} selects no usable port: NCCL falls back to sockets",
            *(why_unusable(d, p) for d, p in chosen),
            fix=fix,
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
        )
    return result("vars.hca", AREA, Status.PASS, f"NCCL_IB_HCA={value} selects {_names(good)}")


def check_gid(facts: Facts) -> CheckResult:
    """NCCL_IB_GID_INDEX is RoCE v2, routable and in this namespace on every selected port."""
    value = facts.variables.get("NCCL_IB_GID_INDEX")
    if value is None or value.strip() == "-1":
        return result(
            "vars.gid",
            AREA,
            Status.SKIP,
            "NCCL_IB_GID_INDEX is not set: NCCL >= 2.21.5 chooses per port",
        )
    # the ports NCCL_IB_HCA selects; if it selects none, the ones its fix would
    ports = usable(facts) or _all_usable(facts)
    ethernet = [(d, p) for d, p in ports if port_kind(d, p) != "ib" and p.gids]
    if not ethernet:
        return result(
            "vars.gid",
            AREA,
            Status.SKIP,
            "no usable RoCE/eRDMA port with a known GID table to check it on "
            "(InfiniBand ports are routed by LID and do not use it)",
        )
    if not value.strip().isdigit():
        return result(
            "vars.gid",
            AREA,
            Status.FAIL,
            f"NCCL_IB_GID_INDEX={value!r} is not an index",
            fix="export NCCL_IB_GID_INDEX=<index> or unset it",
        )
    index = int(value)
    family = facts.variables.get("NCCL_IB_ADDR_FAMILY") or facts.variables.get(
        "NCCL_SOCKET_FAMILY", "AF_INET"
    )
    visible = {n.name for n in facts.inventory.netdevs} if facts.inventory.netdevs else None
    problems = [
        f"{d.name}:{p.number} {problem}"
        for d, p in ethernet
        if (problem := gid_problem(p, index, family, visible))
    ]
    if not problems:
        return result(
            "vars.gid",
            AREA,
            Status.PASS,
            f"GID {index} is RoCE v2 and routable on {_names(ethernet)}",
        )
    good = [
        {g.index for g in p.gids if gid_problem(p, g.index, family, visible) is None}
        for _, p in ethernet
    ]
    common = sorted(set.intersection(*good))
    fix = (
        f"export NCCL_IB_GID_INDEX={common[0]}"
        if common
        else "unset NCCL_IB_GID_INDEX (NCCL >= 2.21.5 chooses per port)"
    )
    return result(
        "vars.gid",
        AREA,
        Status.FAIL,
        f"NCCL_IB_GID_INDEX={index} does not work on this node",
        *problems,
        fix=fix,
    )


def check_ifname(facts: Facts) -> CheckResult:
    """NCCL_SOCKET_IFNAME matches an interface that is up with an address."""
    value = facts.variables.get("NCCL_SOCKET_IFNAME")
    if value is None:
        return result(
            "vars.ifname",
            AREA,
            Status.SKIP,
            "NCCL_SOCKET_IFNAME is not set: NCCL picks (ib* first, not docker/lo)",
        )
    if "netdevs" in facts.inventory.not_collected:
        return result("vars.ifname", AREA, Status.SKIP, "interfaces are not known from this source")
    candidates = interface_candidates(
        facts.inventory, facts.variables.get("NCCL_SOCKET_FAMILY", "AF_INET")
    )
    best = f"export NCCL_SOCKET_IFNAME='={candidates[0].name}'" if candidates else None
    if len(value) <= 1:
        return result(
            "vars.ifname",
            AREA,
            Status.FAIL,
            f"NCCL_SOCKET_IFNAME={value!r} is ignored by NCCL (one character)",
            fix=best,
        )
    matched = [n.name for n in candidates if parse_list(value).matches(n.name)]
    if not matched:
        up = ", ".join(n.name for n in candidates) or "none"
        return result(
            "vars.ifname",
            AREA,
            Status.FAIL,
            f"NCCL_SOCKET_IFNAME={value} matches no interface that is up with an address",
            f"usable interfaces: {up}",
            "NCCL fails: 'Bootstrap : no socket interface found'",
            fix=best,
        )
    return result(
        "vars.ifname", AREA, Status.PASS, f"NCCL_SOCKET_IFNAME={value} matches {', '.join(matched)}"
    )


def check_ib_disabled(facts: Facts) -> CheckResult:
    """Sockets forced on a node whose RDMA is usable: 4-10x slower for nothing."""
    forced = []
    if facts.variables.get("NCCL_IB_DISABLE", "").strip() == "1":
        forced.append("NCCL_IB_DISABLE=1")
    if facts.variables.get("NCCL_NET", "").strip().lower() == "socket":
        forced.append("NCCL_NET=Socket")
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
        fix="unset NCCL_IB_DISABLE NCCL_NET",
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
            fix="export NCCL_DEBUG=WARN (use INFO only to verify the transport)",
        )
    return result("vars.debug", AREA, Status.PASS, f"NCCL_DEBUG={level or 'unset'}")


#: NCCL's built-in network modules (src/transport/net_ib.cc, net_socket.cc)
_INTERNAL_NETS = ("IB", "Socket")


def check_net(facts: Facts) -> CheckResult:
    """NCCL_NET_PLUGIN and NCCL_NET name something NCCL can load.

    NCCL_NET_PLUGIN=<name> loads ``libnccl-net-<name>.so`` (a missing one is skipped
    with 'NET/Plugin: Could not find'); ``none`` loads no plugin. NCCL_NET names the
    network module to use: IB, Socket, or a plugin's; a name nothing provides makes
    communicator initialisation fail.
    """
    plugin = facts.variables.get("NCCL_NET_PLUGIN")
    net = facts.variables.get("NCCL_NET")
    if plugin is None and net is None:
        return result("vars.net", AREA, Status.SKIP, "NCCL_NET and NCCL_NET_PLUGIN are not set")
    if net and net not in _INTERNAL_NETS and (plugin or "").lower() == "none":
        return result(
            "vars.net",
            AREA,
            Status.FAIL,
            f"NCCL_NET={net} names a plugin's network, but NCCL_NET_PLUGIN=none "
            "loads no plugin: NCCL init fails",
            fix="unset NCCL_NET (or NCCL_NET_PLUGIN to load the plugin)",
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
                fix=f"install the plugin so that {name} is on LD_LIBRARY_PATH, or "
                "export NCCL_NET_PLUGIN=none",
            )
    if (
        net
        and net not in _INTERNAL_NETS
        and facts.net_plugins is not None
        and not facts.net_plugins
    ):
        return result(
            "vars.net",
            AREA,
            Status.FAIL,
            f"NCCL_NET={net} is not a built-in network and no NCCL net plugin is "
            "installed: NCCL init fails",
            fix="unset NCCL_NET (IB and Socket are built in), or install the plugin",
        )
    return result(
        "vars.net",
        AREA,
        Status.PASS,
        ", ".join(f"{k}={v}" for k, v in (("NCCL_NET_PLUGIN", plugin), ("NCCL_NET", net)) if v),
    )
