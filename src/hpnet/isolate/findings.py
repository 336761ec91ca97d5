"""From what the rounds proved to outliers with evidence and fixes, pure.

Configuration faults (a test's NCCL log shows them) come first and a node with one is
never also blamed as hardware for the same slowness. Hardware: a bad node with one
rail well below its others names that rail's NIC; all rails alike names the node; when
most nodes of one group (rack, leaf switch) are bad as a whole, the group is named once.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.cluster.drift import UNSET
from hpnet.isolate.model import (
    ConfigIssue,
    Drift,
    DriftKind,
    Fault,
    IsolateVerdict,
    Measurement,
    Outlier,
    OutlierKind,
    PairResult,
    RoundSummary,
)
from hpnet.isolate.scoring import gbps

if TYPE_CHECKING:
    from hpnet.isolate.engine import Isolation
    from hpnet.isolate.scoring import Reference, Score

__all__ = ["cluster_line", "drift_summary", "outliers", "verdict"]

MAX_EVIDENCE_LINES = 6  # log lines quoted per configuration issue

NODE_FIX = (
    "drain {node}; run `hpnet doctor` and `hpnet check` on it (NICs, PCIe, GPUs, "
    "GPUDirect), then return it"
)
RAIL_FIX = (
    "check {nic} on {node}: port rate and error counters (`ibstat`, `ethtool -S`, "
    "`mlxlink`), cable and transceiver; drain the node until it is fixed"
)
FLAP_FIX = (
    "the link of {nic} on {node} flaps: check the cable, transceiver and switch port "
    "(link-down counters, `mlxlink`); drain the node until it is fixed"
)
LINK_FIX = (
    "both nodes are fine with others: check the path between {a} and {b} (switch "
    "ports, cables, routing / ECMP on {rail})"
)
GROUP_FIX = (
    "most of {group} is slow against other groups: check its switch and uplinks "
    "(port errors, speed, oversubscription, congestion control)"
)
CLUSTER_FIX = (
    "the whole fabric is slower than in the baseline: look for what changed cluster-wide "
    "(switch firmware or congestion-control settings, NCCL version or environment, drift)"
)


def cluster_line(ref: Reference | None, num_tests: int) -> list[str]:
    if ref is None:
        return [f"all {num_tests} tests failed"]
    return [
        f"cluster median {gbps(ref.median_gbps)} GB/s over {ref.num_tests} pairs, "
        f"robust scale {ref.scale_gbps:.2f} GB/s"
    ]


def drift_summary(drift: Sequence[Drift]) -> RoundSummary:
    differs = sum(d.kind is DriftKind.DIFFERS for d in drift)
    splits = len(drift) - differs
    return RoundSummary(
        number=0,
        name="drift",
        purpose="every node's facts (versions, NICs, environment, limits) against the majority",
        num_tests=0,
        num_errors=0,
        findings=(f"{differs} node facts differ from the majority, {splits} keys split",),
    )


def verdict(
    iso: Isolation,
    summaries: Sequence[RoundSummary],
    results: Sequence[Measurement],
    drift: Sequence[Drift] | None,
) -> IsolateVerdict:
    """What ``iso``'s rounds (``summaries``, each test's ``results``) and round 0's
    ``drift`` (None: not run) prove."""
    rounds = [*([drift_summary(drift)] if drift is not None else []), *summaries]
    return IsolateVerdict(
        outliers=outliers(iso),
        drift=tuple(drift or ()),
        rounds=tuple(rounds),
        pairs=tuple(PairResult.of(m) for m in results),
        cluster_median_gbps=iso.ref.median_gbps if iso.ref else None,
        baseline_median_gbps=iso.baseline.cluster_median_gbps if iso.baseline else None,
        collectives=len(results),
        inconclusive=tuple(
            iso.untested[n]
            for n in iso.nodes
            if n in iso.untested and n not in iso.bad and n not in iso.issues
        ),
    )


def outliers(iso: Isolation) -> tuple[Outlier, ...]:
    out: list[Outlier] = []
    if iso.cluster_slow and iso.ref is not None and iso.baseline is not None:
        out.append(_cluster(iso.ref, iso.baseline.cluster_median_gbps, iso.t.baseline_margin))
    hardware = [o for n in iso.bad for o in _node_outliers(iso, n)]
    out += _grouped(iso, hardware)
    out += [_link(iso, a, b) for a, b in iso.links]
    out += [_unresolved(iso, a, b) for a, b in iso.unresolved]
    for node in sorted(iso.issues):
        out += _config(iso, node, iso.issues[node])
    return tuple(out)


def _cluster(ref: Reference, before: float, margin: float) -> Outlier:
    drop = 100 * (1 - ref.median_gbps / before)
    return Outlier(
        kind=OutlierKind.CLUSTER,
        fault=Fault.HARDWARE,
        evidence=(
            f"cluster median {gbps(ref.median_gbps)} GB/s over {ref.num_tests} pairs is "
            f"{drop:.0f}% below the baseline's {gbps(before)} GB/s (margin {100 * margin:.0f}%)",
        ),
        fix=CLUSTER_FIX,
    )


#: drifted facts that are settings (not the state of a port or a GPU): a slow node
#: whose setting differs from the job's majority is a configuration fault, its fix
#: the majority's value
_SETTING_PREFIXES = ("env.", "limits.", "versions.")
_SETTING_SUFFIXES = (".gid-index", ".mtu")


def _is_setting(key: str) -> bool:
    return key.startswith(_SETTING_PREFIXES) or key.endswith(_SETTING_SUFFIXES)


def _setting_fix(node: str, drifted: Sequence[Drift]) -> str:
    wanted = []
    for d in drifted:
        name = d.key.removeprefix("env.")
        if d.majority_value == UNSET:
            wanted.append(f"unset {name} (it has {d.value})")
        elif d.value == UNSET:
            wanted.append(f"{name}={d.majority_value} (unset there)")
        else:
            wanted.append(f"{name}={d.majority_value} (it has {d.value})")
    return (
        f"on {node}: " + "; ".join(wanted) + " as on the other nodes, then rerun "
        "(hpnet env there shows where each NCCL value comes from)"
    )


def _drifted_settings(iso: Isolation, node: str) -> list[Drift]:
    """Round 0's settings of ``node`` that differ from the majority's."""
    return [d for d in iso.drifts_of(node) if d.kind is DriftKind.DIFFERS and _is_setting(d.key)]


def _setting_outlier(
    iso: Isolation, node: str, drifted: Sequence[Drift], evidence: Sequence[str]
) -> Outlier:
    """``node`` as a configuration fault: its drifted settings, the majority's the fix."""
    return Outlier(
        kind=OutlierKind.NODE,
        fault=Fault.CONFIGURATION,
        node=node,
        group=iso.groups.get(node),
        evidence=tuple(dict.fromkeys(evidence)),
        fix=_setting_fix(node, drifted),
        code="drift",
    )


