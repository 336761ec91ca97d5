"""The NCCL debug-log parser: text in, :class:`~hpnet.ncclog.model.NcclLog` out.

Two stages. :func:`hpnet.ncclog.scan.scan_block` turns a block of whole lines into
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

from collections.abc import Callable, Iterable, Sequence

from hpnet.ncclog.fold import FOLD_KINDS, evidence_line
from hpnet.ncclog.formats import load_table
from hpnet.ncclog.lines import LAZY_HINT_KINDS, Classifier, Event, ProcessRef
from hpnet.ncclog.model import LogLine, NcclLog, ProcessLog
from hpnet.ncclog.plugins import plugin_of
from hpnet.ncclog.process import (
    MAX_EVIDENCE,
    MAX_NOTES,
    MAX_STATEMENTS,
    MAX_WARNINGS_PER_PROCESS,
    ProcessFacts,
    in_order,
)
from hpnet.ncclog.recovery import ABSORBED, recover
from hpnet.ncclog.scan import MAX_LINE_BYTES, BlockResult, iter_blocks, scan_block
from hpnet.ncclog.versions import empty, format_range, hint_for, intersect

__all__ = ["BLOCK_BYTES", "LogFolder", "parse_nccl_log", "parse_nccl_text"]

#: bytes per block: large enough that per-block costs vanish, small enough that a
#: block and its split lines stay a few tens of MiB
BLOCK_BYTES = 8 << 20
#: kinds that show a process went on after a failure: lines NCCL prints once a step
#: succeeded (a network module chosen and its device list, "Connected all rings", the
#: channel counts at the end of init, Init COMPLETE); plugin/net.cc's "-> 2" when an
#: external plugin fails is followed by "Using network IB": NCCL went on. Connection lines
#: are not among them: NCCL prints them before it connects, and launchers interleave
#: output, so a trail can stand before the connection line whose setup failed
PROGRESS_KINDS = frozenset(
    {"ring-gdr", "connected", "nvls", "channels", "network", "net-list", "bootstrap"}
)


#: connection / communicator lines per process whose form is checked against the
def _lazy_form(event: Event) -> tuple[object, ...]:
    """What the release a frequent line pins depends on (versions.FINGERPRINTS' comm and
    connection entries): a communicator line's opening, its states and its field names;
    a connection line's transport, and whether the line ends with it."""
    data = event.data
    if event.kind == "connection":
        transport = str(data[-1])
        return ("connection", transport, event.text.endswith(transport))
    what, state, raw = data
    names = tuple(raw) if isinstance(raw, dict) else ()
    return ("comm", what, state, names, event.text[:12])


def _narrow_release(process: ProcessFacts, event: Event) -> None:
    """Narrow the process's release range by the form of a line, keeping the line that
    narrowed it as the range's witness. A connection or communicator line (frequent) is
    asked once per form it has in this process (:func:`_lazy_form`): every range of a
    file asks what one pass asks, whatever the order of the lines (a cap on the first
    six lines had let a later range's communicator line narrow what one pass did not)."""
    if event.kind in LAZY_HINT_KINDS:
        shape = _lazy_form(event)
        if shape in process.lazy_forms:
            return
        process.lazy_forms.add(shape)
        event.hint = hint_for(event.kind, event.text)
    hint = event.hint
    if hint is None or process.version_conflict or hint in process.hints_applied:
        return  # a range applied again narrows nothing: the range holds it already
    process.hints_applied.add(hint)
    merged = intersect(process.version_range or (None, None), hint)
    if empty(merged):
        process.version_conflict = True
        return
    if merged != process.version_range and event.line_number:
        # a line whose form narrowed the release: the witness of the range
        form = f"form:{format_range(hint)}"
        if form not in process.lines:
            process.lines[form] = evidence_line(event, event.text)
    process.version_range = merged


#: located kinds -> the key their statement is kept under, formatted with the event's data
#: (ib-qp: each GID a process's queue pairs use; topo-pci: each slow link and what it
#: leads to; the first line of each)
_STATEMENTS = {
    "gin": "gin:{0}", "collnet-device": "collnet", "topo-nvlink": "nvlink",
    "topo-pci": "pci-slow:{0}:{1}/{2}", "net-list": "nics:{0}", "net-nic": "nics:{0}",
    "net-module": "module:{0}", "net-iface": "nics:Socket", "env": "env:{0}",
    "connection": "transport:{5}", "ib-qp": "gid:{0}:{1}/{2}", "ib-no-device": "ib-no-device",
    "ib-failed": "ib-no-device", "version": "version", "bare-version": "bare-version",
    "bootstrap": "bootstrap", "provider": "provider", "channels": "channels",
    "nvls-support": "nvls-support", "cuda-driver": "cuda-driver", "ring-gdr": "ring-gdr",
}  # fmt: skip


