"""One distinct NCCL log line -> one :class:`Event`.

Line shapes (NCCL ``src/debug.cc``; docs/nccl-log-formats.md lists them with the
releases that print each form)::

    [launcher tags] [timestamp] host:pid:tid [cudaDev] NCCL INFO <message>
    [launcher tags] [timestamp] host:pid:tid [cudaDev] file.cc:123 NCCL WARN <message>
    [launcher tags] NCCL version 2.11.4+cuda11.4        (rank 0, up to 2.21)

Launcher tags: Open MPI ``[1,3]<stdout>:``, srun ``-l`` ``3: ``, torchrun
``[rank3]:`` / ``[default3]:``, and a bare ``[3] `` some wrappers print. Hosts are
cut at the first dot by NCCL (``getHostName``), pids and tids are decimal.

Messages are read by :mod:`hpnet.ncclog.messages` (matched by their first words, read
with the format strings of the NCCL releases that print them); a line neither knows is counted as
``other`` and, if it reads like a failure, kept as ``notable`` evidence.
"""

from __future__ import annotations

import re

from hpnet.ncclog.diag import read_diag
from hpnet.ncclog.event import Event, ProcessRef, warn_event
from hpnet.ncclog.formats import load_table
from hpnet.ncclog.messages import PROCESS_ENDED, RAY_REPEATED, VERSION, read_message
from hpnet.ncclog.passes import read_comm, read_connection
from hpnet.ncclog.plugins import ofi_test_log_warn
from hpnet.ncclog.prefix import (
    HOSTNAME,
    LAUNCHER_ONLY,
    PREFIX,
    TIMESTAMP,
    launcher_rank,
    unlink,
    where_of,
)
from hpnet.ncclog.scanstate import ScanState
from hpnet.ncclog.versions import VersionRange, hint_for

__all__ = ["LOCATED_KINDS", "Classifier", "Event", "ProcessRef", "classify"]

#: kinds printed per connection or communicator: their version hints are computed for
#: the first few of each process only (hpnet.ncclog.facts), their message kept in ``text``
LAZY_HINT_KINDS = frozenset({"connection", "comm"})
#: kinds whose repetition by the same process changes nothing in what is folded
IDEMPOTENT = frozenset(
    {
        "network", "env", "gdr", "plugin", "ib-no-device", "ib-failed", "version", "cuda-driver",
        "bootstrap", "net-list", "net-iface", "nvls", "ring-gdr", "connected", "trail", "provider",
        "channels", "nvls-support", "net-nic", "net-module", "gin", "collnet-device", "topo-pci",
        # a connection a process reports again (a new communicator generation on the
        # same ranks and NIC) adds channels to a count nothing reads
        "connection",
    }
)  # fmt: skip
#: distinct prefixes, messages and repeated lines remembered per scan (a file, or a
#: worker's range); a full cache starts anew, so that memory stays flat however long the
#: log and a later phase of it is cached too
MAX_CACHED = 50_000
#: kinds whose lines are quoted as evidence: the scanner finds each one's line number and
#: keeps the input line (connections: the first line of each process and transport in a
#: block, :mod:`hpnet.ncclog.scan`)
LOCATED_KINDS = frozenset(
    {
        "warn", "signal", "notable", "bare-version", "version", "network", "net-list", "net-iface",
        "env", "gdr", "plugin", "ib-no-device", "ib-failed", "bootstrap", "trail", "provider",
        "ring-gdr", "cuda-driver", "channels", "nvls-support", "net-nic", "net-module", "gin",
        "collnet-device", "diag", "topo-nvlink", "ib-qp", "topo-pci",
    }
)  # fmt: skip
#: the kinds an INFO message pasted without NCCL's prefix is taken for: their formats are
#: specific enough that a program's own output does not match them by chance
BARE_KINDS = frozenset(
    {
        "connection", "network", "net-list", "net-iface", "env", "gdr", "ib-no-device",
        "ib-failed", "bootstrap", "trail", "provider", "ring-gdr", "comm", "channels",
        "nvls-support", "version", "net-nic",
    }
)  # fmt: skip

