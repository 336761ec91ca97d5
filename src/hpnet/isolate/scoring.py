"""Is a test slow? Robust statistics over one round's tests, pure.

A test's bandwidth is its median busbw over iterations. The cluster's is the median of
the round-1 pair medians; its spread the MAD x 1.4826 (the normal-consistent scale),
floored at a fraction of the median so that a very quiet cluster does not turn noise
into outliers. A test is suspect when its robust z-score is below ``z_threshold``, or
its median below ``min_fraction`` of the cluster's (for clusters so noisy that the
MAD hides a real drop), or it is unstable (iterations below ``unstable_fraction`` of
its own median: a flapping link), or it failed.
"""

from __future__ import annotations

import dataclasses
import enum
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.isolate.model import Baseline, Measurement

__all__ = [
    "SHARED_CPU",
    "PairState",
    "Reference",
    "Score",
    "Thresholds",
    "baseline_reference",
    "gbps",
    "judge",
    "judge_rails",
    "noise",
    "reference",
]

MAD_TO_SIGMA = 1.4826  # MAD x this estimates the standard deviation of normal data


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Thresholds:
    """The numbers behind every call the engine makes; data, so a caller may tune them."""

    #: robust z below this is slow: -4 sigma is ~3e-5 one-sided for normal noise, so a
    #: 512-pair round has ~1.6% odds of one false suspect, which round 2 then clears
    z_threshold: float = -4.0
    #: scale floor as a fraction of the median: per-iteration busbw of a healthy
    #: fabric varies by 2-3%, so -4 x 3% = 12% below the median is the least we call slow
    scale_floor: float = 0.03
    #: a test below this fraction of the cluster median is slow whatever the spread
    min_fraction: float = 0.8
    #: iterations below this fraction of the test's own median make it unstable ...
    unstable_fraction: float = 0.5
    #: ... this many of them: one slow iteration is a straggler (OS jitter, a page
    #: fault); a flapping link stays down for several
    unstable_iterations: int = 2
    #: a rail below this fraction of the median of the node's rails is the bad one
    rail_fraction: float = 0.85
    #: the cluster is slow when its median is below the baseline's by more than this
    baseline_margin: float = 0.10
    #: a pair is slow when below its own baseline median by more than this
    pair_baseline_margin: float = 0.15
    #: a group is named when at least this fraction of its nodes are bad ...
    group_fraction: float = 0.5
    #: ... and at least this many
    group_min_nodes: int = 3


