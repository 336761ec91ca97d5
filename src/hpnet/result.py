"""hpnet's one result vocabulary: what a command found, what stopped it, what it expected.

Every command speaks these words, whatever it judges:

- :class:`Finding`: something a command concludes (a failure signature in an NCCL
  log, a note of the environment resolution), with a :class:`Severity`;
- :class:`Problem`: something that went wrong or is wrong (a file that could not be
  read, a reason a node is not ready), with a stable kebab-case code;
- :class:`Expectation`: what a run should show: a transport (``verify --expect``)
  and/or a bus-bandwidth floor (``bench --min-busbw``, a profile's reference);
- :class:`Status` (a judgement: PASS, WARN, FAIL, SKIP) and :class:`Verdict` (READY
  or NOT READY).

The enums are ``str`` enums: JSON (:func:`hpnet.jsonout.to_data`) writes their values,
and ``str()`` / f-strings show the value too (``f"{Severity.ERROR}"`` is ``error``).
"""

from __future__ import annotations

import dataclasses
import enum

__all__ = ["Expectation", "Finding", "Problem", "Severity", "Status", "Verdict"]


class _Value(str, enum.Enum):
    """A ``str`` enum whose ``str()`` and ``format()`` are its value on every Python
    (3.11 made a plain ``str, Enum`` mixin format as ``Class.NAME``)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, format_spec: str) -> str:
        return format(str(self.value), format_spec)


class Severity(_Value):
    """How much a :class:`Finding` matters."""

    ERROR = "error"  # something fails, or will
    WARNING = "warning"  # it works, worse than it could, or may bite later
    INFO = "info"  # worth knowing, nothing to fix


class Status(_Value):
    """A check's or a gate's judgement."""

    PASS = "PASS"  # noqa: S105 - a status, not a password
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"  # the judgement does not apply here, or its facts are not available


class Verdict(_Value):
    """``hpnet check``'s answer for a node (or a cluster)."""

    READY = "READY"
    NOT_READY = "NOT READY"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """Something a command concludes: a known failure signature in an NCCL log, a
    conclusion drawn from the log's structure, a note of ``hpnet env``'s resolution.

    >>> Finding(id="nccl-too-new", severity=Severity.WARNING, title="NCCL 9.9 is newer").title
    'NCCL 9.9 is newer'
    """

    #: kebab-case and stable (``socket-fallback``, ``nccl-too-new``)
    id: str
    severity: Severity
    #: one sentence: what was found
    title: str
    #: why it happens ("" where the title says it all)
    cause: str = ""
    #: what to do about it ("" where nothing is to be done)
    fix: str = ""
    #: lines of the input that show it, each ``file:line: the line as written``
    evidence: tuple[str, ...] = ()
    #: what hpnet concludes from the lines, in words (never a quote)
    conclusions: tuple[str, ...] = ()
    #: lines (or processes) that show it
    count: int = 1
    #: the processes (``host:pid``) it was seen in
    processes: tuple[str, ...] = ()
    #: a generic consequence (abort, timeout, "unhandled system error") of a cause
    #: that other findings name: listed after them
    consequence: bool = False
    #: the log shows NCCL or the job failing here (not a choice that costs speed)
    fatal: bool = False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """Something that is wrong or went wrong: a fact that could not be gathered (the
    result is partial), or a reason a node is not ready.

    >>> Problem(code="sysfs-unreadable", what="cannot read /sys/class/infiniband").impact is None
    True
    """

    #: kebab-case and stable (``sysfs-unreadable``), or for ``hpnet check`` where it was
    #: found: ``doctor:memlock``, ``verify:socket-fallback``, ``bandwidth:intra-node``
    code: str
    #: one sentence: what is wrong
    what: str
    #: the file, attribute or command it concerns ("" where none)
    where: str = ""
    #: for ``hpnet check``: how much it matters, 1 (worst) to 5 (docs/check-schema.md);
    #: None for a fact-gathering problem
    impact: int | None = None
    #: what shows it
    evidence: tuple[str, ...] = ()
    #: the command or setting that fixes it
    fix: str | None = None
    #: for ``hpnet check``: it stops NCCL or the job (a doctor FAIL, a benchmark that
    #: failed or gave wrong results, NCCL's fatal error), so it is listed before every
    #: problem that only costs speed or warns, whatever their impact
    fails: bool = False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Expectation:
    """What a run should show. Every part is optional; a part left None is not judged.

    The transport part is what ``hpnet verify --expect net=ib,gdr`` holds an NCCL
    log's inter-node connections against; the bandwidth part is the floor
    ``hpnet bench --min-busbw`` (or a profile's reference) holds the bus bandwidth to.

    >>> Expectation(net="ib", gdr=True).describe()
    'net=ib,gdr'
    >>> Expectation(busbw_gbps=300.0, op="all_reduce").describe()
    'all_reduce busbw>=300 GB/s'
    """

    #: the network the inter-node traffic must use: ``ib``, ``socket``, a plugin's name
    net: str | None = None
    #: GPUDirect RDMA must be used (True) or not (False) between hosts
    gdr: bool | None = None
    #: the least bus bandwidth, GB/s
    busbw_gbps: float | None = None
    #: the collective the floor is for (``all_reduce``); None: every op measured
    op: str | None = None
    #: compare rows at or above this size; None: the largest size measured
    min_size: int | None = None
    #: hosts the reference ran across; a multi-host figure does not apply inside one host
    hosts: int | None = None
    #: where the expectation comes from, for the report ("--min-busbw 300", "profile ...")
    source: str = ""

    def describe(self) -> str:
        """The expectation in the words of ``--expect`` (``net=ib,gdr``), then the floor."""
        parts = [f"net={self.net}"] if self.net else []
        if self.gdr is not None:
            parts.append("gdr" if self.gdr else "no-gdr")
        if self.busbw_gbps is not None:
            parts.append(f"{self.op + ' ' if self.op else ''}busbw>={self.busbw_gbps:g} GB/s")
        return ",".join(parts)
