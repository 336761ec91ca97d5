"""NCCL_IB_GID_INDEX for the detected layer: check the value the layers give on the
selected RoCE ports, or choose one that works on all of them (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.nccl.fill_model import Current, Detected
from hpnet.nccl.gid_select import AUTO_GID_SINCE
from hpnet.nccl.rules import (
    Port,
    auto_gid_choices,
    auto_gid_problems,
    family_word,
    gid_index,
    gid_problem,
    good_gid_indexes,
    nccl_family,
)
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory

__all__ = ["check_gid"]


def check_gid(
    inventory: NodeInventory,
    selected: list[Port],
    now: Current | None,
    *,
    family: str,
    variables: Mapping[str, str],
    version: tuple[int, ...] | None,
    detected: list[Detected],
    findings: list[Finding],
) -> None:
    """Check or choose NCCL_IB_GID_INDEX on the ``selected`` RoCE ports. ``family`` is
    the family a routable GID must have (:func:`~hpnet.nccl.rules.gid_family`);
    ``variables`` the values the layers give (NCCL's automatic choice reads them)."""
    visible = {n.name for n in inventory.netdevs} if inventory.netdevs else None
    known = [(d, p) for d, p in selected if p.gids]
    if not known:
        return  # no GID tables in the source (plain ibv_devinfo, ibstat): nothing to check
    good = [good_gid_indexes(p, family, visible) for _, p in known]
    common = sorted(set.intersection(*good))
    choices = auto_gid_choices(known, variables)
    auto = {(d.name, p.number): choice for (d, p), choice in choices}
    nccl = nccl_family(variables.get("NCCL_IB_ADDR_FAMILY"))
    auto_bad = auto_gid_problems(choices, nccl, visible)
    if now is not None:
        value, origin = now
        index = gid_index(value, version)
        if index < 0 and (version is None or version >= AUTO_GID_SINCE):
            # ncclIbGetGidIndex: 'if (*gidIndex >= 0) return' - any negative is automatic
            note = f"{value} is negative: NCCL chooses per port" + _auto_choice(auto, version)
            if not auto_bad:
                detected.append(
                    Detected(name="NCCL_IB_GID_INDEX", value=value, reason=note, confirmation=True)
                )
                return
            better = f"; GID {common[0]} works on every selected port" if common else ""
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="auto-gid-unroutable",
                    title=f"NCCL_IB_GID_INDEX={value} ({origin}) lets NCCL choose, and its "
                    f"choice does not route: {'; '.join(auto_bad)}{better}",
                )
            )
            return
        problems = [
            f"{d.name}:{p.number} {problem}"
            for d, p in known
            if (problem := gid_problem(p, index, family, visible))
        ]
        if not problems:
            note = f"GID {index} is RoCE v2 {family_word(family)} on every selected port"
            detected.append(
                Detected(
                    name="NCCL_IB_GID_INDEX",
                    value=value,
                    reason=note + _auto_note(index, auto, version),
                    confirmation=True,
                )
            )
            return
        facts = "; ".join(problems)
        if origin != "profile":
            better = f"; GID {common[0]} works on every selected port" if common else ""
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="gid-mismatch",
                    title=f"NCCL_IB_GID_INDEX={value} ({origin}) does not work on this "
                    f"node ({facts}){better}",
                )
            )
            return
        if common:
            best = common[0]
            why = f"the profile's {value} does not work here ({facts}); "
            detected.append(_common_gid(best, known, family, auto, version, replaces=why))
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="profile-gid-mismatch",
                    title=f"NCCL_IB_GID_INDEX={value} does not work on this node "
                    f"({facts}): using {best}",
                )
            )
            return
        findings.append(_no_common_gid(known, good, version, f"({facts})", auto_bad))
        detected.append(_unset_gid(version, f"the profile's {value} does not work here ({facts})"))
        return
    if common:
        detected.append(_common_gid(common[0], known, family, auto, version))
        return
    findings.append(_no_common_gid(known, good, version, "", auto_bad))
    detected.append(_unset_gid(version, "no single GID index works on every selected port"))


def _common_gid(
    best: int,
    known: list[Port],
    family: str,
    auto: Mapping[tuple[str, int], int | None],
    version: tuple[int, ...] | None,
    *,
    replaces: str = "",
) -> Detected:
    """The detected NCCL_IB_GID_INDEX: ``best``, an index that works on every selected
    port; ``replaces``: why the profile's value gave way (empty: there was none)."""
    return Detected(
        name="NCCL_IB_GID_INDEX",
        value=str(best),
        replaces_profile=bool(replaces),
        reason=f"{replaces}GID {best} is RoCE v2 {family_word(family)} on every selected port"
        + _gid_examples(known, best)
        + _auto_note(best, auto, version),
    )


def _gid_examples(selected: list[Port], index: int) -> str:
    shown = []
    for device, port in selected[:2]:
        gid = next(g for g in port.gids if g.index == index)
        address = gid.ipv4 or gid.gid
        shown.append(f"{device.name}: {address}" + (f" on {gid.netdev}" if gid.netdev else ""))
    return " (" + "; ".join(shown) + (", ..." if len(selected) > 2 else "") + ")"


def _auto_choice(
    auto: Mapping[tuple[str, int], int | None], version: tuple[int, ...] | None
) -> str:
    if version is not None and version < AUTO_GID_SINCE:
        return f"; NCCL {'.'.join(map(str, version))} predates the automatic choice (2.21.5)"
    return " (" + ", ".join(f"{d}:{p}->{c}" for (d, p), c in auto.items()) + ")"


def _auto_note(
    index: int, auto: Mapping[tuple[str, int], int | None], version: tuple[int, ...] | None
) -> str:
    same = all(choice == index for choice in auto.values())
    if version is not None and version >= AUTO_GID_SINCE:
        if same:
            return (
                f"; NCCL {'.'.join(map(str, version))} would choose GID {index} itself if "
                "NCCL_IB_GID_INDEX were left unset"
            )
        return f"; left unset, NCCL {'.'.join(map(str, version))} would choose " + ", ".join(
            f"{dev}:{port}->{choice}" for (dev, port), choice in auto.items()
        )
    if same:
        return f"; NCCL >= 2.21.5 would choose GID {index} itself if left unset"
    return ""


def _no_common_gid(
    selected: list[Port],
    good: list[set[int]],
    version: tuple[int, ...] | None,
    facts: str,
    auto_bad: Sequence[str] = (),
) -> Finding:
    per_port = ", ".join(
        f"{d.name}:{p.number}->{sorted(g) or 'none'}"
        for (d, p), g in zip(selected, good, strict=True)
    )
    auto = version is not None and version >= AUTO_GID_SINCE
    return Finding(
        severity=Severity.WARNING,
        id="no-common-gid",
        title="no one GID index is RoCE v2 and routable on every selected port"
        + (f" {facts}" if facts else "")
        + f" (usable indexes per port: {per_port}); "
        + (
            "NCCL_IB_GID_INDEX is left unset so that NCCL chooses per port"
            if auto
            else "with NCCL older than 2.21.5 select fewer HCAs or fix the GID tables"
        )
        + (f"; NCCL's own choice is wrong on {'; '.join(auto_bad)}" if auto and auto_bad else ""),
    )


def _unset_gid(version: tuple[int, ...] | None, why: str) -> Detected:
    auto = version is not None and version >= AUTO_GID_SINCE
    return Detected(
        name="NCCL_IB_GID_INDEX",
        value=None,
        replaces_profile=True,
        reason=why + ("; unset, NCCL >= 2.21.5 chooses per port" if auto else "; left unset"),
    )
