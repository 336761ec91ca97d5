"""`hpnet isolate`'s values: the tests a round runs, what they measured, and the verdict.

A *test* is one collective (all_reduce) between two nodes: all their local GPUs
(``rail=None``) or GPU ``r`` of each (``rail=r``: on rail-optimised clusters GPU ``r``
uses NIC ``r``, so the test measures that NIC, its port and its path). Its result is a
:class:`Measurement`: bus bandwidth per iteration (nccl-tests' ``busbw``, GB/s), or the
error that stopped it, plus the configuration issues its NCCL log shows.

The verdict serialises with :func:`hpnet.jsonout.to_data`; :meth:`Baseline.from_json`
reads that shape back, so an earlier run's ``--json`` is the next run's baseline.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import statistics
from collections.abc import Mapping

from hpnet.cluster.drift import Drift, DriftKind
from hpnet.errors import InputError

__all__ = [
    "SCHEMA_VERSION",
    "Baseline",
    "ConfigIssue",
    "Drift",
    "DriftKind",
    "ErrorSource",
    "Fault",
    "Inconclusive",
    "IsolateVerdict",
    "Measurement",
    "Outlier",
    "OutlierKind",
    "PairResult",
    "Round",
    "RoundSummary",
    "Test",
]

SCHEMA_VERSION = 1


class OutlierKind(str, enum.Enum):
    """What an outlier names."""

    NODE = "node"  # the node as a whole (all its rails alike)
    RAIL = "rail"  # one GPU/NIC/port of a node
    LINK = "link"  # the path between two nodes that are fine with others
    GROUP = "group"  # most nodes of one rack / leaf switch
    CLUSTER = "cluster"  # the whole cluster against a baseline


class Fault(str, enum.Enum):
    HARDWARE = "hardware"
    CONFIGURATION = "configuration"


class ErrorSource(str, enum.Enum):
    """What a failed test's error is evidence of (:mod:`hpnet.isolate.harness`)."""

    #: NCCL or the transport between the members failed on the link: evidence
    NETWORK = "network"
    #: the harness could not run the test (a group that never formed, a store error, a
    #: buffer that could not be allocated, no result): evidence of nothing about the
    #: nodes, never a culprit
    HARNESS = "harness"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Test:
    """One collective between nodes ``a`` and ``b``; ``rail=None`` is all local GPUs."""

    __test__ = False  # a test of the network, not a pytest class to collect

    round: int
    a: str
    b: str
    rail: int | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ConfigIssue:
    """A configuration fault a test's NCCL log shows on one node (or one of its rails)."""

    node: str
    rail: int | None
    code: str  # "socket-fallback", "no-gdr", "unexpected-nic"
    what: str
    evidence: tuple[str, ...]  # lines of the log, as logged
    fix: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Measurement:
    test: Test
    samples_gbps: tuple[float, ...]  # busbw per iteration
    error: str | None = None
    #: what ``error`` is evidence of; a network error unless the harness says otherwise
    error_source: ErrorSource = ErrorSource.NETWORK
    issues: tuple[ConfigIssue, ...] = ()

    @property
    def harness_failed(self) -> bool:
        """The test did not run for reasons that say nothing about the nodes."""
        return self.error is not None and self.error_source is ErrorSource.HARNESS

    @property
    def median_gbps(self) -> float | None:
        return statistics.median(self.samples_gbps) if self.samples_gbps else None

    @property
    def min_gbps(self) -> float | None:
        return min(self.samples_gbps) if self.samples_gbps else None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Round:
    """The tests of one round; they are disjoint in (node, rail), so they run at once."""

    number: int
    name: str  # "pairs", "re-pair", "rails"
    purpose: str
    tests: tuple[Test, ...]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RoundSummary:
    number: int
    name: str
    purpose: str
    num_tests: int
    num_errors: int
    findings: tuple[str, ...]  # what the round concluded, in words with numbers


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Outlier:
    kind: OutlierKind
    fault: Fault
    node: str | None = None
    rail: int | None = None
    nic: str | None = None  # "mlx5_3:1", from the node's facts ("rail.3.nic")
    peer: str | None = None  # the other end of a link
    group: str | None = None
    evidence: tuple[str, ...] = ()
    fix: str = ""
    code: str | None = None  # a configuration issue's code ("no-gdr")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PairResult:
    """One cell of the node x node matrix: a test's median busbw."""

    round: int
    a: str
    b: str
    rail: int | None
    median_gbps: float | None
    min_gbps: float | None
    error: str | None = None
    error_source: ErrorSource | None = None  # None when the test ran

    @classmethod
    def of(cls, m: Measurement) -> PairResult:
        return cls(
            round=m.test.round,
            a=m.test.a,
            b=m.test.b,
            rail=m.test.rail,
            median_gbps=m.median_gbps,
            min_gbps=m.min_gbps,
            error=m.error,
            error_source=m.error_source if m.error is not None else None,
        )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Inconclusive:
    """A node the rounds could not judge: its tests failed in the harness (never a
    culprit, never drained), with the first such failure's cause."""

    node: str
    round: int
    cause: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class IsolateVerdict:
    outliers: tuple[Outlier, ...]
    drift: tuple[Drift, ...]
    rounds: tuple[RoundSummary, ...]
    pairs: tuple[PairResult, ...]
    cluster_median_gbps: float | None
    baseline_median_gbps: float | None
    collectives: int  # tests run, all rounds
    inconclusive: tuple[Inconclusive, ...] = ()

    @property
    def ok(self) -> bool:
        """No outlier and every node judged (drift alone does not fail the verdict)."""
        return not self.outliers and not self.inconclusive

    @property
    def status(self) -> str:
        """``outliers`` (some named), ``inconclusive`` (none named, but some node could
        not be judged) or ``no-outlier``."""
        if self.outliers:
            return "outliers"
        return "inconclusive" if self.inconclusive else "no-outlier"


