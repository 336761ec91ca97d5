"""What an NCCL debug log says, per process: the values :mod:`hpnet.ncclog.facts` builds.

A *process* is one ``host:pid`` in the line prefix NCCL writes
(``host:pid:tid [cudaDev] NCCL INFO ...``, ``src/debug.cc``); lines without that
prefix belong to an anonymous process of their input (and launcher tag, when one
says which rank wrote them). Everything here is plain frozen data: the analysis in
:mod:`hpnet.ncclog.report` reads it, ``--json`` prints it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Mapping

__all__ = [
    "RESULT_NAMES",
    "Connection",
    "GdrDecision",
    "LogLine",
    "Membership",
    "NcclLog",
    "Nic",
    "ProcessLog",
    "Transport",
    "TransportKind",
    "parse_transport",
]

#: ncclResult_t (nccl.h.in): what a trail's or a proxy service's return code means
RESULT_NAMES = {
    1: "ncclUnhandledCudaError",
    2: "ncclSystemError",
    3: "ncclInternalError",
    4: "ncclInvalidArgument",
    5: "ncclInvalidUsage",
    6: "ncclRemoteError",
}


class TransportKind(str, enum.Enum):
    """The transport families NCCL names after ``via`` in a connection line."""

    P2P = "P2P"  # GPU to GPU over NVLink or PCIe (P2P/IPC, P2P/CUMEM, P2P/direct pointer)
    SHM = "SHM"  # through host shared memory
    NET = "NET"  # the network module: IB (RDMA), Socket (TCP) or a plugin
    COLLNET = "CollNet"  # in-network reduction (SHARP) through a CollNet plugin
    NVLS = "NVLS"  # NVLink SHARP
    OTHER = "other"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Transport:
    """One ``via ...`` value, split into its parts.

    ``NET/IB/0/GDRDMA`` is kind NET, network ``IB``, NIC index 0 (an index into the
    process's ``NET/IB : Using [0]...`` list), GPUDirect RDMA on. ``NET/IB/1(3)/GDRDMA``
    names a proxy rank 3 (PXN: another GPU's NIC). ``P2P/CUMEM/read`` is kind P2P,
    mechanism ``CUMEM``, flag ``read``.
    """

    raw: str
    kind: TransportKind
    #: P2P/SHM mechanism (``IPC``, ``CUMEM``, ``direct pointer``, ``direct/direct``)
    #: or the network's name (``IB``, ``Socket``, ``AWS Libfabric``, ``IBext_v8``)
    name: str
    nic: int | None = None
    proxy_rank: int | None = None
    gdr: bool = False

    #: the family and name without NIC and flags: ``NET/IB``, ``P2P/CUMEM``
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            if self.kind is TransportKind.OTHER:
                label = self.raw
            else:
                label = f"{self.kind.value}/{self.name}" if self.name else self.kind.value
            object.__setattr__(self, "label", label)


@functools.lru_cache(maxsize=4096)
def parse_transport(text: str) -> Transport:
    """Split what follows ``via`` in a connection line.

    >>> t = parse_transport("NET/IB/1(3)/GDRDMA")
    >>> (t.label, t.nic, t.proxy_rank, t.gdr)
    ('NET/IB', 1, 3, True)
    >>> parse_transport("NET/AWS Libfabric/0/GDRDMA").name
    'AWS Libfabric'
    >>> parse_transport("P2P/CUMEM/read").label
    'P2P/CUMEM'
    >>> parse_transport("SHM/direct/direct").label
    'SHM/direct/direct'
    >>> parse_transport("direct shared memory").label
    'SHM/direct shared memory'
    """
    raw = text.strip()
    if raw == "direct shared memory":  # SHM up to 2.12 (transport/shm.cc)
        return Transport(raw=raw, kind=TransportKind.SHM, name="direct shared memory")
    head, _, rest = raw.partition("/")
    if head == "COLLNET":  # "CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA"
        parts = rest.split("/")
        return Transport(
            raw=raw,
            kind=TransportKind.COLLNET,
            name=parts[0] if parts else "",
            nic=int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None,
            gdr=any(p.startswith("GDRDMA") for p in parts[2:]),
        )
    if head == "NET":
        # NET/<name>/<dev>[(<proxy>)][/GDRDMA[(PCI)]][/Shared]: the name may hold
        # spaces or slashes of its own, so read the parts from the right
        parts = rest.split("/")
        gdr = False
        flags = []
        while parts and not _nic_part(parts[-1]):
            flags.append(parts.pop())
        gdr = any(f.startswith("GDRDMA") for f in flags)
        nic = proxy = None
        if parts and _nic_part(parts[-1]):
            nic, proxy = _nic_numbers(parts.pop())
        return Transport(
            raw=raw,
            kind=TransportKind.NET,
            name="/".join(parts),
            nic=nic,
            proxy_rank=proxy,
            gdr=gdr,
        )
    if head == "P2P":
        name, _, _flags = rest.partition("/")
        for spelled in ("direct pointer", "common device"):
            if rest.startswith(spelled):
                name = spelled
        return Transport(raw=raw, kind=TransportKind.P2P, name=name)
    if head == "SHM":
        return Transport(raw=raw, kind=TransportKind.SHM, name=rest)
    if head.startswith("CollNet") or raw.startswith("CollNet"):
        return Transport(raw=raw, kind=TransportKind.COLLNET, name=rest)
    if head.startswith("NVLS") or raw.startswith("NVLS"):
        return Transport(raw=raw, kind=TransportKind.NVLS, name=rest)
    return Transport(raw=raw, kind=TransportKind.OTHER, name="")


def _nic_part(part: str) -> bool:
    digits = part.split("(", 1)[0]
    return digits.isdigit()


def _nic_numbers(part: str) -> tuple[int, int | None]:
    number, _, proxy = part.partition("(")
    proxy = proxy.rstrip(")")
    return int(number), int(proxy) if proxy.isdigit() else None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Nic:
    """One entry of ``NET/IB : Using [0]mlx5_0:1/RoCE ...`` (or the Socket list)."""

    index: int
    name: str
    port: int | None = None
    #: ``IB``, ``RoCE`` for the IB module; None for sockets and plugins that do not say
    link: str | None = None
    address: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Membership:
    """The process's place in one communicator, from its init lines."""

    comm: str  # the communicator's address in this process (``0x55d0c1e0``)
    rank: int
    nranks: int
    comm_id: str | None = None  # commId / commHash: the same on every member (2.19+)
    cuda_dev: int | None = None
    nvml_dev: int | None = None
    bus_id: str | None = None
    #: ``nNodes`` / ``localRanks``: the NCCL hosts NCCL counted in this communicator and
    #: the ranks on this rank's host (2.20.3+)
    nnodes: int | None = None
    local_ranks: int | None = None
    #: ncclCommSplit children (2.21.5+): the parent communicator's address in this
    #: process and the color the ranks were split by
    parent: str | None = None
    color: int | None = None
    #: ``MNNVL 1``: multi-node NVLink, P2P and NVLS reach other hosts (2.20.3+)
    mnnvl: bool | None = None
    completed: bool = False
    aborted: bool = False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Connection:
    """One peer connection, counted over the channels that print it.

    ``printing_rank`` is the rank whose process wrote the line: the sender, or the
    receiver for ``[receive]`` lines (``transport/net.cc``). ``devices`` hold what NCCL
    prints in brackets: the GPU's bus id in hex up to 2.17, its device index from 2.18.
    """

    printing_rank: int
    src: int
    dst: int
    src_device: str
    dst_device: str
    direction: str | None  # "send", "receive" or None (P2P and SHM print one line)
    transport: Transport
    channels: int


def _log_line(source: str, line_number: int, text: str, count: int, message: str) -> LogLine:
    """A :class:`LogLine` from its fields in order (unpickling).

    >>> import pickle
    >>> line = LogLine(source="a.log", line_number=3, text="x", count=2, message="m")
    >>> pickle.loads(pickle.dumps(line)) == line
    True
    """
    line = _new(LogLine)
    _set_source(line, source)
    _set_line_number(line, line_number)
    _set_text(line, text)
    _set_count(line, count)
    _set_message(line, message)
    return line


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LogLine:
    """A line kept as evidence: where it came from and what it said.

    ``text`` is the input line as written (colour codes and a CR removed), so that a
    quote is always a line of the input; ``message`` is what hpnet read in it (``WARN
    misc/socket.cc:123 <message>`` for a warning), for matching.
    """

    source: str
    line_number: int  # of the first occurrence; 0 when not known
    text: str
    count: int = 1  # how often the log says it (the same process, the same text)
    message: str = ""

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # a worker's folder holds tens of thousands: the dataclass's own state setter
        # looks its fields up for each one, and was 40% of a folder's unpickling
        return _log_line, (self.source, self.line_number, self.text, self.count, self.message)

    def counted(self, count: int) -> LogLine:
        """The same line, said ``count`` times (``dataclasses.replace``'s result, made
        without looking the fields up: a merge makes one per kept line and range)."""
        return _log_line(self.source, self.line_number, self.text, count, self.message)

    def moved(self, lines: int) -> LogLine:
        """The same line, ``lines`` further into its source (a later range's, placed)."""
        return _log_line(self.source, self.line_number + lines, self.text, self.count, self.message)

    def quote(self) -> str:
        """``job.log:12: <the line>``: evidence as a user finds it in the file.

        >>> LogLine(source="job.log", line_number=12, text="n1:1:1 [0] NCCL INFO x").quote()
        'job.log:12: n1:1:1 [0] NCCL INFO x'
        """
        if self.line_number:
            return f"{self.source}:{self.line_number}: {self.text}"
        return f"{self.source}: {self.text}"


# the slots' own setters (C), for :func:`_log_line`: a frozen dataclass's fields are
# set past its __setattr__, as its __init__ does
_new = object.__new__
_slot = vars(LogLine)
_set_source = _slot["source"].__set__
_set_line_number = _slot["line_number"].__set__
_set_text = _slot["text"].__set__
_set_count = _slot["count"].__set__
_set_message = _slot["message"].__set__


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GdrDecision:
    """A ``GPU Direct RDMA Enabled/Disabled ...`` line: what NCCL decided and why.

    ``distance`` / ``level``: the GPU-NIC path type and NCCL_NET_GDR_LEVEL, both as
    NCCL's path-type numbers (graph/topo.h of that release), when the line gives them
    (``(distance 4 > 3)``); ``reason``: the parenthesis after an HCA's name (``no
    module``); ``read``: GPUDirect for sends (``read 0`` / ``read 1``).
    """

    enabled: bool
    distance: int | None
    level: int | None
    hca: str | None
    reason: str | None
    read: int | None
    line: LogLine


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ProcessLog:
    """Everything one process's lines say."""

    key: str  # "host:pid", or "<source>" / "<source>[rank N]" without a prefix
    host: str | None
    pid: int | None
    sources: tuple[str, ...]
    #: the rank a launcher's tag names ([1,N]<stdout>:, N:, [rankN]:), if any
    launcher_rank: int | None
    devices: tuple[int, ...]
    nccl_version: str | None
    #: the releases whose line formats match this process's lines (``2.17.1-2.18.6``,
    #: ``>= 2.24.3``); None when its lines pin nothing (logversions)
    version_range: str | None
    #: the formats contradict each other (lines of two NCCLs under one host:pid)
    version_conflict: bool
    cuda_version: str | None  # the CUDA NCCL was built for (``+cuda12.2``)
    cuda_driver: str | None  # ``cudaDriverVersion 12040`` as 12.4
    host_id: str | None  # NCCL_HOSTID, when the log shows it
    bootstrap: tuple[str, ...]  # ``eth0:10.0.0.5<0>``
    networks: tuple[str, ...]  # ``Using network IB`` / ``Socket`` / a plugin's name
    nics: tuple[Nic, ...]  # the NET/IB (or plugin) device list
    socket_interfaces: tuple[Nic, ...]  # the NET/Socket list
    ib_no_device: (
        bool  # ``NET/IB : No device found.`` (or 2.28+ "Failed to initialize NET plugin IB")
    )
    plugin_notes: tuple[LogLine, ...]  # NET/Plugin lines
    env: tuple[tuple[str, str], ...]  # ``NCCL_X set by environment to Y``
    gdr: tuple[GdrDecision, ...]  # ``GPU Direct RDMA Enabled/Disabled ...`` lines
    #: ``Connected all rings, use ring PXN p GDR g``: the GDR value(s) printed
    ring_gdr: tuple[int, ...]
    #: NVLink SHARP in use (``NVLS comm ... headRank``, ``Connected NVLS tree``)
    nvls: bool
    memberships: tuple[Membership, ...]
    connections: tuple[Connection, ...]
    warnings: tuple[LogLine, ...]
    #: the first line of each thing the process stated, by what it is about:
    #: ``network:IB``, ``nics:IB``, ``nics:Socket``, ``env:NCCL_IB_HCA``, ``ib-no-device``,
    #: ``bootstrap``, ``version``, ``transport:NET/IB/0/GDRDMA``, ``provider``, ...
    lines: Mapping[str, LogLine] = dataclasses.field(default_factory=dict)
    #: every device list NCCL (or a plugin) printed, by network: ``NET/IB : Using [0]...``,
    #: ``NET/Socket : Using [0]eth0:...``, ``NET/FastSocket : Using ...``
    nic_lists: tuple[tuple[str, tuple[Nic, ...]], ...] = ()
    #: network plugins NCCL loaded (``NET/Plugin: Loaded net plugin AWS Libfabric``)
    net_plugins: tuple[str, ...] = ()
    #: plugins whose own lines the process printed: ``NET/FastSocket : ...`` lines, or WARNs
    #: from a plugin's source file (:mod:`hpnet.ncclog.plugins`)
    net_modules: tuple[str, ...] = ()
    #: 2.28+: device-side networking plugins assigned to its communicators
    #: (``GIN GIN_IB_GDAKI``, ``RMA GIN_IB_PROXY``)
    gin: tuple[str, ...] = ()
    #: in-network reduction set up on a device: ``SHARP on mlx5_5:1``
    collnet: tuple[str, ...] = ()
    #: WARN message -> what NCCL's source does after printing it: ``fatal`` (returns an
    #: error), ``nonfatal``, ``mixed``, ``unknown`` (hpnet.ncclog.formats)
    warn_fatal: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: aws-ofi-nccl's libfabric provider, its fabric and how many NICs it found
    providers: tuple[tuple[str, str | None, int | None], ...] = ()
    #: ``%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels``
    channels: tuple[int, int, int, int] | None = None
    #: ``NVLS multicast support is [not ]available``
    nvls_support: bool | None = None
    #: ``file.cc:123 -> N``: the return-code trail of a call that failed (N = ncclResult)
    trails: tuple[LogLine, ...] = ()
    trail_codes: tuple[int, ...] = ()
    #: the process went on (a communicator completed, a connection or channel was set up)
    #: after its first WARN: that warning was not on a failing path
    went_on: bool = False

    def line(self, key: str) -> LogLine | None:
        """The first line that stated ``key`` (see :attr:`lines`)."""
        return self.lines.get(key)

    def lines_of(self, prefix: str) -> list[tuple[str, LogLine]]:
        """The statements whose key starts with ``prefix``, in input order."""
        return [(name, line) for name, line in self.lines.items() if name.startswith(prefix)]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NcclLog:
    """One or more inputs, parsed together."""

    sources: tuple[str, ...]
    processes: tuple[ProcessLog, ...]
    #: lines that are not NCCL's but matter (a framework's NCCL error, a watchdog timeout)
    signals: tuple[LogLine, ...]
    num_lines: int
    num_nccl_lines: int
    #: the inputs in which a line other than an NCCL INFO line holds a word an artefact
    #: reader needs (hpnet.artefacts.words): only those are read again for artefacts
    framework_sources: tuple[str, ...] = ()
    num_bytes: int
    #: evidence lines not kept once the caps were reached (the counts still are)
    num_dropped: int
    #: problems with the input itself (binary data, over-long lines), one sentence each
    input_notes: tuple[str, ...]
    #: bare ``NCCL version X`` lines (rank 0 up to 2.21, without a prefix)
    bare_versions: tuple[str, ...]
    #: nccl-tests' device table: rank -> (host, pid, device)
    placements: tuple[tuple[int, str, int, int], ...] = ()
    #: WARNs pasted without NCCL's prefix, of no known process (``message`` "WARN ...")
    bare_warnings: tuple[LogLine, ...] = ()
    #: communicator memberships beyond the per-process cap: followed, not reported
    num_dropped_memberships: int = 0
    #: NCCL's own diagnostics (2.31+, ``host:pid NCCL DIAG ...``), in input order
    diag: tuple[LogLine, ...] = ()
    #: (source, line, where it stopped) of each crash line whose report says where the
    #: signal stopped its process (hpnet.ncclog.crashes)
    crash_sites: tuple[tuple[str, int, str], ...] = ()


def _restore(cls: type, values: tuple[object, ...]) -> object:
    """An instance of a frozen class below from its fields' values in order (unpickling)."""
    made: object = _new(cls)
    for setter, value in zip(_SETTERS[cls], values, strict=True):
        setter(made, value)
    return made


def _reduce_by_fields(self: object) -> tuple[object, tuple[object, ...]]:
    cls = type(self)
    return _restore, (cls, tuple([get(self) for get in _GETTERS[cls]]))


#: each class's slots' own getters and setters, in field order. A process's records
#: travel pickled between processes (hpnet.ncclog.shards): a frozen dataclass's own
#: state setter looks its fields up for every instance, which made a 12,288-process
#: job's records unpickle in 3.1 s instead of 1.8 (issue 28)
_GETTERS: dict[type, tuple[Callable[[object], object], ...]] = {}
_SETTERS: dict[type, tuple[Callable[[object, object], None], ...]] = {}
for _cls in (Transport, Nic, Membership, Connection, GdrDecision, ProcessLog):
    _slots = [vars(_cls)[field.name] for field in dataclasses.fields(_cls)]
    _GETTERS[_cls] = tuple(slot.__get__ for slot in _slots)
    _SETTERS[_cls] = tuple(slot.__set__ for slot in _slots)
    _cls.__reduce__ = _reduce_by_fields  # type: ignore[method-assign]
