"""The control: two good nodes measured with the test that would name a node. Pure.

Rounds 2 and 3 judge a node against round 1's reference, measured earlier. When the
load of the hosts or of the fabric changes between rounds, a healthy node is "slow
again": seen on a loaded 2-core VM, where host0 of three healthy fake hosts (CPU ranks)
measured 0.027 and 0.034 GB/s in rounds 2 and 3 against round 1's one pair at 0.084,
and was named. So the test that would name a node is judged once more, against two
nodes proven good in round 1 measured in the same round where two are free, else in a
control round right after. The node is named only when it is slow against the control
too; a control that failed, or that flapped as the node's test did, proves nothing, and
without two good nodes there is no control: in each of these cases the node ends
*inconclusive*, with the cause, never an outlier.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from hpnet.isolate.model import Measurement, Test
from hpnet.isolate.scoring import PairState, Score, Thresholds, gbps, judge
from hpnet.isolate.scoring import reference as reference_of

__all__ = ["RERUN", "links_again", "pick", "reckon", "split"]

#: what a node cleared by the control needs
RERUN = "run hpnet isolate again when the cluster is quiet"


def pick(good: Sequence[str], taken: set[str]) -> tuple[str, str] | None:
    """Two good nodes not in ``taken``, in the order round 1 proved them; None when
    fewer are free.

    >>> pick(["g1", "g2", "g3"], {"g1"})
    ('g2', 'g3')
    """
    free = [n for n in good if n not in taken]
    return (free[0], free[1]) if len(free) >= 2 else None


def split(
    ms: Sequence[Measurement], test: Test | None
) -> tuple[list[Measurement], Measurement | None]:
    """A round's measurements without its control ``test``'s, and that one (None when
    the round had none). A rail test (round 3's link control pair on one rail) stays
    among the others too: it is scored as the link's control as well."""
    ctl = next((m for m in ms if m.test == test), None)
    if test is not None and test.rail is not None:
        return list(ms), ctl
    return [m for m in ms if m.test != test], ctl


def reckon(
    named: Mapping[str, Measurement],
    control: Measurement | None,
    t: Thresholds,
    *,
    spread: float,
    when: str,
) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """Which of ``named`` (node -> the test that would name it) the control clears,
    each with the cause; the control's line; and each node's line against it.

    ``spread`` is the noise of one test's iterations (:func:`hpnet.isolate.scoring.noise`);
    ``when`` says when the control ran ("in the same round", "right after, in round 4").

    >>> from hpnet.isolate.model import Test
    >>> def m(a, b, *v):
    ...     return Measurement(test=Test(round=3, a=a, b=b), samples_gbps=v)
    >>> ctl = m("g1", "g2", 0.03, 0.031, 0.029)
    >>> cleared, _, _ = reckon({"x": m("x", "g3", 0.028, 0.03, 0.027)}, ctl, Thresholds(),
    ...                        spread=0.0, when="in the same round")
    >>> list(cleared)
    ['x']
    >>> reckon({"x": m("x", "g3", 0.003, 0.003, 0.003)}, ctl, Thresholds(),
    ...        spread=0.0, when="in the same round")[0]
    {}
    """
    if control is None:
        why = "no two nodes proven good were left to measure a control with"
        cause = f"{why}: slow against round 1 alone is no verdict; {RERUN}"
        return dict.fromkeys(named, cause), [], dict.fromkeys(named, cause)
    pair = f"{control.test.a} + {control.test.b}"
    median = control.median_gbps
    if control.error is not None or median is None:
        why = f"the control pair {pair} ({when}) failed too: {control.error}"
        return dict.fromkeys(named, f"{why}; {RERUN}"), [f"control {pair}: {why}"], {}
    ref = reference_of([median], floor=t.scale_floor, label="control pair", noise=spread)
    if ref is None:  # one value always gives one
        raise AssertionError(median)
    own = judge(control, (ref,), t)
    head = [f"control {pair} (good in round 1, {when}): {own.reason}"]
    cleared: dict[str, str] = {}
    said: dict[str, str] = {}
    for node, m in named.items():
        score = judge(m, (ref,), t)
        moment = score.status is PairState.UNSTABLE and own.status is PairState.UNSTABLE
        if score.bad and not moment:
            said[node] = f"against the control pair {pair}: {score.reason}: slow"
            continue
        cleared[node] = (
            f"slow against round 1, but not against the control pair {pair} measured "
            f"{when} ({score.reason}): the load of the hosts or the fabric changed between "
            f"rounds, not this node; {RERUN}"
        )
        said[node] = cleared[node]
    return cleared, head, said


def links_again(
    links: Sequence[tuple[str, str]],
    rail_scores: Mapping[tuple[str, str | None], Mapping[int, Score]],
    control: Mapping[int, Score],
    t: Thresholds,
) -> tuple[list[tuple[str, str]], list[str], list[tuple[str, str]]]:
    """Round 3's verdict on the links of round 2 (two nodes fine with others, slow
    together): a link stays when a rail stands out, when its rails are all slow against
    the control pair's (two good nodes, rail by rail, in the same round), or when there
    is no control to tell. The links kept, the round's lines, and (node, line) notes."""
    healthy = [s.median_gbps for s in control.values() if s.ok and s.median_gbps]
    ref = reference_of(healthy, floor=t.scale_floor, label="control pair")
    kept: list[tuple[str, str]] = []
    found: list[str] = []
    notes: list[tuple[str, str]] = []
    for a, b in links:
        scores = rail_scores.get((a, b), {})
        values = [s.median_gbps for s in scores.values() if s.median_gbps is not None]
        if ref is None or not all(s.ok for s in scores.values()) or not values:
            kept.append((a, b))
            continue
        m = statistics.median(values)
        z = ref.z(m)
        line = f"round 3: {a} + {b} rail by rail {gbps(m)} GB/s, z {z:.1f} vs {ref.label}"
        if z < t.z_threshold or m < t.min_fraction * ref.median_gbps:
            kept.append((a, b))
            notes.append((a, line + f" median {gbps(ref.median_gbps)} GB/s: slow again"))
        else:
            found.append(f"{line}: the slow pair of round 1 did not come back")
    return kept, found, notes