def _statement(kind: str, data: tuple[object, ...]) -> str | None:
    """What a located event states, as a key of :attr:`ProcessLog.lines`."""
    if kind == "network":  # "Using network X" is the line users look for: it comes first
        return f"network:{data[0]}" if data[1] == "using" else f"assigned:{data[0]}"
    if kind == "comm":
        if data[0] == "Abort":
            return "abort"
        return "comm-start" if data[:2] == ("Init", "START") else None
    if kind == "plugin":
        return f"plugin:{data[0]}" if data else None
    key = _STATEMENTS.get(kind)
    return key.format(*data) if key is not None else None


class LogFolder:
    """Folds scanned blocks, in input order, into an :class:`NcclLog`."""

    def __init__(self) -> None:
        self._processes: dict[str, ProcessFacts] = {}
        self._sources: dict[str, None] = {}
        self._signals: dict[str, LogLine] = {}
        self._bare_warnings: dict[str, LogLine] = {}
        self._diag: dict[str, LogLine] = {}
        self._bare_versions: dict[str, None] = {}
        self._placements: dict[int, tuple[int, str, int, int]] = {}
        self._notes: dict[str, None] = {}
        self._num_lines = 0
        self._num_nccl_lines = 0
        #: the sources with a word an artefact reader needs (BlockResult.framework)
        self._framework: dict[str, None] = {}
        self._num_bytes = 0
        #: per source: lines longer than MAX_LINE_BYTES, cut
        self._num_cut: dict[str, int] = {}
        self.num_dropped = 0
        self._num_evidence = 0
        #: evidence lines kept in all (hpnet.ncclog.shards lifts it to count them all)
        self.max_evidence = MAX_EVIDENCE
        #: process key -> the glued run its host was guessed from (Classifier.guessed),
        #: for keys no line named but by a guess; resolved by :meth:`result`
        self._guessed: dict[str, str] = {}
        #: memberships over the cap in records merged elsewhere (hpnet.ncclog.shards)
        self.num_dropped_memberships = 0

    @property
    def num_lines(self) -> int:
        return self._num_lines

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
        if block.framework:
            self._framework[block.source] = None
        self._num_bytes += block.num_bytes
        if block.num_cut:
            self._num_cut[block.source] = self._num_cut.get(block.source, 0) + block.num_cut
        for event in block.events:
            if event.kind == "diag":  # NCCL's diagnostics: read whole (hpnet.ncclog.diag)
                self._keep(self._diag, event.text, event)
            else:
                self._fold(event)

    def _keep(self, kept: dict[str, LogLine], message: str, event: Event) -> None:
        self.keep_line(kept, evidence_line(event, message))

    def keep_line(
        self,
        kept: dict[str, LogLine],
        line: LogLine,
        shift: Callable[[LogLine], LogLine] | None = None,
    ) -> None:
        """Keep a line as evidence once per message, counting repeats (so the answer does
        not depend on how the input was cut into blocks); ``shift`` places a later
        range's line, when it is kept."""
        key = line.message or line.text
        seen = kept.get(key)
        if seen is not None:
            kept[key] = seen.counted(seen.count + line.count)
            return
        if self._num_evidence >= self.max_evidence:
            self.num_dropped += line.count
            return
        self._num_evidence += 1
        kept[key] = shift(line) if shift is not None else line

    def take_guesses(self, classifier: Classifier) -> None:
        """The hosts ``classifier`` guessed, where it scanned all this folder holds."""
        for key, run in classifier.guessed.items():
            if key not in classifier.real:
                self._guessed.setdefault(key, run)

    def merge(self, later: LogFolder, *, line_offset: int = 0) -> None:
        """Fold in a folder of a later part of the input (a range a worker scanned).

        ``line_offset``: the lines of the same source before that part, added to its
        evidence's line numbers.
        """
        shift = shifter(line_offset)
        self._sources.update(later._sources)
        self._bare_versions.update(later._bare_versions)
        for rank, placement in later._placements.items():
            self._placements.setdefault(rank, placement)
        for note in later._notes:
            self.note(note)
        self._num_lines += later._num_lines
        self._num_nccl_lines += later._num_nccl_lines
        self._framework.update(later._framework)
        self._num_bytes += later._num_bytes
        for source, num_cut in later._num_cut.items():
            self._num_cut[source] = self._num_cut.get(source, 0) + num_cut
        self.num_dropped += later.num_dropped
        for line in later._signals.values():
            self.keep_line(self._signals, line, shift)
        for line in later._bare_warnings.values():
            self.keep_line(self._bare_warnings, line, shift)
        for line in later._diag.values():
            self.keep_line(self._diag, line, shift)
        # a key guessed in one part and named by a line of its own in another is real
        for key in [k for k in self._guessed if k in later._processes and k not in later._guessed]:
            del self._guessed[key]
        for key, run in later._guessed.items():
            if key not in self._processes:
                self._guessed.setdefault(key, run)
        for key, process in later._processes.items():
            mine = self._processes.get(key)
            if mine is None:
                mine = self._processes[key] = ProcessFacts(
                    (process.key, process.host, process.pid, process.launcher_rank, None)
                )
            mine.merge(process, shift, self)

    def _process(self, ref: ProcessRef) -> ProcessFacts:
        record = self._processes.get(ref[0])
        if record is None:
            record = self._processes[ref[0]] = ProcessFacts(ref)
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
            if kind == "warn":  # a WARN pasted alone: no process to pin it on
                self._keep(self._bare_warnings, f"WARN {event.text}", event)
            return
        if kind == "bare-version":
            self._bare_versions[str(event.data[0])] = None
            if ref[1] is None:  # no host:pid: rank 0's banner, not a process of its own
                return
        process = self._process(ref)
        process.sources[event.source] = None
        if ref[4] is not None and ref[4] >= 0:
            process.devices[ref[4]] = None
        _narrow_release(process, event)
        if kind in PROGRESS_KINDS or (kind == "comm" and event.data[1] == "COMPLETE"):
            process.progressed = True
            if process.warned:
                process.went_on, process.warned = True, False
        if event.line_number:  # located: a statement quoted as evidence
            key = _statement(kind, event.data)
            known = process.lines
            if key is not None and key not in known and len(known) < MAX_STATEMENTS:
                known[key] = evidence_line(event, event.text)
        if kind in ("warn", "notable"):
            self._fold_warning(process, event)
            return
        fold = FOLD_KINDS.get(kind)
        if fold is not None:
            fold(process, event)

    def _fold_warning(self, process: ProcessFacts, event: Event) -> None:
        """A WARN, or an INFO line worth quoting, kept under the per-process cap."""
        kind, data = event.kind, event.data
        if "libibverbs" in event.text:
            process.ib_no_device = True
        where = str(data[0]) if kind == "warn" and data and data[0] else None
        level = "WARN" if kind == "warn" else "INFO"
        text = f"{level} {where + ' ' if where else ''}{event.text}"
        if kind == "warn":
            if not process.went_on:
                process.warned = True
            if text not in process.warn_fatal:
                self._fold_warn(process, event, where, text)
        if text in process.warnings or len(process.warnings) < MAX_WARNINGS_PER_PROCESS:
            self._keep(process.warnings, text, event)
        else:
            self.num_dropped += event.count

    @staticmethod
    def _fold_warn(process: ProcessFacts, event: Event, where: str | None, said: str) -> None:
        """A WARN seen first in this process: the NET plugin whose source printed it, or
        what NCCL's source says of it (does the call fail after it, which releases print
        it at this ``file:line``: hpnet.ncclog.formats)."""
        plugin = plugin_of(where)
        if plugin is not None:
            process.net_modules.setdefault(plugin, None)
            process.warn_fatal[said] = "unknown"
            return
        fatal, releases = load_table().warn(where, event.text)
        if where and where.rsplit("/", 1)[-1].split(" ", 1)[0] in ABSORBED:
            fatal = "nonfatal"  # a check in a function that returns a flag, not the error
        process.warn_fatal[said] = fatal or "unknown"
        if releases is None or process.version_conflict:
            return
        merged = intersect(process.version_range or (None, None), releases)
        if empty(merged):
            process.version_conflict = True
            return
        if merged != process.version_range and event.line_number:
            form = f"form:{format_range(releases)}"
            if form not in process.lines:
                process.lines[form] = evidence_line(event, event.text)
        process.version_range = merged

    def _resolve_guesses(self) -> None:
        """A process whose host was guessed from a glued run (``... delay 0vm:629:629 [0]
        NCCL INFO``, the pid's host unknown where it was read) joins the process of the
        same pid whose host ends the run (the longest), else takes the longest host of
        any process that ends it: what one pass over the input, which remembers every
        host, cuts; so the answer does not depend on where ranges were cut. A host named
        by a line of its own is never merged into another."""
        guessed = [k for k in self._guessed if k in self._processes]
        if not guessed:
            return
        by_pid: dict[int | None, set[str]] = {}
        for key, process in self._processes.items():
            if key not in self._guessed and process.host:
                by_pid.setdefault(process.pid, set()).add(process.host)
        every = set().union(*by_pid.values())
        into: dict[str, str] = {}
        for key in guessed:
            run, pid = self._guessed[key], self._processes[key].pid
            for known in (by_pid.get(pid, set()), every):
                ends = [h for h in known if run.endswith(h)]
                if ends:
                    into[key] = f"{max(ends, key=len)}:{pid}"
                    break
        if not into:
            return
        for key, target in into.items():  # into another guess: on to where that one goes
            seen, end = {key}, target
            while end in into and end not in seen:
                seen.add(end)
                end = into[end]
            into[key] = end
        processes: dict[str, ProcessFacts] = {}
        for key, process in self._processes.items():
            target = into.get(key, key)
            mine = processes.get(target)
            if mine is None and target == key:
                processes[key] = process
                continue
            if mine is None:
                named = self._processes.get(target, process)
                ref = (target, target.rsplit(":", 1)[0], named.pid, named.launcher_rank, None)
                mine = processes[target] = ProcessFacts(ref)
            mine.merge(process, _same_line, self)
        self._processes = processes

    def result(self, frozen: Sequence[ProcessLog] | None = None) -> NcclLog:
        """The log, its processes frozen here or, where ``frozen`` is given, those
        (what hpnet.ncclog.shards merged and froze in the workers, in this folder's
        order; this folder then holds no process records)."""
        self._resolve_guesses()
        for source, num_cut in self._num_cut.items():
            self.note(
                f"{source}: {num_cut} line(s) longer than {MAX_LINE_BYTES >> 20} MiB, "
                f"read up to {MAX_LINE_BYTES >> 20} MiB"
            )
        return NcclLog(
            sources=tuple(self._sources),
            processes=recover(
                list(frozen)
                if frozen is not None
                else [p.freeze() for p in self._processes.values()]
            ),
            signals=in_order(self._signals.values()),
            bare_warnings=in_order(self._bare_warnings.values()),
            diag=in_order(self._diag.values()),
            num_lines=self._num_lines,
            num_nccl_lines=self._num_nccl_lines,
            framework_sources=tuple(self._framework),
            num_bytes=self._num_bytes,
            num_dropped=self.num_dropped,
            input_notes=tuple(self._notes),
            bare_versions=tuple(self._bare_versions),
            placements=tuple(self._placements[r] for r in sorted(self._placements)),
            num_dropped_memberships=self.num_dropped_memberships
            + sum(p.dropped_memberships for p in self._processes.values()),
        )


def _same_line(line: LogLine) -> LogLine:
    return line


def shifter(line_offset: int) -> Callable[[LogLine], LogLine]:
    """What places a later range's evidence line: ``line_offset`` lines further."""

    def shift(line: LogLine) -> LogLine:
        if not line_offset or not line.line_number:
            return line
        return line.moved(line_offset)

    return shift


def parse_nccl_text(data: bytes, *, source: str = "<text>") -> NcclLog:
    """Parse a whole log held in memory."""
    folder = LogFolder()
    folder.add_source(source)
    classifier = Classifier()
    for block, first_line in iter_blocks(data, BLOCK_BYTES):
        folder.add(scan_block(block, source=source, start_line=first_line, classifier=classifier))
    folder.take_guesses(classifier)
    return folder.result()


def parse_nccl_log(lines: Iterable[str], *, source: str = "<lines>") -> NcclLog:
    """Parse log lines (without or with their newlines), streaming in blocks."""
    folder = LogFolder()
    folder.add_source(source)
    classifier = Classifier()
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
        folder.add(
            scan_block(
                "".join(pending).encode(),
                source=source,
                start_line=first_line,
                classifier=classifier,
            )
        )
    folder.take_guesses(classifier)
    return folder.result()