#: hosts remembered per pid, to recover a host glued to text before it
MAX_HOSTS = 4096


#: lines from frameworks and tools around NCCL that say a collective failed
_SIGNAL = re.compile(
    r"NCCL error|nccl\w*Error|ncclSystemError|ncclInternalError|ncclRemoteError"
    r"|ncclInvalidUsage|ncclUnhandledCudaError|Watchdog caught collective operation timeout"
    r"|Test NCCL failure|NCCL communicator was aborted|DistBackendError"
    r"|Some NCCL operations have failed or timed out|taking the entire process down"
    # a process crashed: Open MPI's handler (opal/util/stacktrace.c), the shell, faulthandler
    rf"|\*\*\* Process received signal \*\*\*|{PROCESS_ENDED}"
    # nccl-tests before its "Test" prefix: "NCCL failure all_reduce.cu:95 'unhandled cuda
    # error'", "Cuda failure common.cu:12 '...'" (src/common.h @b188a15)
    r"|(?:^|: )(?:NCCL|Cuda|CUDA) failure \S+\.(?:cu|cc|c|h):\d+ '"
    r"|unhandled system error|remote process exited or there was a network error"
    r"|NCCL WARN|<warn>"
    # XLA's (xla/service/gpu: "NCCL operation ncclGetUniqueId(&id) failed: ...") and
    # PaddlePaddle's ("ExternalError:  Nccl error, unhandled cuda error  (at ...)")
    r"|NCCL operation \w+\(.*?\) failed|Nccl error, "
)


#: what may stand before a bare ``NCCL version`` line: launcher tags and spaces only
_BARE_VERSION_PREFIX = re.compile(r"\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: |\[\w+\]:?)?\s*")
#: longest text before a bare ``NCCL version`` that tags can be (the pattern above would
#: try every split of a long run of spaces between its two ``\s*``)
MAX_BARE_VERSION_PREFIX = 300
#: where an INFO message pasted without ``NCCL INFO`` may start: the first words of the
#: formats in :data:`BARE_KINDS` (anything before it is a launcher's or a log collector's);
#: a file name is at most 255 characters (``\S+`` ran to the end of the line from every
#: bracket of ``[0][0][0]...``)
_BARE_START = re.compile(
    r"(?:(?<=\s)|(?<=\])|^)"
    r"(?:Channel (?:\d+(?:/\d+)? )?: \d|Ring \d+ : \d|CollNet \d+(?:/\d+)? : \d"
    r"|NET/\S+? ?: (?:Using|No device|GPU Direct|Got completion)|NET/OFI Selected"
    r"|NET/IB: \[\d+\] |Using (?:internal |external )?[Nn]etwork "
    r"|Bootstrap ?: (?:Using|no socket)|NCCL_[A-Z0-9_]+ set (?:by \S+ )?to "
    r"|GPU Direct RDMA |comm 0x[0-9a-f]+ rank \d|ncclComm\w+ comm 0x"
    r"|\S{1,255}\.(?:cc|cu):\d+ -> \d|Connected all rings|\d+ coll channels,"
    r"|NVLS multicast support|(?:Assigned|Initialized) NET plugin|Failed to open libibverbs"
    r"|cudaDriverVersion \d|Call to ibv_\w+ failed|P2P plugin |Assigned (?:GIN|RMA) plugin)"
)
#: what may not stand right before a bare message: program text (a quoted string, an
#: assignment, a call), so that only pasted log lines are read
_BARE_PREFIX_REJECT = re.compile(r"[\"'=(,]\s*$")
#: what can stand before a message pasted alone: timestamps (ISO, syslog/journald with
#: host and program), launcher tags (``[1,0]<stdout>:``, ``[rank3]:``, srun's ``3: ``)
BARE_TAGS_PATTERN = (
    r"^(?:\s*(?:\[[^\]\n]{0,60}\](?:<std(?:out|err)>)?:?"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|[A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \S+ [^\s:]+:|\d+:))+\s*"
)
_BARE_TAGS = re.compile(BARE_TAGS_PATTERN)
#: failures a message states whatever prefix it has: a completion error or a failed
#: verbs call pasted without ``NCCL WARN`` is still that failure
_BARE_FAILURE = re.compile(
    r"^NET/\S+? ?: Got completion|^Call to ibv_\w+ failed|^NET/IB ?: .*ibv_\w+ failed"
    r"|^Bootstrap ?: no socket interface found"
)


