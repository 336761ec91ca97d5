"""NCCL_SOCKET_IFNAME for the detected layer: check the value the layers give against
the interfaces that are up here, or choose one (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpnet.nccl.fill_model import Current, Detected
from hpnet.nccl.lists import parse_list
from hpnet.nccl.rules import interface_candidates, interface_rank, socket_family
from hpnet.node.netdevs import Netdev, NetKind
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory

__all__ = ["check_ifname"]


def check_ifname(
    inventory: NodeInventory,
    now: Current | None,
    family_value: str | None,
    detected: list[Detected],
    findings: list[Finding],
) -> None:
    """Check or choose NCCL_SOCKET_IFNAME; ``family_value`` is NCCL_SOCKET_FAMILY."""
    if "netdevs" in inventory.not_collected:
        return  # a listing says nothing of interfaces
    # unset, NCCL takes IPv4 and IPv6 interfaces alike (rules.socket_family)
    family = socket_family(family_value)
    addresses_known = "addresses" not in inventory.not_collected
    candidates = interface_candidates(inventory.netdevs, family, addresses_known=addresses_known)
    if now is not None and len(now[0]) <= 1:
        # ncclFindInterfaces: 'if (env && strlen(env) > 1)', else the automatic choice
        value, origin = now
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="ifname-ignored",
                title=f"NCCL_SOCKET_IFNAME={value!r} ({origin}) is one character or less: "
                "NCCL ignores it and picks the interface itself",
            )
        )
        if origin != "profile":
            return
        now = None
    if not candidates:
        up = "up with an address" if addresses_known else "up (addresses are not recorded)"
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="no-socket-interface",
                title=f"no interface is {up}: NCCL cannot bootstrap "
                "('Bootstrap : no socket interface found')",
            )
        )
        return
    best = candidates[0]
    unknown = "" if addresses_known else " (addresses are not known from a recorded tree)"
    if now is None:
        detected.append(
            Detected(
                name="NCCL_SOCKET_IFNAME",
                value=f"={best.name}",
                reason=f"{best.name} is up ({_netdev_word(best)}){unknown}; unset, NCCL would "
                "pick by its own rules (ib* first, then any but docker and lo)",
            )
        )
        return
    value, origin = now
    spec = parse_list(value)
    matched = [n for n in candidates if spec.matches(n.name)]
    loopback = [
        n.name
        for n in inventory.netdevs
        if n.kind is NetKind.LOOPBACK and n.is_up and spec.matches(n.name)
    ]
    if matched and loopback:
        # the bootstrap takes the first match in getifaddrs order (bootstrap.cc asks
        # ncclFindInterfaces for one interface), and lo comes first there
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="ifname-loopback",
                title=f"NCCL_SOCKET_IFNAME={value} ({origin}) also selects "
                f"{', '.join(loopback)}, which NCCL's bootstrap may take first; "
                f"={matched[0].name} names one interface",
            )
        )
    if not matched and loopback:
        # ncclOsFindInterfaces takes any running interface the list names, lo included
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="ifname-loopback",
                title=f"NCCL_SOCKET_IFNAME={value} ({origin}) selects only {', '.join(loopback)}"
                f": NCCL uses it, but other nodes cannot reach this one there; ={best.name} would",
            )
        )
        return
    if not matched:
        problem = (
            "matches no interface that is up with an address here"
            if addresses_known
            else "matches no interface that is up here (addresses are not recorded)"
        )
        if origin != "profile":
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="ifname-mismatch",
                    title=f"NCCL_SOCKET_IFNAME={value} ({origin}) {problem}; ={best.name} would",
                )
            )
            return
        detected.append(
            Detected(
                name="NCCL_SOCKET_IFNAME",
                value=f"={best.name}",
                replaces_profile=True,
                reason=f"the profile's {value!r} {problem}; {best.name} is up "
                f"({_netdev_word(best)})",
            )
        )
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="profile-ifname-mismatch",
                title=f"NCCL_SOCKET_IFNAME={value} {problem}: using ={best.name}",
            )
        )
        return
    note = "matches " + ", ".join(f"{n.name} ({_netdev_word(n)})" for n in matched)
    avoid = [n.name for n in matched if interface_rank(n)[0] >= 10]
    if avoid and len(matched) > 1:
        note += (
            f"; as a prefix it also takes {', '.join(avoid)}: write ={matched[0].name} to "
            "name one interface exactly"
        )
        findings.append(
            Finding(
                severity=Severity.INFO,
                id="ifname-prefix-ambiguous",
                title=f"NCCL_SOCKET_IFNAME={value} also matches {', '.join(avoid)}",
            )
        )
    detected.append(
        Detected(name="NCCL_SOCKET_IFNAME", value=value, reason=note, confirmation=True)
    )


def _netdev_word(netdev: Netdev) -> str:
    inet = [a.address for a in netdev.addresses if a.family == "inet"]
    return netdev.kind.value + (f", {inet[0]}" if inet else "")