def _pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Baseline:
    """An earlier run: the cluster median and each whole-node pair's median busbw.

    >>> b = Baseline.from_json({"cluster_median_gbps": 48.0, "pairs": [
    ...     {"round": 1, "a": "n1", "b": "n0", "rail": None, "median_gbps": 47.5}]})
    >>> b.pair_gbps("n0", "n1")
    47.5
    """

    cluster_median_gbps: float
    pairs_gbps: Mapping[tuple[str, str], float] = dataclasses.field(default_factory=dict)

    def pair_gbps(self, a: str, b: str) -> float | None:
        return self.pairs_gbps.get(_pair_key(a, b))

    @classmethod
    def from_json(cls, data: object) -> Baseline:
        """Read a verdict's JSON (text or parsed data), as ``hpnet isolate --json`` wrote it."""
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except ValueError as e:
                raise _bad(f"not JSON: {e}") from e
        if not isinstance(data, Mapping):
            raise _bad("not a JSON object")
        median = data.get("cluster_median_gbps")
        if not _positive(median):
            raise _bad(f"cluster_median_gbps is {median!r}, not a positive number")
        assert isinstance(median, (int, float))  # noqa: S101 - _positive holds
        pairs = data.get("pairs", [])
        if not isinstance(pairs, list):
            raise _bad("pairs is not a list")
        return cls(cluster_median_gbps=float(median), pairs_gbps=_read_pairs(pairs))


def _read_pairs(pairs: list[object]) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for i, row in enumerate(pairs):
        if not isinstance(row, Mapping):
            raise _bad(f"pairs[{i}] is not an object")
        a, b, median = row.get("a"), row.get("b"), row.get("median_gbps")
        if not isinstance(a, str) or not isinstance(b, str):
            raise _bad(f"pairs[{i}] has no node names a and b")
        if row.get("rail") is not None or row.get("error") or median is None:
            continue  # per-rail tests and failed ones are no whole-node baseline
        if not _positive(median):
            raise _bad(f"pairs[{i}].median_gbps is {median!r}, not a positive number")
        if row.get("round") == 1:
            out[_pair_key(a, b)] = float(median)
    return out


def _positive(value: object) -> bool:
    """A bandwidth a baseline may hold: a finite number above zero (JSON's NaN and
    Infinity, which Python's reader accepts, and negatives are not).

    >>> [_positive(v) for v in (47.5, 0, -1.0, float("nan"), float("inf"), True, "4")]
    [True, False, False, False, False, False, False]
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return math.isfinite(value) and value > 0


def _bad(what: str) -> InputError:
    return InputError(
        f"baseline: {what}",
        code="bad-baseline",
        fix="pass the --json output of an earlier `hpnet isolate` run",
    )