#: nccl-tests' device table: which process and host each rank runs in
_NCCL_TESTS_RANK = re.compile(
    r"#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)"
)
#: a line of program source in a traceback (``raise RuntimeError(f"NCCL error...")``)
_CODE_LINE = re.compile(r"\s*(?:raise |File \"|except |if |return |\^)")


#: where a second NCCL line starts inside a message (`` | host:pid:tid [d] NCCL INFO``)
_GLUED = re.compile(r"(?:\s\|\s*|\s)\S*:\d+:\d+ \[-?\d+\](?: \S+:\d+)? NCCL (?:INFO|WARN) ")
#: the prefix of an NCCL line glued to the end of another (no newline between them):
#: the host is the run of host characters before ``:pid:tid``, possibly with the first
#: line's last word in front of it (``...via NET/IB/0/GDRDMAnode2:1008:1008 [0] NCCL INFO``)
_GLUED_PREFIX = re.compile(
    rb":(\d+):\d+ \[-?\d+\](?: [^\[\]\n]*?:\d+(?: \([^()\s]*\))?)? NCCL (?:INFO|WARN) "
)
#: the host characters a glued prefix's run can hold: found backwards from its ``:pid``
#: (a pattern starting with ``[\w-]*`` tried every position of a long word, and took
#: minutes on one line of 200 kB); a host is at most 255 characters, the rest is text
_HOST_RUN = re.compile(rb"[\w-]*")
MAX_HOST_RUN = 512
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

    __slots__ = (
        "_emitted", "_hosts", "_messages", "_pending", "_prefixes", "guessed", "quoted", "real",
        "scan",
    )  # fmt: skip

    def __init__(self) -> None:
        #: (process, transport) whose first connection line the scanner located already
        self.quoted: set[tuple[str, object]] = set()
        #: lines of IDEMPOTENT kinds already reported (a process repeating "Using network
        #: IB" for every communicator says nothing new)
        self._emitted: set[bytes] = set()
        #: pid -> hosts seen with it on lines nothing was glued to
        self._hosts: dict[int, set[str]] = {}
        #: process key -> the run of host characters its host was cut from, where no host
        #: of its pid (nor any host) seen before ended the run: a guess, which a range
        #: scanned alone makes where one pass over the file knew better; the folder
        #: resolves it once every range is read (:meth:`LogFolder.result`)
        self.guessed: dict[str, str] = {}
        #: guessed keys also named by a prefix that was no guess (a real host, kept)
        self.real: set[str] = set()
        #: prefix of a glued line cut by a guess -> the run, until :meth:`process` reads it
        self._pending: dict[bytes, str] = {}
        self._prefixes: dict[tuple[bytes, str], tuple[ProcessRef | None, str | None]] = {}
        self._messages: dict[bytes, tuple[str, tuple[object, ...], str, VersionRange | None]] = {}
        #: what the scanner remembers between blocks; its dead lines rest on this
        #: classifier's caches and are emptied with them
        self.scan = ScanState()

    def repeats_silently(self, line: bytes) -> bool:
        """Is ``line`` an idempotent line already reported (read again: no event)?"""
        return line in self._emitted

    @property
    def pending(self) -> bool:
        """A glued line's guessed host waits to be read (:meth:`split`)."""
        return bool(self._pending)

    def _emit(self, line: bytes) -> None:
        if len(self._emitted) >= MAX_CACHED:
            self._emitted.clear()  # repeats of forgotten lines are reported again: harmless
            self.scan.dead.clear()
        self._emitted.add(line)

    def process(self, prefix: bytes, source: str) -> tuple[ProcessRef | None, str | None]:
        """The process a prefix names and, on WARN lines, the ``file.cc:line``."""
        run = self._pending.pop(prefix, None) if self._pending else None
        cut_by_guess = run is not None
        cached = None if cut_by_guess else self._prefixes.get((prefix, source))
        if cached is not None:
            return cached
        text = unlink(prefix.decode("utf-8", "replace"))
        if text[:1].isdigit() or "-" in text[:12] or "[" in text[:2]:
            text = TIMESTAMP.sub(" ", text)
        found = PREFIX.search(text)
        if found:
            tags = text[: found.start()]
            rank = launcher_rank(tags) if tags.strip() else None
            pid = int(found.group("pid"))
            if run is None:
                host, run = self._host(
                    found.group("host"), pid, glued=not LAUNCHER_ONLY.fullmatch(tags)
                )
            else:  # a glued line cut by a guess: its host is not learnt
                host = found.group("host") or None
            ref: ProcessRef = (
                f"{host or '?'}:{pid}",
                host,
                pid,
                rank,
                int(found.group("dev")),
            )
            if run is not None:
                self.guessed.setdefault(ref[0], run)
            elif ref[0] in self.guessed:
                self.real.add(ref[0])
            where = found.group("where")
            if where and found.group("func"):
                where = f"{where} ({found.group('func')})"
            value: tuple[ProcessRef | None, str | None] = (ref, where)
        else:
            rank = launcher_rank(text)
            key = source if rank is None else f"{source}[rank {rank}]"
            value = ((key, None, None, rank, None), where_of(text))
            run = None
        if cut_by_guess:
            return value  # not cached: the same prefix on a line of its own is no guess
        if len(self._prefixes) >= MAX_CACHED:
            self._prefixes.clear()
            self.scan.dead.clear()
        self._prefixes[(prefix, source)] = value
        return value

    def _host(self, host: str, pid: int, *, glued: bool) -> tuple[str | None, str | None]:
        """The host of a prefix: program output glued in front of it (``loss=0.52node1``)
        is cut off where a host this pid printed before ends the text. Second: the text,
        where no host seen before ended it (a guess, :attr:`guessed`)."""
        valid = bool(HOSTNAME.fullmatch(host))
        guess = None
        if glued or not valid:
            # the same process's host first, then any host seen before: another line's
            # text glued in front of this prefix ("...66015g183:161258:...") ends in one
            pids, every = self._hosts.get(pid, ()), self._hosts.get(-1, ())
            for known in (pids, every):
                ends = [h for h in known if host.endswith(h) and h != host]
                if ends:
                    return max(ends, key=len), None
            if host and host not in pids and host not in every:
                guess = host
        if valid and len(self._hosts) < MAX_HOSTS:
            self._hosts.setdefault(pid, set()).add(host)
            self._hosts.setdefault(-1, set()).add(host)  # -1: every pid's
        return host or None, guess

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
        # a loop over offsets, not recursion on the rest of the line: a line of thousands of
        # glued lines exhausted the stack, and the copies of its rest took a gigabyte. Every
        # glued line is read; the time is linear in the line, which is at most
        # MAX_LINE_BYTES (scan.py: a longer one is cut, and the cut is noted)
        parts: list[bytes] = []
        start = 0  # where the line not yet cut begins
        self._pending.clear()
        while (cut := self._glued_at(line, start)) is not None:
            parts.append(line[start:cut].rstrip(b" |"))
            start = cut
        parts.append(line[start:] if start else line)
        if self._pending:  # a repeat reported already names no process: no guess waits
            for part in parts:
                if part in self._emitted:
                    at = part.find(b"NCCL INFO ")
                    self._pending.pop(part[: at if at >= 0 else part.find(b"NCCL WARN ")], None)
        return parts

    def _glued_at(self, line: bytes, start: int) -> int | None:
        """Where the next NCCL line glued into ``line[start:]`` begins, if one is."""
        markers = [
            i for i in (line.find(b"NCCL INFO ", start), line.find(b"NCCL WARN ", start)) if i >= 0
        ]
        if not markers:
            return None
        first = min(markers)
        found = _GLUED_PREFIX.search(line, first + 10)
        if found is None:
            return None
        pid = int(found.group(1))
        # the run of host characters before ":pid", read backwards from there
        back = max(first + 10, found.start() - MAX_HOST_RUN)
        window = line[back : found.start()][::-1]
        host_run = _HOST_RUN.match(window)
        length = host_run.end() if host_run else 0
        run = window[:length][::-1]
        run_start = found.start() - length
        cut = run_start
        known = [h for h in self._hosts.get(pid, ()) if run.endswith(h.encode())]
        if not known:  # this pid's first line: any host seen before may end the run
            known = [h for h in self._hosts.get(-1, ()) if run.endswith(h.encode())]
        if known:  # the host this pid printed before
            cut = found.start() - len(max(known, key=len))
        else:  # a connection line's last word (GDRDMA, CUMEM, ...) before the host
            tail = _TRANSPORT_TAIL.match(run)
            if tail and tail.end() < len(run) and line.find(b" via ", start, cut) >= 0:
                cut += tail.end()
            if run:  # a guess: the host is read from the run once all is read
                self._pending[line[cut : found.end() - 10]] = run.decode("ascii", "replace")
        return cut

    def __call__(self, line: bytes, source: str) -> Event | None:
        at = line.find(b"NCCL INFO ")
        if at >= 0:
            return self._info(line, at, source)
        at = line.find(b"NCCL WARN ")
        if at >= 0:
            process, where = self.process(line[:at], source)
            message = _first_line(line[at + 10 :].decode("utf-8", "replace").rstrip("\r"))
            if message.endswith("cluster]"):
                message = RAY_REPEATED.sub("", message)
            return warn_event(process, where, message, source)
        return self._not_info(line, source)

    def _reading(
        self, raw: bytes, source: str
    ) -> tuple[str, tuple[object, ...], str, VersionRange | None]:
        """What the message ``raw`` says, read once while it stays in the cache."""
        reading = self._messages.get(raw)
        if reading is not None:
            return reading
        # a communicator or connection line, read in C; not cached: most are new
        comm = read_comm(raw)
        if comm is not None:
            return ("comm", comm, raw.decode("ascii"), None)
        connection = read_connection(raw)
        if connection is not None:
            return ("connection", connection, raw.decode("ascii"), None)
        message = _first_line(raw.decode("utf-8", "replace").rstrip("\r"))
        kind, data, text = read_message(message, None, source)
        if kind == "notable":
            text = message
        if kind in LAZY_HINT_KINDS:  # frequent: the folder asks for a few
            text, hint = message, None
        else:
            hint = hint_for(kind, message) if kind != "other" else None
        reading = (kind, data, text, hint)
        if len(self._messages) >= MAX_CACHED:
            self._messages.clear()  # a new phase of the log: its own messages
        self._messages[raw] = reading
        return reading

    def _info(self, line: bytes, at: int, source: str) -> Event | None:
        """A line with ``NCCL INFO `` at ``at``."""
        kind, data, text, hint = self._reading(line[at + 10 :], source)
        if kind in IDEMPOTENT:
            if line in self._emitted:
                return None
            self._emit(line)
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

    def _not_info(self, line: bytes, source: str) -> Event | None:
        """A line with neither ``NCCL INFO`` nor ``NCCL WARN``: a bare version banner,
        nccl-tests' rank placement, a signal, or a bare line (:meth:`_bare`)."""
        text = line.decode("utf-8", "replace").rstrip("\r")
        if "NCCL DIAG " in text and read_diag(text) is not None:  # 2.31+: printf, no level
            return Event("diag", None, (), text.strip(), source)
        if plugin := ofi_test_log_warn(text):  # an aws-ofi-nccl test program's own logger
            return warn_event(None, plugin[0], plugin[1], source)
        at = text.find("NCCL version ")
        if at >= 0 and (
            (at <= MAX_BARE_VERSION_PREFIX and _BARE_VERSION_PREFIX.fullmatch(text[:at]))
            or (
                at < 300 and not _BARE_PREFIX_REJECT.search(text, 0, at) and "NCCL" not in text[:at]
            )
        ):
            version = VERSION.match(text, at)
            if version:
                process, _ = self.process(line[: line.find(b"NCCL version")], source)
                return Event("bare-version", process, version.groups(), text.strip(), source)
        placement = _NCCL_TESTS_RANK.search(text)
        if placement:  # nccl-tests' "#  Rank  3 Group  0 Pid  4711 on  node1 device  3 [...]"
            rank, pid, host, device = placement.groups()
            return Event("placement", None, (int(rank), host, int(pid), int(device)), "", source)
        if _SIGNAL.search(text) and not _CODE_LINE.match(text):
            version = VERSION.search(text)
            return Event("signal", None, version.groups() if version else (), text.strip(), source)
        return self._bare(line, text, source)

    def _bare(self, line: bytes, text: str, source: str) -> Event | None:
        """An NCCL message pasted without ``NCCL INFO`` (``Using network IB``, ``Channel
        00/0 : 0[0] -> 1[1] via NET/IB/0``), behind whatever tags or prefix: read when its
        format is one of :data:`BARE_KINDS`' (a program's own text does not match those
        by chance), or when it states a failure (:data:`_BARE_FAILURE`)."""
        start = _BARE_START.search(text)
        if start is None or _BARE_PREFIX_REJECT.search(text, 0, start.start()):
            return self._bare_warn(line, text, source)
        message = _first_line(text[start.start() :].strip())
        kind, data, kept = read_message(message, None, source)
        if kind not in BARE_KINDS:
            if not _BARE_FAILURE.match(message):
                return self._bare_warn(line, text, source)
            # a failure with no process to pin it on: like a framework's error line
            return Event("signal", None, (), message, source)
        if kind in IDEMPOTENT:
            if line in self._emitted:
                return None
            self._emit(line)
        cut = len(text[: start.start()].encode())
        process, _ = self.process(line[:cut], source)
        event = Event(kind, process, data, kept or message, source)
        if kind not in LAZY_HINT_KINDS:
            event.hint = hint_for(kind, message)
        return event

    def _bare_warn(self, line: bytes, text: str, source: str) -> Event | None:
        """A WARN pasted without ``NCCL WARN`` (``Call to posix_fallocate failed : No
        space left on device``), behind a timestamp or launcher tag: read as a WARN when
        its text is a whole WARN format of NCCL or a plugin (hpnet.ncclog.formats), of the
        rank a launcher tag names, else of no known process; its ``file:line`` is not
        known."""
        tags = _BARE_TAGS.match(text)
        cut = tags.end() if tags else 0
        message = text[cut:].strip()
        if not message or not load_table().bare_warn(message):
            return None
        process = None
        if cut:
            named, _ = self.process(line[: len(text[:cut].encode())], source)
            # a launcher's rank tag names a process; a timestamp alone does not
            process = named if named is not None and named[3] is not None else None
        return warn_event(process, None, message, source)


def classify(line: bytes, source: str) -> Event | None:
    """Classify one line with a fresh :class:`Classifier` (tests and one-offs).

    >>> classify(b"vm:3177:3177 [0] NCCL INFO Using network Socket", "x").data
    ('Socket', 'using')
    >>> e = classify(b"[1,2]<stdout>:gpu1:41:41 [2] NCCL INFO NET/IB : No device found.", "x")
    >>> e.kind, e.process
    ('ib-no-device', ('gpu1:41', 'gpu1', 41, 2, 2))
    """
    return Classifier()(line, source)
