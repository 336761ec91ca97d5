"""The NCCL debug-log parser: text in, :class:`~hpnet.nccl.logmodel.NcclLog` out.

Two stages. :func:`hpnet.nccl.logscan.scan_block` turns a block of whole lines into
counted events, with no state carried between blocks; :class:`LogFolder` folds the
events of every block, in order, into one record per process. Memory grows with
the number of processes, communicators and distinct connections, never with the
number of lines: evidence lines are capped and the caps are reported.

>>> log = parse_nccl_log([
...     "vm:3177:3177 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
...     "vm:3177:3177 [0] NCCL INFO NET/IB : No device found.",
...     "vm:3177:3177 [0] NCCL INFO Using network Socket",
... ])
>>> p = log.processes[0]
>>> p.key, p.nccl_version, p.networks, p.ib_no_device
('vm:3177', '2.28.9', ('Socket',), True)
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable

from hpnet.nccl.logline import Event, ProcessRef
from hpnet.nccl.logmodel import (
    Connection,
    LogLine,
    Membership,
    NcclLog,
    Nic,
    ProcessLog,
    parse_transport,
)
from hpnet.nccl.logscan import BlockResult, iter_blocks, scan_block
from hpnet.nccl.logversions import VersionRange, empty, format_range, intersect

__all__ = ["BLOCK_BYTES", "LogFolder", "parse_nccl_log", "parse_nccl_text"]

#: bytes per block: large enough that per-block costs vanish, small enough that a
#: block and its split lines stay a few tens of MiB
BLOCK_BYTES = 8 << 20
#: evidence kept per process and in all (counts continue past the caps)
MAX_WARNINGS_PER_PROCESS = 64
MAX_EVIDENCE = 2000
MAX_NOTES = 32


class _Process:
    """The mutable record of one process while the log is folded."""

    def __init__(self, ref: ProcessRef) -> None:
        self.key, self.host, self.pid, self.launcher_rank, _ = ref
        self.sources: dict[str, None] = {}
        self.devices: dict[int, None] = {}
        self.nccl_version: str | None = None
        self.version_range: VersionRange | None = None
        self.version_conflict = False
        self.cuda_version: str | None = None
        self.cuda_driver: str | None = None
        self.bootstrap: dict[str, None] = {}
        self.networks: dict[str, None] = {}
        self.nics: tuple[Nic, ...] = ()
        self.socket_interfaces: tuple[Nic, ...] = ()
        self.ib_no_device = False
        self.plugin_notes: dict[str, None] = {}
        self.env: dict[str, str] = {}
        self.gdr_notes: dict[str, None] = {}
        self.ring_gdr: dict[int, None] = {}
        self.nvls = False
        self.memberships: list[dict[str, object]] = []
        self.connections: collections.Counter[tuple[object, ...]] = collections.Counter()
        self.warnings: dict[str, LogLine] = {}
        self.num_lines = 0

    def membership(self, comm: str, fields: dict[str, str]) -> dict[str, object]:
        """The open membership for ``comm`` (a new one once the last was closed)."""
        for record in reversed(self.memberships):
            if record["comm"] == comm and not record["closed"]:
                same = all(
                    record.get(k) is None or fields.get(k) is None or record[k] == fields[k]
                    for k in ("rank", "commId")
                )
                if same:
                    return record
                break
        record = {"comm": comm, "closed": False}
        self.memberships.append(record)
        return record

    def freeze(self) -> ProcessLog:
        return ProcessLog(
            key=self.key,
            host=self.host,
            pid=self.pid,
            sources=tuple(self.sources),
            launcher_rank=self.launcher_rank,
            devices=tuple(sorted(self.devices)),
            nccl_version=self.nccl_version,
            version_range=format_range(self.version_range) if self.version_range else None,
            version_conflict=self.version_conflict,
            cuda_version=self.cuda_version,
            cuda_driver=self.cuda_driver,
            host_id=self.env.get("NCCL_HOSTID"),
            bootstrap=tuple(self.bootstrap),
            networks=tuple(self.networks),
            nics=self.nics,
            socket_interfaces=self.socket_interfaces,
            ib_no_device=self.ib_no_device,
            plugin_notes=tuple(self.plugin_notes),
            env=tuple(sorted(self.env.items())),
            gdr_notes=tuple(self.gdr_notes),
            ring_gdr=tuple(sorted(self.ring_gdr)),
            nvls=self.nvls,
            memberships=tuple(_membership(m) for m in self.memberships if "rank" in m),
            connections=tuple(
                _connection(key, count)
                for key, count in sorted(self.connections.items(), key=_order)
            ),
            warnings=_in_order(self.warnings.values()),
            num_lines=self.num_lines,
        )


def _in_order(lines: Iterable[LogLine]) -> tuple[LogLine, ...]:
    """Evidence in input order (blocks may report it in another)."""
    return tuple(sorted(lines, key=lambda line: (line.source, line.line_number)))


def _order(item: tuple[tuple[object, ...], int]) -> tuple[object, ...]:
    src, _, dst, _, direction, via = item[0]
    return (src, dst, str(direction), str(via))


def _membership(record: dict[str, object]) -> Membership:
    def number(name: str) -> int | None:
        value = record.get(name)
        return int(str(value)) if value is not None else None

    rank = number("rank")
    nranks = number("nranks")
    return Membership(
        comm=str(record["comm"]),
        rank=rank if rank is not None else -1,
        nranks=nranks if nranks is not None else 0,
        comm_id=str(record["commId"]) if record.get("commId") else None,
        cuda_dev=number("cudaDev"),
        bus_id=str(record["busId"]) if record.get("busId") else None,
        nnodes=number("nNodes"),
        local_ranks=number("localRanks"),
        completed=bool(record.get("completed")),
        aborted=bool(record.get("aborted")),
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


class LogFolder:
    """Folds scanned blocks, in input order, into an :class:`NcclLog`."""

    def __init__(self) -> None:
        self._processes: dict[str, _Process] = {}
        self._sources: dict[str, None] = {}
        self._signals: dict[str, LogLine] = {}
        self._bare_versions: dict[str, None] = {}
        self._placements: dict[int, tuple[int, str, int, int]] = {}
        self._notes: dict[str, None] = {}
        self._num_lines = 0
        self._num_nccl_lines = 0
        self._num_bytes = 0
        self._num_dropped = 0
        self._num_evidence = 0

    def note(self, text: str) -> None:
        """A problem with the input itself (binary data, an unreadable file)."""
        if len(self._notes) < MAX_NOTES:
            self._notes[text] = None

    def add_source(self, source: str) -> None:
        self._sources[source] = None

    def add(self, block: BlockResult) -> None:
        self._sources[block.source] = None
        self._num_lines += block.num_lines
        self._num_nccl_lines += block.num_nccl_lines
        self._num_bytes += block.num_bytes
        for event in block.events:
            self._fold(event)

    def _keep(self, kept: dict[str, LogLine], text: str, event: Event) -> None:
        """Keep a line as evidence once per text, counting repeats (so the answer does
        not depend on how the input was cut into blocks)."""
        seen = kept.get(text)
        if seen is not None:
            kept[text] = dataclasses.replace(seen, count=seen.count + event.count)
            return
        if self._num_evidence >= MAX_EVIDENCE:
            self._num_dropped += event.count
            return
        self._num_evidence += 1
        kept[text] = LogLine(
            source=event.source, line_number=event.line_number, text=text, count=event.count
        )

    def _process(self, ref: ProcessRef) -> _Process:
        record = self._processes.get(ref[0])
        if record is None:
            record = self._processes[ref[0]] = _Process(ref)
        return record

    def _fold(self, event: Event) -> None:
        kind = event.kind
        if kind == "placement":
            rank, host, pid, device = event.data
            self._placements.setdefault(
                int(str(rank)), (int(str(rank)), str(host), int(str(pid)), int(str(device)))
            )
            return
        if kind == "signal":
            if event.data and event.data[0]:
                self._bare_versions[str(event.data[0])] = None
            self._keep(self._signals, event.text, event)
            return
        ref = event.process
        if ref is None:
            return
        if kind == "bare-version":
            self._bare_versions[str(event.data[0])] = None
            if ref[1] is None:  # no host:pid: rank 0's banner, not a process of its own
                return
        process = self._process(ref)
        process.num_lines += event.count
        process.sources[event.source] = None
        if ref[4] is not None and ref[4] >= 0:
            process.devices[ref[4]] = None
        data = event.data
        if event.hint is not None and not process.version_conflict:
            merged = intersect(process.version_range or (None, None), event.hint)
            if empty(merged):
                process.version_conflict = True
            else:
                process.version_range = merged
        if kind == "connection":
            process.connections[data] += event.count
        elif kind in {"version", "bare-version"}:
            if process.nccl_version is None:
                process.nccl_version = str(data[0])
                process.cuda_version = str(data[1]) if data[1] else None
        elif kind == "cuda-driver":
            process.cuda_driver = str(data[0])
        elif kind == "bootstrap":
            process.bootstrap[str(data[0])] = None
        elif kind == "network":
            process.networks[str(data[0])] = None
        elif kind == "net-list":
            network, nics, oob = data
            listed = tuple(
                Nic(index=i, name=name, port=port, link=link, address=address)
                for i, name, port, link, address in nics  # type: ignore[attr-defined]
            )
            if network == "Socket":
                process.socket_interfaces = listed
            else:
                process.nics = listed
                if oob:
                    process.bootstrap.setdefault(f"{oob} (OOB)", None)
        elif kind == "net-iface":
            name, address = data
            if all(n.name != name for n in process.socket_interfaces):
                nic = Nic(
                    index=len(process.socket_interfaces),
                    name=str(name),
                    address=str(address) if address else None,
                )
                process.socket_interfaces = (*process.socket_interfaces, nic)
        elif kind == "ib-no-device":
            process.ib_no_device = True
            if event.text and len(process.plugin_notes) < MAX_NOTES:
                process.plugin_notes[event.text] = None
        elif kind == "ib-failed":
            process.ib_no_device = True
            if len(process.plugin_notes) < MAX_NOTES:
                process.plugin_notes[event.text] = None
        elif kind == "plugin":
            if len(process.plugin_notes) < MAX_NOTES:
                process.plugin_notes[event.text] = None
        elif kind == "env":
            process.env[str(data[0])] = str(data[1])
        elif kind == "gdr":
            if len(process.gdr_notes) < MAX_NOTES:
                process.gdr_notes[event.text] = None
        elif kind == "nvls":
            process.nvls = True
        elif kind == "ring-gdr":
            process.ring_gdr[int(str(data[0]))] = None
        elif kind == "comm":
            self._fold_comm(process, data)
        elif kind in ("warn", "notable"):
            if "libibverbs" in event.text:
                process.ib_no_device = True
            where = str(data[0]) if kind == "warn" and data and data[0] else None
            level = "WARN" if kind == "warn" else "INFO"
            text = f"{level} {where + ' ' if where else ''}{event.text}"
            if text in process.warnings or len(process.warnings) < MAX_WARNINGS_PER_PROCESS:
                self._keep(process.warnings, text, event)
            else:
                self._num_dropped += event.count

    @staticmethod
    def _fold_comm(process: _Process, data: tuple[object, ...]) -> None:
        what, state, raw = data
        fields: dict[str, str] = dict(raw) if isinstance(raw, dict) else {}
        comm = str(fields.get("comm", "?"))
        record = process.membership(comm, fields)
        if "nRanks" in fields:
            fields = dict(fields, nranks=fields["nRanks"])
        if "commHash" in fields and "commId" not in fields:
            fields = dict(fields, commId=fields["commHash"])
        for name in ("rank", "nranks", "cudaDev", "busId", "commId", "nNodes", "localRanks"):
            if name in fields and record.get(name) is None:
                record[name] = fields[name]
        if what == "Init" and state == "COMPLETE":
            record["completed"] = True
        elif what in ("Abort", "Destroy"):
            record["aborted"] = record.get("aborted") or what == "Abort"
            record["closed"] = True

    def result(self) -> NcclLog:
        return NcclLog(
            sources=tuple(self._sources),
            processes=tuple(p.freeze() for p in self._processes.values()),
            signals=_in_order(self._signals.values()),
            num_lines=self._num_lines,
            num_nccl_lines=self._num_nccl_lines,
            num_bytes=self._num_bytes,
            num_dropped=self._num_dropped,
            input_notes=tuple(self._notes),
            bare_versions=tuple(self._bare_versions),
            placements=tuple(self._placements[r] for r in sorted(self._placements)),
        )


def parse_nccl_text(data: bytes, *, source: str = "<text>") -> NcclLog:
    """Parse a whole log held in memory."""
    folder = LogFolder()
    folder.add_source(source)
    for block, first_line in iter_blocks(data, BLOCK_BYTES):
        folder.add(scan_block(block, source=source, start_line=first_line))
    return folder.result()


def parse_nccl_log(lines: Iterable[str], *, source: str = "<lines>") -> NcclLog:
    """Parse log lines (without or with their newlines), streaming in blocks."""
    folder = LogFolder()
    folder.add_source(source)
    pending: list[str] = []
    size = 0
    first_line = 1
    for line in lines:
        text = line if line.endswith("\n") else line + "\n"
        pending.append(text)
        size += len(text)
        if size >= BLOCK_BYTES:
            folder.add(scan_block("".join(pending).encode(), source=source, start_line=first_line))
            first_line += len(pending)
            pending, size = [], 0
    if pending:
        folder.add(scan_block("".join(pending).encode(), source=source, start_line=first_line))
    return folder.result()
