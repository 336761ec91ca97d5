"""The record of one process while an NCCL log is folded, and how it is frozen.

:class:`ProcessFacts` collects what one process's lines said (versions, networks, NICs,
communicator memberships, connections, warnings, evidence lines) under the caps below;
:meth:`ProcessFacts.freeze` turns it into a :class:`~hpnet.ncclog.model.ProcessLog`.
:class:`hpnet.ncclog.facts.LogFolder` routes each event to its process's record.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from hpnet.ncclog.lines import ProcessRef
from hpnet.ncclog.model import (
    Connection,
    GdrDecision,
    LogLine,
    Membership,
    Nic,
    ProcessLog,
    parse_transport,
)
from hpnet.ncclog.versions import VersionRange, empty, format_range, intersect

if TYPE_CHECKING:  # facts.py imports this module: the folder is a type here only
    from hpnet.ncclog.facts import LogFolder

__all__ = [
    "MAX_EVIDENCE",
    "MAX_NOTES",
    "MAX_STATEMENTS",
    "MAX_WARNINGS_PER_PROCESS",
    "ProcessFacts",
    "in_order",
]

#: evidence kept per process and in all (counts continue past the caps)
MAX_WARNINGS_PER_PROCESS = 64
MAX_EVIDENCE = 2000
MAX_NOTES = 32
#: statements (their first lines) kept per process: networks, NIC lists, env echoes, ...
MAX_STATEMENTS = 256
#: ``hashUniqueId`` (init.cc:50 @2.21.5) of an all-zero ncclUniqueId: the commId NCCL
#: 2.18-2.22 print for communicators made by ncclCommSplit, the same for all of them
ZERO_ID_HASH = "0xd6f7ddbca6ef589b"
#: communicator memberships kept per process: a long job re-creating its groups would
#: otherwise grow without bound; the rest are counted (NcclLog.num_dropped_memberships)
MAX_MEMBERSHIPS = 128


class ProcessFacts:
    """The mutable record of one process while the log is folded."""

    def __init__(self, ref: ProcessRef) -> None:
        self.key, self.host, self.pid, self.launcher_rank, _ = ref
        self.sources: dict[str, None] = {}
        self.devices: dict[int, None] = {}
        self.nccl_version: str | None = None
        self.version_range: VersionRange | None = None
        self.version_conflict = False
        #: the release ranges this record's lines narrowed its range by (each once), and
        #: the forms of its frequent lines already asked (hpnet.ncclog.facts)
        self.hints_applied: set[VersionRange] = set()
        self.lazy_forms: set[tuple[object, ...]] = set()
        self.cuda_version: str | None = None
        self.cuda_driver: str | None = None
        self.bootstrap: dict[str, None] = {}
        self.networks: dict[str, None] = {}
        self.nics: tuple[Nic, ...] = ()
        self.socket_interfaces: tuple[Nic, ...] = ()
        self.ib_no_device = False
        self.plugin_notes: dict[str, LogLine] = {}
        self.env: dict[str, str] = {}
        self.gdr: dict[tuple[object, ...], GdrDecision] = {}
        self.ring_gdr: dict[int, None] = {}
        self.nvls = False
        #: the first line of each statement (ProcessLog.lines)
        self.lines: dict[str, LogLine] = {}
        self.nic_lists: dict[str, tuple[Nic, ...]] = {}
        #: networks whose list a line of NCCL 2.4 on set whole (2.3 says one NIC a line)
        self.listed_whole: dict[str, None] = {}
        self.net_plugins: dict[str, None] = {}
        self.net_modules: dict[str, None] = {}
        self.gin: dict[str, None] = {}
        #: WARN message -> NCCL's source's word on it (fatal, nonfatal, mixed, unknown)
        self.warn_fatal: dict[str, str] = {}
        self.collnet: dict[str, None] = {}
        self.providers: dict[tuple[str, str | None, int | None], None] = {}
        self.channels: tuple[int, int, int, int] | None = None
        self.nvls_support: bool | None = None
        self.trails: dict[str, LogLine] = {}
        self.trail_codes: dict[int, None] = {}
        #: a WARN seen and nothing since that shows the process went on; went_on: it did
        self.warned = False
        self.went_on = False
        #: something that shows progress (it would prove a WARN before it was survived)
        self.progressed = False
        self.memberships: list[dict[str, object]] = []
        #: the record still open for each communicator address (closed by Destroy/Abort)
        self.open: dict[str, dict[str, object]] = {}
        self.dropped_memberships = 0
        self.connections: collections.Counter[tuple[object, ...]] = collections.Counter()
        self.warnings: dict[str, LogLine] = {}

    def __getstate__(self) -> dict[str, object]:
        """What differs from a new record: a range's record of a process, unpickled in
        the main process range after range, has most of its 40 fields still empty.
        :attr:`hints_applied` and :attr:`lazy_forms` stay behind: they only spare a
        range's folding from narrowing by a release range twice, which changes nothing."""
        new = _NEW_STATE
        return {
            name: value
            for name, value in self.__dict__.items()
            if value != new[name] and name not in ("hints_applied", "lazy_forms")
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(_NO_REF)  # type: ignore[misc]  # fresh containers, then the state
        self.__dict__.update(state)

    def membership(self, comm: str, fields: Mapping[str, object]) -> dict[str, object]:
        """The open membership for ``comm`` (a new one once the last was closed)."""
        record = self.open.get(comm)
        if record is not None and _compatible(record, fields):
            return record
        if record is None and (unnamed := self._named(comm, fields)) is not None:
            return unnamed
        return self._new_membership({"comm": comm, "closed": False})

    def _named(self, comm: str, fields: Mapping[str, object]) -> dict[str, object] | None:
        """The open membership no line named yet, now named ``comm``, where ``fields``
        fit it: 2.3's "rank 0 nranks 4" (init.cu, before the communicator exists) and
        then its "comm 0x... rank 0 nranks 4" are one communicator."""
        unnamed = self.open.get("?") if comm != "?" else None
        if unnamed is None or not _compatible(unnamed, fields) or not _same_size(unnamed, fields):
            return None
        del self.open["?"]
        unnamed["comm"] = comm
        self.open[comm] = unnamed
        return unnamed

    def _new_membership(self, record: dict[str, object]) -> dict[str, object]:
        if len(self.memberships) < MAX_MEMBERSHIPS:
            self.memberships.append(record)
        else:  # still followed (its lines fold into it), not kept for the report
            self.dropped_memberships += 1
        if not record["closed"]:
            self.open[str(record["comm"])] = record
        return record

    def close(self, comm: str) -> None:
        self.open.pop(comm, None)

    def merge(
        self, later: ProcessFacts, shift: Callable[[LogLine], LogLine], folder: LogFolder
    ) -> None:
        """Fold in what the same process said later in the input (another range).

        The same rules as folding event by event: first version wins, later values of a
        variable win, sets grow, counters add, a later NIC list replaces an earlier one,
        and a communicator record continues the open one it belongs to.
        """
        # each attribute by name (not getattr over a list): a 12,288-process job's
        # ranges make 200k of these merges, most of their sets empty or already known
        self.sources.update(later.sources)
        self.devices.update(later.devices)
        self.bootstrap.update(later.bootstrap)
        self.networks.update(later.networks)
        self.ring_gdr.update(later.ring_gdr)
        self._merge_evidence(later, shift)
        self.warn_fatal.update(later.warn_fatal)
        self.net_plugins.update(later.net_plugins)
        self.net_modules.update(later.net_modules)
        self.gin.update(later.gin)
        self.collnet.update(later.collnet)
        self.providers.update(later.providers)
        self.trail_codes.update(later.trail_codes)
        self.channels = self.channels or later.channels
        if later.nvls_support is not None:
            self.nvls_support = later.nvls_support
        # a warning in an earlier range is survived by progress in a later one
        self.went_on = self.went_on or later.went_on or (self.warned and later.progressed)
        self.warned = (self.warned and not later.progressed) or later.warned
        self.progressed = self.progressed or later.progressed
        self._merge_versions(later)
        # as folding does: a whole list (2.4 on) replaces; 2.3's, one NIC a line, add up
        whole = later.listed_whole
        for network, listed in later.nic_lists.items():
            mine = self.nic_lists.get(network, ())
            self.nic_lists[network] = listed if network in whole else _union(mine, listed)
        if later.nics:  # the list of the network the later part named last
            named = [n for n, listed in later.nic_lists.items() if listed == later.nics]
            self.nics = self.nic_lists[named[0]] if named else _union(self.nics, later.nics)
        if later.socket_interfaces:
            self.socket_interfaces = (
                later.socket_interfaces
                if "Socket" in whole
                else _union(self.socket_interfaces, later.socket_interfaces)
            )
        self.listed_whole.update(whole)
        self.ib_no_device = self.ib_no_device or later.ib_no_device
        self.nvls = self.nvls or later.nvls
        self.env.update(later.env)
        self.dropped_memberships += later.dropped_memberships
        self._merge_memberships(later)
        connections = self.connections  # Counter.update asks isinstance(Mapping) first
        for key, count in later.connections.items():
            connections[key] += count
        for text, line in later.warnings.items():
            if text in self.warnings or len(self.warnings) < MAX_WARNINGS_PER_PROCESS:
                folder.keep_line(self.warnings, line, shift)
            else:
                folder.num_dropped += line.count

    def _merge_evidence(self, later: ProcessFacts, shift: Callable[[LogLine], LogLine]) -> None:
        """The later range's quoted lines, under the caps, with their numbers shifted."""
        for mine, theirs in ((self.plugin_notes, later.plugin_notes), (self.trails, later.trails)):
            for note, line in theirs.items():
                if note not in mine and len(mine) < MAX_NOTES:
                    mine[note] = shift(line)
        for decided, decision in later.gdr.items():
            if decided not in self.gdr and len(self.gdr) < MAX_NOTES:
                self.gdr[decided] = dataclasses.replace(decision, line=shift(decision.line))
        # a later range mostly says again what the first said of a process: its
        # statements are looked at one by one only when some are new (a set difference)
        if later.lines.keys() - self.lines.keys():
            for statement, line in later.lines.items():
                if statement not in self.lines and len(self.lines) < MAX_STATEMENTS:
                    self.lines[statement] = shift(line)

    def _merge_versions(self, later: ProcessFacts) -> None:
        """First version wins; the release ranges intersect (or conflict)."""
        if self.nccl_version is None:
            self.nccl_version, self.cuda_version = later.nccl_version, later.cuda_version
        self.cuda_driver = later.cuda_driver or self.cuda_driver
        if later.version_conflict:
            self.version_conflict = True
        elif later.version_range is not None and not self.version_conflict:
            merged = intersect(self.version_range or (None, None), later.version_range)
            if empty(merged):
                self.version_conflict = True
            else:
                self.version_range = merged

    def _merge_memberships(self, later: ProcessFacts) -> None:
        """A later communicator record continues the open one it belongs to."""
        for record in later.memberships:
            comm = str(record["comm"])
            open_record = self.open.get(comm)
            if open_record is None:  # a range before may hold it unnamed
                open_record = self._named(comm, record)
            if open_record is None or not _compatible(open_record, record):
                self._new_membership(dict(record))
                continue
            for key, value in record.items():
                if key in ("completed", "aborted", "closed"):
                    open_record[key] = bool(open_record.get(key)) or bool(value)
                elif open_record.get(key) is None:
                    open_record[key] = value
            if open_record["closed"]:
                self.close(comm)

    def freeze(self) -> ProcessLog:
        return ProcessLog(
            key=self.key,
            host=self.host,
            pid=self.pid,
            sources=tuple(self.sources),
            launcher_rank=self.launcher_rank,
            devices=tuple(sorted(self.devices)),
            nccl_version=self.nccl_version,
            # lines whose forms no one release prints have no range: which of them came
            # first depends on how the input was cut into ranges, the conflict does not
            version_range=(
                format_range(self.version_range)
                if self.version_range and not self.version_conflict
                else None
            ),
            version_conflict=self.version_conflict,
            cuda_version=self.cuda_version,
            cuda_driver=self.cuda_driver,
            host_id=self.env.get("NCCL_HOSTID"),
            bootstrap=tuple(self.bootstrap),
            networks=tuple(self.networks),
            nics=self.nics,
            socket_interfaces=self.socket_interfaces,
            ib_no_device=self.ib_no_device,
            plugin_notes=in_order(self.plugin_notes.values()),
            env=tuple(sorted(self.env.items())),
            gdr=tuple(sorted(self.gdr.values(), key=lambda d: _at(d.line))),
            ring_gdr=tuple(sorted(self.ring_gdr)),
            nvls=self.nvls,
            memberships=tuple(_membership(m) for m in self.memberships if "rank" in m),
            connections=tuple(
                _connection(key, count)
                for key, count in sorted(self.connections.items(), key=_order)
            ),
            warnings=in_order(self.warnings.values()),
            lines=dict(sorted(self.lines.items(), key=lambda item: _at(item[1]))),
            nic_lists=tuple(self.nic_lists.items()),
            net_plugins=tuple(self.net_plugins),
            net_modules=tuple(self.net_modules),
            gin=tuple(self.gin),
            collnet=tuple(self.collnet),
            warn_fatal=dict(self.warn_fatal),
            providers=tuple(self.providers),
            channels=self.channels,
            nvls_support=self.nvls_support,
            trails=in_order(self.trails.values()),
            trail_codes=tuple(self.trail_codes),
            went_on=self.went_on,
        )


_NO_REF: ProcessRef = ("", None, None, None, None)
#: a new record's fields (what a pickled record leaves out)
_NEW_STATE = dict(vars(ProcessFacts(_NO_REF)))


def _same_size(record: Mapping[str, object], fields: Mapping[str, object]) -> bool:
    """The same number of ranks, both said (``nranks`` or ``nRanks``)."""
    size = record.get("nranks")
    return size is not None and size == (fields.get("nranks") or fields.get("nRanks"))


def _compatible(record: Mapping[str, object], fields: Mapping[str, object]) -> bool:
    """The same membership: no rank or commId that disagrees."""
    return all(
        record.get(k) is None or fields.get(k) is None or record[k] == fields[k]
        for k in ("rank", "commId")
    )


def _union(first: tuple[Nic, ...], then: tuple[Nic, ...]) -> tuple[Nic, ...]:
    """NIC lists of one process said one NIC a line (2.3) in two parts of the input, by
    name and port."""
    if not then:
        return first
    known = {(n.name, n.port) for n in first}
    extra = [n for n in then if (n.name, n.port) not in known]
    if not extra:
        return first
    used = {n.index for n in first}
    if any(n.index in used for n in extra):  # positions (2.3 lists one interface a line)
        extra = [dataclasses.replace(n, index=len(first) + i) for i, n in enumerate(extra)]
    return first + tuple(extra)


def _at(line: LogLine) -> tuple[str, int]:
    return (line.source, line.line_number)


def in_order(lines: Iterable[LogLine]) -> tuple[LogLine, ...]:
    """Evidence in input order (blocks may report it in another)."""
    return tuple(sorted(lines, key=_at))


def _order(item: tuple[tuple[object, ...], int]) -> tuple[object, ...]:
    src, _, dst, _, direction, via = item[0]
    return (src, dst, str(direction), str(via))


def _number(value: object) -> int | None:
    if value is None:  # most of a record's fields: not said
        return None
    text = value if type(value) is str else str(value)
    # most are a rank or a device: digits, read without stripping a sign first
    return int(text) if text.isdigit() or text.lstrip("-").isdigit() else None


def _text(value: object) -> str | None:
    return str(value) if value else None


def _membership(record: dict[str, object]) -> Membership:
    get = record.get
    rank = _number(get("rank"))
    nranks = _number(get("nranks"))
    comm_id = _text(get("commId"))
    mnnvl = _number(get("MNNVL"))
    return Membership(
        comm=str(record["comm"]),
        rank=rank if rank is not None else -1,
        nranks=nranks if nranks is not None else 0,
        # the hash of an all-zero unique id names no communicator: NCCL 2.18-2.22 print it
        # for every ncclCommSplit child (hashUniqueId(job->commId) of a calloc'ed job,
        # init.cc:1541 @2.21.5), so it would merge every split communicator into one
        comm_id=None if comm_id == ZERO_ID_HASH else comm_id,
        cuda_dev=_number(get("cudaDev")),
        nvml_dev=_number(get("nvmlDev")),
        bus_id=_text(get("busId")),
        nnodes=_number(get("nNodes")),
        local_ranks=_number(get("localRanks")),
        parent=_text(get("parent")),
        color=_number(get("color")),
        mnnvl=bool(mnnvl) if mnnvl is not None else None,
        completed=bool(get("completed")),
        aborted=bool(get("aborted")),
    )


def _connection(key: tuple[object, ...], count: int) -> Connection:
    src_value, src_dev, dst_value, dst_dev, direction, via = key
    src, dst = int(str(src_value)), int(str(dst_value))
    return Connection(
        # CollNet lines name one rank (dst -1): the printing one
        printing_rank=dst if direction == "receive" and dst >= 0 else src,
        src=src,
        dst=dst,
        src_device=str(src_dev),
        dst_device=str(dst_dev),
        direction=str(direction) if direction else None,
        transport=parse_transport(str(via)),
        channels=count,
    )
