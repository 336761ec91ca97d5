"""A classified line of an NCCL log (:class:`Event`) and the process it names
(:data:`ProcessRef`): what :mod:`hpnet.ncclog.lines` makes of each line and
:mod:`hpnet.ncclog.facts` folds into per-process facts. Picklable without
``__dict__``, for blocks scanned in worker processes (``verify --jobs``).
"""

from __future__ import annotations

from hpnet.ncclog.versions import VersionRange, hint_for

__all__ = ["Event", "ProcessRef", "warn_event"]

#: (key, host, pid, launcher rank, cuda device) of the process that wrote a line
ProcessRef = tuple[str, "str | None", "int | None", "int | None", "int | None"]


class Event:
    """A classified line: ``kind``, who wrote it, how often, and what it says.

    ``data`` is a tuple whose shape depends on ``kind`` (see :func:`classify`);
    ``text`` is the message (after ``NCCL INFO`` / ``NCCL WARN``) for evidence.
    """

    __slots__ = (
        "count", "data", "hint", "kind", "line_number", "process", "raw", "source", "text",
    )  # fmt: skip

    def __init__(
        self,
        kind: str,
        process: ProcessRef | None,
        data: tuple[object, ...] = (),
        text: str = "",
        source: str = "",
    ) -> None:
        self.kind = kind
        self.process = process
        self.data = data
        self.text = text
        self.source = source
        self.count = 1
        self.line_number = 0
        #: the input line as written (colour codes and CR removed), for kinds that are
        #: quoted as evidence (:data:`LOCATED_KINDS`); set by the scanner
        self.raw = ""
        #: the NCCL releases that print this line in this form (logversions)
        self.hint: VersionRange | None = None

    def __repr__(self) -> str:
        return f"Event({self.kind!r}, {self.process!r}, {self.data!r}, count={self.count})"

    def __reduce__(self) -> tuple[object, ...]:
        # picklable without __dict__, for blocks scanned in worker processes
        return (_rebuild, (self.kind, self.process, self.data, self.text, self.source,
                           self.count, self.line_number, self.hint, self.raw))  # fmt: skip


def _rebuild(  # noqa: PLR0917 - pickle calls it with the saved fields in order
    kind: str,
    process: ProcessRef | None,
    data: tuple[object, ...],
    text: str,
    source: str,
    count: int,
    line_number: int,
    hint: VersionRange | None,
    raw: str,
) -> Event:
    event = Event(kind, process, data, text, source)
    event.count = count
    event.line_number = line_number
    event.hint = hint
    event.raw = raw
    return event


def warn_event(process: ProcessRef | None, where: str | None, message: str, source: str) -> Event:
    """A WARN line's event: ``where`` its ``file:line`` (None where not said)."""
    event = Event("warn", process, (where,), message, source)
    event.hint = hint_for("warn", message)
    return event