#: CPU ranks (gloo) share the cores with each other and with everything else on the
#: host: on a 2-core VM the medians of concurrent healthy pairs spread 2x (0.09-0.19
#: GB/s measured, test_isolate_netns) and single iterations drop to a quarter; a link
#: shaped to 40 Mbit/s is 40x slower. A wider floor and lower fractions keep the noise
#: out and still see a slow link.
SHARED_CPU = Thresholds(
    scale_floor=0.15, min_fraction=0.35, unstable_fraction=0.25, unstable_iterations=3
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Reference:
    """A distribution of test medians: where healthy tests sit."""

    median_gbps: float
    scale_gbps: float
    num_tests: int
    label: str  # "cluster", "baseline"

    def z(self, value_gbps: float) -> float:
        return (value_gbps - self.median_gbps) / self.scale_gbps


class PairState(str, enum.Enum):
    OK = "ok"
    SLOW = "slow"
    UNSTABLE = "unstable"
    ERROR = "error"  # failed on the link (NCCL, the transport): evidence
    INCONCLUSIVE = "inconclusive"  # failed in the harness: evidence of nothing


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Score:
    status: PairState
    median_gbps: float | None
    reason: str  # "24.1 GB/s, z -8.3 vs cluster median 47.9 GB/s"

    @property
    def ok(self) -> bool:
        return self.status is PairState.OK

    @property
    def bad(self) -> bool:
        """Measured slow, unstable, or failed on the link: what may name a culprit."""
        return self.status in (PairState.SLOW, PairState.UNSTABLE, PairState.ERROR)


def gbps(value: float) -> str:
    """A bandwidth for a sentence: one decimal from 1 GB/s up, two significant digits
    below (CPU ranks measure tenths and hundredths).

    >>> gbps(47.93), gbps(0.136), gbps(0.0432), gbps(0.0)
    ('47.9', '0.14', '0.043', '0.0')
    """
    return f"{value:.1f}" if abs(value) >= 1 or value == 0 else f"{value:.2g}"


def reference(
    values: Sequence[float], *, floor: float, label: str, noise: float = 0.0
) -> Reference | None:
    """Median and robust scale of ``values``; None when there are none. The scale is
    at least ``noise``: how much one test's own iterations spread (:func:`noise`), so
    that a reference of one or two tests on a noisy host does not turn the host's
    noise into a slow node.

    >>> reference([10.0, 10.0, 11.0, 9.0, 2.0], floor=0.03, label="cluster").scale_gbps
    1.4826
    >>> reference([10.0], floor=0.03, label="cluster", noise=4.0).scale_gbps
    4.0
    """
    if not values:
        return None
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    scale = max(mad * MAD_TO_SIGMA, floor * abs(median), noise, 1e-9)
    return Reference(median_gbps=median, scale_gbps=scale, num_tests=len(values), label=label)


def baseline_reference(baseline: Baseline, t: Thresholds) -> Reference:
    """Where the baseline's pairs sat; from its median and the scale floor when it
    holds fewer than three pairs."""
    values = list(baseline.pairs_gbps.values())
    ref = reference(values, floor=t.scale_floor, label="baseline")
    if ref is None or len(values) < 3:
        median = baseline.cluster_median_gbps
        ref = Reference(
            median_gbps=median,
            scale_gbps=t.scale_floor * median,
            num_tests=len(values),
            label="baseline",
        )
    return ref


def noise(ms: Sequence[Measurement]) -> float:
    """The typical spread of one test's iterations (the median, over the tests that
    ran, of each one's MAD x 1.4826), GB/s: the noise of the measurement itself. On a
    healthy fabric 2-3% of the median (under the scale floor); on CPU ranks sharing a
    loaded host, iterations of one test were seen spread 0.04-0.09 GB/s.

    >>> from hpnet.isolate.model import Measurement, Test
    >>> t = Test(round=1, a="a", b="b")
    >>> round(noise([Measurement(test=t, samples_gbps=(0.09, 0.04, 0.08, 0.09, 0.05))]), 4)
    0.0148
    """
    spreads = []
    for m in ms:
        if m.error is None and len(m.samples_gbps) >= 3:
            median = statistics.median(m.samples_gbps)
            spreads.append(statistics.median(abs(v - median) for v in m.samples_gbps))
    return statistics.median(spreads) * MAD_TO_SIGMA if spreads else 0.0


def judge(
    m: Measurement,
    refs: Sequence[Reference],
    t: Thresholds,
    *,
    baseline: Baseline | None = None,
) -> Score:
    """Score one whole-node test against each reference (cluster, baseline) in turn."""
    median, low = m.median_gbps, m.min_gbps
    if m.harness_failed:
        return Score(status=PairState.INCONCLUSIVE, median_gbps=None, reason=f"not run: {m.error}")
    if m.error is not None or median is None or low is None:
        return Score(status=PairState.ERROR, median_gbps=None, reason=f"failed: {m.error}")
    drops = sum(v < t.unstable_fraction * median for v in m.samples_gbps)
    if median > 0 and drops >= t.unstable_iterations:
        why = (
            f"unstable: {drops} of {len(m.samples_gbps)} iterations below "
            f"{t.unstable_fraction:.0%} of the median {gbps(median)} GB/s, "
            f"the lowest {gbps(low)} GB/s"
        )
        return Score(status=PairState.UNSTABLE, median_gbps=median, reason=why)
    for ref in refs:
        z = ref.z(median)
        if z < t.z_threshold:
            why = (
                f"{gbps(median)} GB/s, z {z:.1f} vs {ref.label} median {gbps(ref.median_gbps)} GB/s"
            )
            return Score(status=PairState.SLOW, median_gbps=median, reason=why)
        if median < t.min_fraction * ref.median_gbps:
            # the rule that fired: a z-score above the threshold reads as "not an outlier"
            why = (
                f"{gbps(median)} GB/s, {median / ref.median_gbps:.0%} of the {ref.label} median "
                f"{gbps(ref.median_gbps)} GB/s (below {t.min_fraction:.0%}; z {z:.1f})"
            )
            return Score(status=PairState.SLOW, median_gbps=median, reason=why)
    before = baseline.pair_gbps(m.test.a, m.test.b) if baseline is not None else None
    if before is not None and median < (1 - t.pair_baseline_margin) * before:
        why = f"{gbps(median)} GB/s, was {gbps(before)} GB/s in the baseline"
        return Score(status=PairState.SLOW, median_gbps=median, reason=why)
    z = refs[0].z(median) if refs else 0.0
    return Score(status=PairState.OK, median_gbps=median, reason=f"{gbps(median)} GB/s, z {z:.1f}")


def judge_rails(ms: Sequence[Measurement], t: Thresholds) -> dict[int, Score]:
    """Score each rail test of one node pair against the median of those rails.

    >>> from hpnet.isolate.model import Measurement, Test
    >>> ms = [Measurement(test=Test(round=3, a="x", b="g", rail=r), samples_gbps=(v,))
    ...       for r, v in enumerate([48.0, 47.5, 24.0, 48.2])]
    >>> [r for r, s in judge_rails(ms, Thresholds()).items() if not s.ok]
    [2]
    """
    medians = [m.median_gbps for m in ms if m.error is None and m.median_gbps is not None]
    ref = statistics.median(medians) if medians else 0.0
    out: dict[int, Score] = {}
    for m in ms:
        score = judge(m, (), t)
        if score.ok and score.median_gbps is not None and score.median_gbps < t.rail_fraction * ref:
            why = f"{gbps(score.median_gbps)} GB/s vs {gbps(ref)} GB/s median of the node's rails"
            score = Score(status=PairState.SLOW, median_gbps=score.median_gbps, reason=why)
        out[m.test.rail if m.test.rail is not None else -1] = score
    return out