def _node_outliers(iso: Isolation, node: str) -> list[Outlier]:
    drifted = _drifted_settings(iso, node)
    if drifted:
        return [_setting_outlier(iso, node, drifted, iso.notes[node])]
    notes = tuple(iso.notes[node])
    scores = iso.rail_scores.get((node, None), {})
    named = sorted(r for r, s in scores.items() if s.bad)
    if not scores or not named or len(named) == len(scores):
        lines = notes + _rails_line(scores, flapped=any("unstable" in n for n in notes))
        return [
            Outlier(
                kind=OutlierKind.NODE,
                fault=Fault.HARDWARE,
                node=node,
                group=iso.groups.get(node),
                evidence=lines,
                fix=NODE_FIX.format(node=node),
            )
        ]
    return [_rail(iso, node, r, scores[r], notes) for r in named]


def _rails_line(scores: dict[int, Score], *, flapped: bool) -> tuple[str, ...]:
    if not scores:
        return ()
    values = ", ".join(
        f"{r}: {gbps(s.median_gbps)}" if s.median_gbps is not None else f"{r}: failed"
        for r, s in sorted(scores.items())
    )
    if flapped and all(s.ok for s in scores.values()):
        # an intermittent fault may stay quiet through one short test per rail
        return (f"round 3: no rail dropped this time (GB/s {values}): the node, rail unknown",)
    return (f"round 3: rails alike (GB/s {values}): the node as a whole",)


def _rail(iso: Isolation, node: str, rail: int, score: Score, notes: tuple[str, ...]) -> Outlier:
    nic = iso.nic(node, rail)
    name = nic or f"the NIC of rail {rail}"
    fix = FLAP_FIX if score.status.value == "unstable" else RAIL_FIX
    return Outlier(
        kind=OutlierKind.RAIL,
        fault=Fault.HARDWARE,
        node=node,
        rail=rail,
        nic=nic,
        group=iso.groups.get(node),
        evidence=(*notes, f"round 3: rail {rail} ({name}): {score.reason}"),
        fix=fix.format(nic=name, node=node),
    )


