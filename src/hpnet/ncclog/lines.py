"""One distinct NCCL log line -> one :class:`Event`.

Line shapes (NCCL ``src/debug.cc``; docs/nccl-log-formats.md lists them with the
releases that print each form)::

    [launcher tags] [timestamp] host:pid:tid [cudaDev] NCCL INFO <message>
    [launcher tags] [timestamp] host:pid:tid [cudaDev] file.cc:123 NCCL WARN <message>
    [launcher tags] NCCL version 2.11.4+cuda11.4        (rank 0, up to 2.21)

Launcher tags: Open MPI ``[1,3]<stdout>:``, srun ``-l`` ``3: ``, torchrun
``[rank3]:`` / ``[default3]:``, and a bare ``[3] `` some wrappers print. Hosts are
cut at the first dot by NCCL (``getHostName``), pids and tids are decimal.

Messages are matched by their first words and read with the format strings of the
NCCL releases that print them; a line this module does not know is counted as
``other`` and, if it reads like a failure, kept as ``notable`` evidence.
"""

from __future__ import annotations

import re

from hpnet.ncclog.versions import VersionRange, hint_for

__all__ = ["EVIDENCE_KINDS", "Classifier", "Event", "ProcessRef", "classify"]

#: kinds printed per connection or communicator: their version hints are computed for
#: the first few of each process only (hpnet.ncclog.facts), their message kept in ``text``
LAZY_HINT_KINDS = frozenset({"connection", "comm"})
#: kinds whose repetition by the same process changes nothing in what is folded
IDEMPOTENT = frozenset(
    {
        "network", "env", "gdr", "plugin", "ib-no-device", "ib-failed", "version",
        "cuda-driver", "bootstrap", "net-list", "net-iface", "nvls", "ring-gdr",
        "connected", "notable",
        # a connection a process reports again (a new communicator generation on the
        # same ranks and NIC) adds channels to a count nothing reads
        "connection",
    }
)  # fmt: skip
#: distinct prefixes and messages remembered per scan (a block, or a worker's range)
MAX_CACHED = 200_000
#: kinds whose line numbers are looked up (they are shown as evidence)
EVIDENCE_KINDS = frozenset({"warn", "signal", "notable", "bare-version"})

#: (key, host, pid, launcher rank, cuda device) of the process that wrote a line
ProcessRef = tuple[str, "str | None", "int | None", "int | None", "int | None"]


class Event:
    """A classified line: ``kind``, who wrote it, how often, and what it says.

    ``data`` is a tuple whose shape depends on ``kind`` (see :func:`classify`);
    ``text`` is the message (after ``NCCL INFO`` / ``NCCL WARN``) for evidence.
    """

    __slots__ = ("count", "data", "hint", "kind", "line_number", "process", "source", "text")

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
        #: the NCCL releases that print this line in this form (logversions)
        self.hint: VersionRange | None = None

    def __repr__(self) -> str:
        return f"Event({self.kind!r}, {self.process!r}, {self.data!r}, count={self.count})"

    def __reduce__(self) -> tuple[object, ...]:
        # picklable without __dict__, for blocks scanned in worker processes
        return (_rebuild, (self.kind, self.process, self.data, self.text, self.source,
                           self.count, self.line_number, self.hint))  # fmt: skip


def _rebuild(  # noqa: PLR0917 - pickle calls it with the saved fields in order
    kind: str,
    process: ProcessRef | None,
    data: tuple[object, ...],
    text: str,
    source: str,
    count: int,
    line_number: int,
    hint: VersionRange | None,
) -> Event:
    event = Event(kind, process, data, text, source)
    event.count = count
    event.line_number = line_number
    event.hint = hint
    return event


# ---------------------------------------------------------------- the line prefix

