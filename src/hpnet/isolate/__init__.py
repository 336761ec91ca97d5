"""``hpnet isolate``: find the bad node, rail (GPU/NIC/port), link or group of a cluster
from inside one job. The decision logic here is pure; an executor runs its tests (the
torch.distributed runner on a cluster, :mod:`hpnet.isolate.simulate` in tests)."""

from __future__ import annotations

from hpnet.isolate.engine import Isolation
from hpnet.isolate.model import (
    SCHEMA_VERSION,
    Baseline,
    ConfigIssue,
    Drift,
    DriftKind,
    Fault,
    IsolateVerdict,
    Measurement,
    Outlier,
    OutlierKind,
    PairResult,
    Round,
    RoundSummary,
    Test,
)
from hpnet.isolate.scoring import Thresholds

__all__ = [
    "SCHEMA_VERSION",
    "Baseline",
    "ConfigIssue",
    "Drift",
    "DriftKind",
    "Fault",
    "IsolateVerdict",
    "Isolation",
    "Measurement",
    "Outlier",
    "OutlierKind",
    "PairResult",
    "Round",
    "RoundSummary",
    "Test",
    "Thresholds",
]