def _grouped(iso: Isolation, hardware: list[Outlier]) -> list[Outlier]:
    """Node outliers folded into one per group where most of a group is bad."""
    sizes: dict[str, int] = defaultdict(int)
    for n in iso.nodes:
        if n in iso.groups:
            sizes[iso.groups[n]] += 1
    bad: dict[str, list[str]] = defaultdict(list)
    for o in hardware:
        if o.kind is OutlierKind.NODE and o.group is not None and o.node is not None:
            bad[o.group].append(o.node)
    named = {
        g
        for g, nodes in bad.items()
        if len(nodes) >= max(iso.t.group_min_nodes, math.ceil(iso.t.group_fraction * sizes[g]))
    }
    out = [o for o in hardware if not (o.kind is OutlierKind.NODE and o.group in named)]
    for g in sorted(named):
        nodes = sorted(bad[g])
        shown = ", ".join(nodes[:8]) + (", ..." if len(nodes) > 8 else "")
        evidence = (
            f"{len(nodes)} of the {sizes[g]} nodes of {g} are slow with partners in other "
            f"groups, all rails alike: {shown}",
            *iso.notes[nodes[0]],
        )
        out.append(
            Outlier(
                kind=OutlierKind.GROUP,
                fault=Fault.HARDWARE,
                group=g,
                evidence=evidence,
                fix=GROUP_FIX.format(group=g),
            )
        )
    return out


def _link(iso: Isolation, a: str, b: str) -> Outlier:
    scores = iso.rail_scores.get((a, b), {})
    named = sorted(r for r, s in scores.items() if s.bad)
    rail = named[0] if len(named) == 1 else None
    lines = [*iso.notes[a], *iso.notes[b]]
    lines += [f"round 3: rail {r} between {a} and {b}: {scores[r].reason}" for r in named]
    where = f"rail {rail}" if rail is not None else "every rail"
    return Outlier(
        kind=OutlierKind.LINK,
        fault=Fault.HARDWARE,
        node=a,
        peer=b,
        rail=rail,
        nic=iso.nic(a, rail),
        evidence=tuple(dict.fromkeys(lines)),
        fix=LINK_FIX.format(a=a, b=b, rail=where),
    )


def _unresolved(iso: Isolation, a: str, b: str) -> Outlier:
    """A failed or slow pair no good node was left to split. When one side's settings
    drift from the majority's and the other's do not, that side is the configuration
    fault (seen: 3 fake hosts, one given other NCCL socket settings, its one pair failed
    and the third node sat out round 1); else the pair stays one unresolved outlier."""
    drifted = {n: _drifted_settings(iso, n) for n in (a, b)}
    own = [n for n in (a, b) if drifted[n]]
    if len(own) == 1:
        node, other = own[0], b if own[0] == a else a
        lines = [*iso.notes[node], f"{other}, its partner, has the majority's settings"]
        return _setting_outlier(iso, node, drifted[node], lines)
    quoted = dict.fromkeys(
        f"{n}: {line}" if line.startswith("drift:") else line
        for n in (a, b)
        for line in iso.notes[n]
    )
    return Outlier(
        kind=OutlierKind.LINK,
        fault=Fault.HARDWARE,
        node=a,
        peer=b,
        evidence=(*quoted, "no node proven good was left to tell the node from the link"),
        fix=f"re-run with more nodes, or test {a} and {b} each with a known-good node",
    )


def _config(iso: Isolation, node: str, issues: list[ConfigIssue]) -> list[Outlier]:
    """One outlier per issue code: on one rail (or a few) it names the rail; on every
    rail of the node, or on the node as a whole, it names the node."""
    by_code: dict[str, list[ConfigIssue]] = defaultdict(list)
    for issue in issues:
        by_code[issue.code].append(issue)
    out = []
    for code in sorted(by_code):
        same = by_code[code]
        rails = {i.rail for i in same}
        whole = None in rails or len(rails) == iso.rails
        groups = (
            [same]
            if whole
            else [
                [i for i in same if i.rail == r] for r in sorted(r for r in rails if r is not None)
            ]
        )
        out += [_config_outlier(iso, node, g, whole=whole) for g in groups]
    return out


def _config_outlier(iso: Isolation, node: str, same: list[ConfigIssue], *, whole: bool) -> Outlier:
    rail = None if whole else same[0].rail
    lines = list(dict.fromkeys(line for i in same for line in i.evidence))
    rounds = [n for n in iso.notes[node] if n.startswith("round")]
    return Outlier(
        kind=OutlierKind.NODE if whole else OutlierKind.RAIL,
        fault=Fault.CONFIGURATION,
        node=node,
        rail=rail,
        nic=iso.nic(node, rail),
        group=iso.groups.get(node),
        evidence=(same[0].what, *lines[:MAX_EVIDENCE_LINES], *rounds),
        fix=same[0].fix,
        code=same[0].code,
    )