#: ``host:pid:tid [dev]`` and, on WARN lines, `` file.cc:line`` (searched from the end
#: of the text before ``NCCL INFO``/``NCCL WARN``). 2.30.7 adds the function, ``file.cc:123
#: (func)`` ("[%d] %s:%d (%s) NCCL WARN %s\n", debug.cc:345 @2.30.7); aws-ofi-nccl passes
#: ``__PRETTY_FUNCTION__`` as the file, spaces and parentheses included (``int
#: nccl_net_ofi_rdma_connect(...):123``, include/nccl_ofi_log.h @v1.21.1)
_PREFIX = re.compile(
    r"(?P<host>[^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>-?\d+)\]"
    r"(?: (?P<where>[^\s\[\]](?:[^\[\]]*?[^\s\[\]])?:\d+)(?: \((?P<func>[^()\s]*)\))?)?\s*$"
)
#: timestamps that log collectors glue in front of the host (CloudWatch, kubectl
#: --timestamps, NCCL 2.26+'s ``[2026-11-21 23:50:29]``), removed before the host is read
_TIMESTAMP = re.compile(r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?")
_OMPI_TAG = re.compile(r"\[\d+,(\d+)\]<std(?:out|err)>:")
#: torchrun ``[rank3]:`` / ``[default3]:``, TorchX ``[trainer3]:`` / ``[trainer0|3]:``
_TORCHRUN_TAG = re.compile(r"\[[A-Za-z_]*?(\d+)(?:\|\d+)?\]:")
_SRUN_TAG = re.compile(r"^\s*(\d+): ")
_BRACKET_RANK = re.compile(r"^\[(\d+)\] ")


#: what NCCL can print as a host: gethostname() cut at the first '.' (getHostName,
#: misc/utils.cc), with '%' and '/' made '-' from 2.29.2 (debug.cc:51 @2.29.2)
_HOSTNAME = re.compile(r"[A-Za-z0-9_-]+")
#: text before the host that is a launcher's tags and nothing else
_LAUNCHER_ONLY = re.compile(
    r"\s*(?:(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: |\[[A-Za-z_]*\d+(?:\|\d+)?\]:|\[\d+\] )\s*)*"
)
#: hosts remembered per pid, to recover a host glued to text before it
MAX_HOSTS = 4096


def _launcher_rank(tags: str) -> int | None:
    for pattern in (_OMPI_TAG, _TORCHRUN_TAG, _SRUN_TAG, _BRACKET_RANK):
        found = pattern.search(tags)
        if found:
            return int(found.group(1))
    return None


# ---------------------------------------------------------------- messages

_NUM = r"(-?\d+)"
#: a connection after the channel number is erased (logscan): ``Channel : 2[2] -> 3[3]
#: [send] via NET/IB/0/GDRDMA``; 2.4-2.6 say ``Ring`` and print NET peers without
#: brackets; some transcriptions drop the arrow
_CONNECTION = re.compile(
    r"^(?:Channel|Ring) : (\d+)(?:\[([0-9a-fA-Fx]+)\])?\s+(?:->\s+)?(\d+)(?:\[([0-9a-fA-Fx]+)\])?"
    r"(?: \[(send|receive)\])? via (.+?)\s*$"
)
#: CollNet has no peer rank: ``CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA``
_COLLNET = re.compile(r"^(?:CollNet|Coll) \d+(?:/\d+)? : (\d+) \[(send|receive)\] via (.+?)\s*$")
_RING_ORDER = re.compile(r"^(?:Channel|Ring) :((?:\s+-?\d+)+)\s*$")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:[-+.\w]*?\+cuda(\d+\.\d+))?")
_DRIVER = re.compile(r"^cudaDriverVersion (\d+)")
_BOOTSTRAP = re.compile(r"^Bootstrap ?: Using (?:\[\d+\])?(\S+)")
#: one device of the list: `` [%d]%s:%d/%s`` (net_ib.cc:247 @2.12.7), from 2.30.7 with an
#: optional ``:rail`` and ``:plane`` after the port (`` [0]mlx5_0:1:3/IB``, ``:`` + ``:2``
#: for a plane without rail: net_ib/init.cc:494-504 @2.30.7)
_NIC = re.compile(r"\[(\d+)\]([^\s:\[\]=]+)(?::(\d+))?(?::\d*(?::\d+)?)?(?:/(\w+))?(?::(\S+))?")
#: NCCL_IB_MERGE_NICS (2.20.3-2.23.4): `` [%d]={`` + ``[%d] %s:%d/%s`` joined by ``, `` +
#: ``}`` (net_ib.cc:313 @2.20.3); the outer index is the one ``via NET/IB/N`` names
_MERGED_NIC = re.compile(r"\[(\d+)\]=\{([^}]*)\}")
_MERGED_PART = re.compile(r"\[\d+\] ([^\s:\[\],]+):(\d+)/(\w+)")
_NET_LIST = re.compile(r"^NET/(\S+?) ?: Using (.*?)\s*(?:;\s*OOB (\S+))?\s*$")
_NET_OLD_IFACE = re.compile(r"^NET : Using interface (\S+)")
_NETWORK = re.compile(r"^Using network (.+?)\s*$")
_ASSIGNED = re.compile(r"^Assigned NET plugin (.+?) to comm")
_PLUGIN_FAILED = re.compile(r"^Failed to initialize NET plugin (.+?)\s*$")
_SOCKET_NIC = re.compile(r"\[(\d+)\]([^\s:\[\]]+):(\S+)")
_ENV = re.compile(r"^(NCCL_\w+) set (?:by environment )?to (.*?)\.?\s*$")
_LAST_VERBS_LIB = re.compile(r"^Count not open libibverbs\.so\.1\s*$")
_RING_GDR = re.compile(r"^Connected all rings(?:, use ring PXN (\d+) GDR (\d+))?")
#: ``name value`` pairs of the communicator lines (init.cc ``ncclCommInitRank comm %p rank %d
#: nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx``, ``ncclCommSplit ... parent %p
#: color %d key %d`` 2.21.5+, ``comm %p rank %d nRanks %d nNodes %d localRanks %d localRank
#: %d MNNVL %d`` 2.20.3+): addresses and bus ids are hex, everything else decimal (a
#: hex-looking rank is not a rank)
_FIELDS = re.compile(
    r"\b(?:(comm|busId|commId|commHash|parent) (0x[0-9a-fA-F]+|[0-9a-fA-F]+)"
    r"|(rank|nranks|nRanks|cudaDev|nvmlDev|nNodes|localRanks|color|MNNVL) (-?\d+))\b"
)
_STATE = re.compile(r"- (Init|Abort|Destroy) (START|COMPLETE)")
#: failures NCCL logs at INFO level (``misc/ibvwrap.cc``, ``NET/IB : No device found``,
#: the ``file.cc:line -> N`` return-code trail)
_NOTABLE = re.compile(
    r"No device found|returned 0 devices|[Ff]ail|[Ee]rror|Could not|[Aa]bort|timed? ?out"
    r"|Disabled|not found|Unable|unable|-> \d+\b"
)
#: lines from frameworks and tools around NCCL that say a collective failed
_SIGNAL = re.compile(
    r"NCCL error|nccl\w*Error|ncclSystemError|ncclInternalError|ncclRemoteError"
    r"|ncclInvalidUsage|ncclUnhandledCudaError|Watchdog caught collective operation timeout"
    r"|Test NCCL failure|NCCL communicator was aborted|DistBackendError"
    r"|unhandled system error|remote process exited or there was a network error"
    r"|NCCL WARN|<warn>"
)


