"""What the readers of artefacts other than NCCL debug logs find: plain, frozen values.

Each reader (:mod:`~hpnet.artefacts.ras`, :mod:`~hpnet.artefacts.framework`,
:mod:`~hpnet.artefacts.rccl`) is a pure function of text returning these; ``hpnet verify``
judges them (:mod:`~hpnet.artefacts.judge`) and ``hpnet hang`` can join them.
"""

from __future__ import annotations

import dataclasses
from enum import Enum

__all__ = [
    "ArtefactFacts",
    "ArtefactSummary",
    "Kind",
    "Quote",
    "RasComm",
    "RasOpGroup",
    "RasReport",
    "RcclInfo",
    "TorchEvent",
    "WrappedError",
]


class Kind(str, Enum):
    """What an input (or part of it) is."""

    NCCL_LOG = "nccl-log"  # NCCL_DEBUG output: read by hpnet.ncclog
    RAS_TEXT = "ras-text"  # ncclras text report
    RAS_JSON = "ras-json"  # ncclras -f json / SET FORMAT json (2.28.7+)
    TORCH = "torch"  # PyTorch ProcessGroupNCCL / c10d text
    XLA = "xla"  # JAX / XLA / TensorFlow: "NCCL operation X failed: ..."
    WRAPPER = "wrapper"  # vLLM / SGLang / DeepSpeed / CuPy / Horovod raising NCCL's error
    RCCL = "rccl"  # an AMD RCCL log (NCCL's prefixes, RCCL's releases)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Quote:
    """A physical line of the input: ``source:line: text`` as written."""

    source: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.text}"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RasOpGroup:
    """``N ranks have launched up to operation K`` (K 0: not launched any)."""

    op: str  # "AllGather"; "collective" before 2.26 (one counter for all)
    num_ranks: int
    launched: int
    #: the ranks RAS listed under this count (it lists the outliers only)
    ranks: tuple[int, ...] = ()
    #: ``node:pid`` of the listed ranks, as RAS printed them
    where: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RasComm:
    """One communicator as the RAS report tells it."""

    hash: str
    nranks: int | None = None
    status: str | None = None  # RUNNING, INIT, FINALIZE, ABORT, NOCOMM
    errors: str | None = None  # OK, MISMATCH, ERROR, INCOMPLETE, ...
    #: per op: the launched-operation groups, most frequent first (as printed)
    op_groups: tuple[RasOpGroup, ...] = ()
    #: ranks reporting an NCCL error ("Asynchronous error on 2 ranks"), as printed
    error_lines: tuple[str, ...] = ()
    #: ranks RAS has no data from (INCOMPLETE) or that are dead (JSON missing_ranks)
    missing_ranks: tuple[int, ...] = ()
    dead_ranks: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RasReport:
    """An ncclras report, text or JSON."""

    format: str  # "text" or "json"
    nccl_version: str | None = None
    num_nodes: int | None = None
    num_processes: int | None = None
    num_gpus: int | None = None
    #: rows of the communicators table: (status, errors, number of comms, ranks per comm)
    groups: tuple[tuple[str, str, int, int], ...] = ()
    comms: tuple[RasComm, ...] = ()
    #: "3 job processes are considered dead", "Missing communicator data from 2 job processes"
    job_errors: tuple[str, ...] = ()
    dead_processes: int = 0
    evidence: tuple[Quote, ...] = ()

    @property
    def all_ok(self) -> bool:
        """Every communicator RUNNING with errors OK, and no dead or missing process."""
        return (
            bool(self.groups)
            and all(s == "RUNNING" and e == "OK" for s, e, _, _ in self.groups)
            and not self.job_errors
        )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class TorchEvent:
    """A PyTorch ProcessGroupNCCL message."""

    #: timeout (watchdog caught a collective timeout), stuck (heartbeat: the watchdog
    #: got stuck), nccl-error (``NCCL error in: file:line, <error>``), status (the PG's
    #: last enqueued / completed work), aborted (communicator aborted), stack (the Python
    #: stack Flight Recorder kept of the failed collective, torch 2.6 on)
    what: str
    rank: int | None = None
    seq: int | None = None
    op: str | None = None
    numel_in: int | None = None
    numel_out: int | None = None
    timeout_ms: int | None = None
    ran_ms: int | None = None
    stuck_seconds: int | None = None
    last_enqueued: int | None = None
    last_completed: int | None = None
    error: str | None = None  # NCCL's error string (``unhandled system error``)
    nccl_version: str | None = None
    last_error: str | None = None  # the ``Last error:`` NCCL gave
    quotes: tuple[Quote, ...] = ()
    #: the process group the line names (``[PG 0 (default_pg) Rank 7]``, ``[PG ID 1 PG
    #: GUID 5(mesh) Rank 2]``: its name / ID), and the job's global rank (torch's
    #: ``[rank3]:`` prefix; ``rank`` above is the rank the line's own prefix names,
    #: within the group where the group is named)
    pg: str | None = None
    global_rank: int | None = None
    #: a ``stack`` event's Python frames, innermost first, as torch prints them
    #: (``all_reduce from /x/torch/distributed/distributed_c10d.py:2806``)
    frames: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class WrappedError:
    """An NCCL call's failure as a framework or wrapper reports it."""

    via: str  # "xla", "vllm", "sglang", "cupy", "horovod", "wrapper"
    call: str | None  # ncclCommInitRank, ncclCommInitRankConfig, ncclAllReduce, ...
    error: str  # NCCL's error string
    last_error: str | None = None  # XLA's "Last NCCL warning(error) log entry"
    quotes: tuple[Quote, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RcclInfo:
    """An RCCL log: the version it states and its HIP / ROCm versions."""

    version: str | None
    hip: str | None = None
    rocm: str | None = None
    quotes: tuple[Quote, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ArtefactFacts:
    """Everything the artefact readers found in one input."""

    source: str
    kinds: tuple[Kind, ...] = ()
    ras: tuple[RasReport, ...] = ()
    torch: tuple[TorchEvent, ...] = ()
    wrapped: tuple[WrappedError, ...] = ()
    rccl: RcclInfo | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ArtefactSummary:
    """What ``hpnet verify`` reports of one input that is not (only) an NCCL log."""

    source: str
    kinds: tuple[str, ...]  # Kind values
    rccl_version: str | None = None
    #: the NCCL version each RAS report states
    ras_nccl_versions: tuple[str, ...] = ()
    #: watchdog timeouts: ``ALLREDUCE SeqNum 1580 timeout 600000 ms (rank 0)``
    collectives: tuple[str, ...] = ()
    #: NCCL errors a framework reported: ``ncclCommInitRank: unhandled system error``
    errors: tuple[str, ...] = ()
    #: RAS mismatches: who lags at which operation
    lagging: tuple[str, ...] = ()