#: what may stand before a bare ``NCCL version`` line: launcher tags and spaces only
_BARE_VERSION_PREFIX = re.compile(r"\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: |\[\w+\]:?)?\s*")


#: nccl-tests' device table: which process and host each rank runs in
_NCCL_TESTS_RANK = re.compile(
    r"#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)"
)
#: a line of program source in a traceback (``raise RuntimeError(f"NCCL error...")``)
_CODE_LINE = re.compile(r"\s*(?:raise |File \"|except |if |return |\^)")


def _fields(message: str) -> dict[str, str]:
    """``{"comm": "0x55d0", "rank": "3", ...}``: the first value of each name wins."""
    found: dict[str, str] = {}
    for hex_name, hex_value, name, value in _FIELDS.findall(message):
        found.setdefault(hex_name or name, hex_value or value)
    return found


#: what an INFO message says: (kind, data, text kept as evidence)
Message = tuple[str, tuple[object, ...], str]
_OTHER: Message = ("other", (), "")


def _m(kind: str, _process: None, data: tuple[object, ...] = (), text: str = "") -> Message:
    return (kind, data, text) if kind != "other" else _OTHER


def _message_event(message: str, process: None, source: str) -> Message:
    """Read an INFO message (what follows ``NCCL INFO``): ``(kind, data, text)``.

    Pure of the process that wrote it, so the reading of a message is cached and a
    message all processes print (``Using network IB``) is read once.
    """
    head = message[:8]
    if head.startswith(("Channel", "Ring ")):
        found = _CONNECTION.match(message)
        if found:
            src, src_dev, dst, dst_dev, direction, via = found.groups()
            return _m(
                "connection",
                process,
                (int(src), src_dev or "", int(dst), dst_dev or "", direction, via),
            )
        ring = _RING_ORDER.match(message)
        if ring:
            return _m("ring", process, tuple(int(r) for r in ring.group(1).split()))
        return _m("other", process)
    if head.startswith(("CollNet ", "Coll ")):
        found = _COLLNET.match(message)
        if found:
            rank, direction, via = found.groups()
            return _m("connection", process, (int(rank), "", -1, "", direction, via))
    if head.startswith("NCCL ver"):
        found = _VERSION.search(message)
        if found:
            return _m("version", process, found.groups())
    if head.startswith("cudaDriv"):
        found = _DRIVER.match(message)
        if found:
            number = int(found.group(1))
            return _m("cuda-driver", process, (f"{number // 1000}.{number % 1000 // 10}",))
    if head.startswith("Bootstra"):
        found = _BOOTSTRAP.match(message)
        if found:
            return _m("bootstrap", process, (found.group(1),))
    if head.startswith("NET"):
        return _net_event(message, process)
    if head.startswith("Failed t") and "libibverbs" in message:
        return _m("ib-no-device", process, (), message)  # 2.11.4-2.29.7 INFO form
    if head.startswith("Count no") and _LAST_VERBS_LIB.match(message):
        # 2.30.3+: "Count not open %s" (sic) per library tried, NCCL_IBVERBS_LIB, then
        # libibverbs.so, then libibverbs.so.1 (ibvsymbols.cc:78-86 @2.30.7): only the
        # last one failing means no libibverbs (libibverbs.so is a -dev package's link)
        return _m("ib-no-device", process, (), message)
    if head.startswith("Net/IB: ") and "returned 0 devices" in message:
        return _m("ib-no-device", process, (), message)  # 2.3: call to devices() returned 0
    if head.startswith("Using ne"):
        found = _NETWORK.match(message)
        if found:
            return _m("network", process, (found.group(1),))
    if head.startswith("Assigned"):  # 2.27.3+: "Assigned NET plugin IB to comm"
        found = _ASSIGNED.match(message)
        if found:
            return _m("network", process, (found.group(1),))
    if head.startswith(("Initiali", "Failed t", "Successf", "Disablin")) and "plugin" in message:
        failed = _PLUGIN_FAILED.match(message)
        if failed and failed.group(1) == "IB":
            return _m("ib-failed", process, (), message)  # 2.28.3+: IB found no device
        return _m("plugin", process, (), message)
    if head.startswith("NCCL_"):
        found = _ENV.match(message)
        if found:
            return _m("env", process, found.groups())
    if (
        "Init START" in message
        or "Init COMPLETE" in message
        or "- Abort" in message
        or ("- Destroy" in message)
    ):
        state = _STATE.search(message)
        fields = _fields(message)
        if state and "rank" in fields:
            return _m("comm", process, (state.group(1), state.group(2), fields))
    if head.startswith("comm 0x") and ("nRanks" in message or "nranks" in message):
        fields = _fields(message)
        if "rank" in fields:
            return _m("comm", process, ("Info", "", fields))
    if head.startswith("rank ") and "nranks" in message:  # 2.3: "rank 0 nranks 4"
        fields = _fields(message)
        return _m("comm", process, ("Info", "", fields))
    if head.startswith(("NVLS com", "Connected NVLS")):
        return _m("nvls", process)
    if head.startswith("Connecte"):
        found = _RING_GDR.match(message)
        if found and found.group(2) is not None:
            return _m("ring-gdr", process, (int(found.group(2)),))
        return _m("connected", process)
    if "GPU Direct RDMA" in message:
        return _m("gdr", process, (), message)
    if _NOTABLE.search(message):
        return _m("notable", process, (), message)
    return _m("other", process)


def _net_event(message: str, process: None) -> Message:
    if message.startswith("NET/Plugin") or message.startswith("NET/Plugin:"):
        return _m("plugin", process, (), message)
    if "No device found" in message:
        return _m("ib-no-device", process, (), message)
    if "GPU Direct RDMA" in message:
        return _m("gdr", process, (), message)
    old = _NET_OLD_IFACE.match(message)
    if old:  # 2.3: "NET : Using interface eth0:10.0.0.1<0>", one line per interface
        name, _, address = old.group(1).partition(":")
        return _m("net-iface", process, (name, address or None))
    found = _NET_LIST.match(message)
    if found:
        network, listing, oob = found.groups()
        nics: tuple[tuple[int, str, int | None, str | None, str | None], ...]
        if network == "Socket":  # [0]eth0:10.0.0.1<0>: an interface and its address
            nics = tuple(
                (int(i), name, None, None, address)
                for i, name, address in _SOCKET_NIC.findall(listing)
            )
        else:
            merged = []
            for found in _MERGED_NIC.finditer(listing):  # one device made of several ports
                parts = _MERGED_PART.findall(found.group(2))
                links = {link for _, _, link in parts}
                name = "+".join(f"{dev}:{port}" for dev, port, _ in parts) or found.group(0)
                link = links.pop() if len(links) == 1 else None
                merged.append((int(found.group(1)), name, None, link, None))
            if merged:
                listing = _MERGED_NIC.sub(" ", listing)
            single = [
                (int(i), name, int(port) if port else None, link or None, address or None)
                for i, name, port, link, address in _NIC.findall(listing)
            ]
            nics = tuple(sorted(merged + single, key=lambda nic: nic[0]))
        if nics or network in {"IB", "Socket"}:
            return _m("net-list", process, (network, nics, oob))
    if _NOTABLE.search(message):
        return _m("notable", process, (), message)
    return _m("other", process)


#: where a second NCCL line starts inside a message (`` | host:pid:tid [d] NCCL INFO``)
_GLUED = re.compile(r"(?:\s\|\s*|\s)\S*:\d+:\d+ \[-?\d+\](?: \S+:\d+)? NCCL (?:INFO|WARN) ")
#: the prefix of an NCCL line glued to the end of another (no newline between them):
#: the host is the run of host characters before ``:pid:tid``, possibly with the first
#: line's last word in front of it (``...via NET/IB/0/GDRDMAnode2:1008:1008 [0] NCCL INFO``)
_GLUED_PREFIX = re.compile(
    rb"([\w-]*):(\d+):\d+ \[-?\d+\](?: [^\[\]\n]*?:\d+(?: \([^()\s]*\))?)? NCCL (?:INFO|WARN) "
)
#: how a connection line ends (transport/net.cc, p2p.cc, shm.cc): a word glued to a host
#: after it is cut there when the host is not known yet
_TRANSPORT_TAIL = re.compile(rb"(?:GDRDMA(?:\(PCI\))?|Shared|read|CE|CUMEM|IPC|MNNVL|direct)")


def _first_line(message: str) -> str:
    """The message without another process's line glued to its end."""
    if "NCCL INFO " in message or "NCCL WARN " in message:
        glued = _GLUED.search(message)
        if glued:
            return message[: glued.start()].rstrip(" |")
    return message


class Classifier:
    """Classifies lines, remembering what each distinct prefix says."""

    __slots__ = ("_emitted", "_hosts", "_messages", "_prefixes")

    def __init__(self) -> None:
        #: lines of IDEMPOTENT kinds already reported (a process repeating "Using network
        #: IB" for every communicator says nothing new)
        self._emitted: set[bytes] = set()
        #: pid -> hosts seen with it on lines nothing was glued to
        self._hosts: dict[int, set[str]] = {}
        self._prefixes: dict[tuple[bytes, str], tuple[ProcessRef | None, str | None]] = {}
        self._messages: dict[bytes, tuple[str, tuple[object, ...], str, VersionRange | None]] = {}

    def process(self, prefix: bytes, source: str) -> tuple[ProcessRef | None, str | None]:
        """The process a prefix names and, on WARN lines, the ``file.cc:line``."""
        cached = self._prefixes.get((prefix, source))
        if cached is not None:
            return cached
        text = prefix.decode("utf-8", "replace")
        if text[:1].isdigit() or "-" in text[:12] or "[" in text[:2]:
            text = _TIMESTAMP.sub(" ", text)
        found = _PREFIX.search(text)
        if found:
            tags = text[: found.start()]
            rank = _launcher_rank(tags) if tags.strip() else None
            pid = int(found.group("pid"))
            host = self._host(found.group("host"), pid, glued=not _LAUNCHER_ONLY.fullmatch(tags))
            ref: ProcessRef = (
                f"{host or '?'}:{pid}",
                host,
                pid,
                rank,
                int(found.group("dev")),
            )
            where = found.group("where")
            if where and found.group("func"):
                where = f"{where} ({found.group('func')})"
            value: tuple[ProcessRef | None, str | None] = (ref, where)
        else:
            rank = _launcher_rank(text)
            key = source if rank is None else f"{source}[rank {rank}]"
            value = ((key, None, None, rank, None), None)
        if len(self._prefixes) < MAX_CACHED:
            self._prefixes[(prefix, source)] = value
        return value

    def _host(self, host: str, pid: int, *, glued: bool) -> str | None:
        """The host of a prefix: program output glued in front of it (``loss=0.52node1``)
        is cut off where a host this pid printed before ends the text."""
        valid = bool(_HOSTNAME.fullmatch(host))
        if glued or not valid:
            # the same process's host; a character no host name has ('=', '.') proves
            # the glue, and then any host seen before may end the text
            for known in (self._hosts.get(pid, ()), () if valid else self._hosts.get(-1, ())):
                ends = [h for h in known if host.endswith(h) and h != host]
                if ends:
                    return max(ends, key=len)
        if valid and len(self._hosts) < MAX_HOSTS:
            self._hosts.setdefault(pid, set()).add(host)
            self._hosts.setdefault(-1, set()).add(host)  # -1: every pid's
        return host or None

    def split(self, line: bytes) -> list[bytes]:
        """A line with another NCCL line glued to its end (no newline between them), cut
        into the lines it holds; a line of one NCCL line comes back alone.

        >>> parts = Classifier().split(
        ...     b"n1:7:7 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA"
        ...     b"n2:8:8 [0] NCCL INFO Using network IB"
        ... )
        >>> [part.split(b" NCCL INFO ")[1] for part in parts]
        [b'Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA', b'Using network IB']
        """
        markers = [i for i in (line.find(b"NCCL INFO "), line.find(b"NCCL WARN ")) if i >= 0]
        if not markers:
            return [line]
        first = min(markers)
        found = _GLUED_PREFIX.search(line, first + 10)
        if found is None:
            return [line]
        run, pid = found.group(1), int(found.group(2))
        cut = found.start(1)
        known = [h for h in self._hosts.get(pid, ()) if run.endswith(h.encode())]
        if known:  # the host this pid printed before
            cut = found.end(1) - len(max(known, key=len))
        else:  # a connection line's last word (GDRDMA, CUMEM, ...) before the host
            tail = _TRANSPORT_TAIL.match(run)
            if tail and tail.end() < len(run) and b" via " in line[:cut]:
                cut += tail.end()
        head = line[:cut].rstrip(b" |")
        return [head, *self.split(line[cut:])]

    def __call__(self, line: bytes, source: str) -> Event | None:
        at = line.find(b"NCCL INFO ")
        if at >= 0:
            raw = line[at + 10 :]
            reading = self._messages.get(raw)
            if reading is None:
                message = _first_line(raw.decode("utf-8", "replace").rstrip("\r"))
                kind, data, text = _message_event(message, None, source)
                if kind == "notable":
                    text = message
                if kind in LAZY_HINT_KINDS:  # frequent: the folder asks for a few
                    text, hint = message, None
                else:
                    hint = hint_for(kind, message) if kind != "other" else None
                reading = (kind, data, text, hint)
                if len(self._messages) < MAX_CACHED:
                    self._messages[raw] = reading
            kind, data, text, hint = reading
            if kind in IDEMPOTENT:
                if line in self._emitted:
                    return None
                if len(self._emitted) < MAX_CACHED:
                    self._emitted.add(line)
            prefix = line[:at]
            if kind == "other":
                # the process exists even if all it said is irrelevant: say so once
                if (prefix, source) in self._prefixes:
                    return None
                kind = "seen"
            process, _ = self.process(prefix, source)
            event = Event(kind, process, data, text, source)
            event.hint = hint
            return event
        at = line.find(b"NCCL WARN ")
        if at >= 0:
            process, where = self.process(line[:at], source)
            message = _first_line(line[at + 10 :].decode("utf-8", "replace").rstrip("\r"))
            event = Event("warn", process, (where,), message, source)
            event.hint = hint_for("warn", message)
            return event
        text = line.decode("utf-8", "replace").rstrip("\r")
        at = text.find("NCCL version ")
        if at >= 0 and _BARE_VERSION_PREFIX.fullmatch(text[:at]):
            version = _VERSION.match(text, at)
            if version:
                process, _ = self.process(line[: line.find(b"NCCL version")], source)
                return Event("bare-version", process, version.groups(), text.strip(), source)
        placement = _NCCL_TESTS_RANK.search(text)
        if placement:  # nccl-tests' "#  Rank  3 Group  0 Pid  4711 on  node1 device  3 [...]"
            rank, pid, host, device = placement.groups()
            return Event("placement", None, (int(rank), host, int(pid), int(device)), "", source)
        if _SIGNAL.search(text) and not _CODE_LINE.match(text):
            version = _VERSION.search(text)
            return Event("signal", None, version.groups() if version else (), text.strip(), source)
        return None


def classify(line: bytes, source: str) -> Event | None:
    """Classify one line with a fresh :class:`Classifier` (tests and one-offs).

    >>> classify(b"vm:3177:3177 [0] NCCL INFO Using network Socket", "x").data
    ('Socket',)
    >>> e = classify(b"[1,2]<stdout>:gpu1:41:41 [2] NCCL INFO NET/IB : No device found.", "x")
    >>> e.kind, e.process
    ('ib-no-device', ('gpu1:41', 'gpu1', 41, 2, 2))
    """
    return Classifier()(line, source)
