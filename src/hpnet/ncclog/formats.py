"""NCCL's own log format strings, release by release: the ground truth the parser is
tested against and the facts it reads from WARN lines.

``data/nccl_formats.json`` is built from NCCL's git history by
``tools/nccl_formats/build_table.py`` (every ``INFO``/``WARN``/``VERSION`` call of every
release tag from 2.3.5 to 2.30.7, with the release runs that print it in that form), from
the ``libnccl.so.2`` of the releases published only as wheels (2.31.2, 2.32.3) by
``tools/nccl_formats/binary.py`` (each log call's level, format and ``file:line`` read
from the machine code; such a format's ``fatal`` is ``unknown``), and
from the history of the NET plugins whose lines NCCL logs carry (aws-ofi-nccl,
nccl-rdma-sharp-plugins, GCP's FastSocket, GPUDirect-TCPX and -TCPXO). It holds, per
format:

* ``evidence``: what the line says that ``hpnet verify`` reports (:data:`EVIDENCE`), and
  ``example``, a line of that format the parser must read as ``kinds`` say
  (tests/unit/test_format_table.py checks every one);
* for WARNs, ``fatal``: whether NCCL's source returns an error after printing it
  (``fatal`` / ``nonfatal`` / ``mixed`` / ``unknown``, from the statements that follow
  the call), ``recover``: the releases in which a direct caller of the failed call goes
  on without passing the error up (NCCL falls back), ``site_fatal``: the call sites
  whose decision differs from the format's, and ``sites``: each ``file:line``
  that prints it with the releases in which it stands at that line, so that a WARN's
  ``file.cc:123`` names the releases that wrote it.

Loaded once, lazily: only logs with WARN lines need it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources

from hpnet.ncclog.versions import VersionRange

__all__ = [
    "EVIDENCE",
    "FormatTable",
    "evidence_of",
    "format_regex",
    "load_table",
    "runs_range",
]

#: what makes a format string evidence: (category, pattern over the format, the event
#: kinds hpnet.ncclog.lines must read its lines as). Every WARN is evidence (kind warn).
EVIDENCE: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = tuple(
    (name, re.compile(pattern), frozenset(kinds))
    for name, pattern, kinds in (
        ("network", r"^Using (?:internal |external )?[Nn]etwork %s$|^Assigned NET plugin %s to",
         {"network"}),
        ("plugin", r"^(?:Initialized|Failed to initialize) NET plugin %s$|^NET/Plugin ?:"
         r"|^Successfully loaded external .*plugin|^Disabling external plugins"
         r"|^Failed to initialize any \w+ plugin", {"plugin", "ib-failed"}),
        ("nic-list", r"^NET/(?:%s|\w+) ?: Using%s|^NET/IB: \[%d\] |Made virtual device",
         {"net-list", "net-nic"}),
        ("provider", r"^NET/OFI Selected [Pp]rovider is %s", {"provider"}),
        # a NET plugin's own lines: it was loaded, whatever NCCL then chose
        ("module", r"^NET/OFI (?:Using|Initializing) aws-ofi-nccl %s|^NET/\w+ plugin initialized"
         r"|^NET/(?!IB\b|Socket\b|Plugin\b|OFI\b)[A-Za-z]\w* ?: |^P2P plugin ",
         {"net-module", "notable"}),
        ("no-device", r"^NET/IB : No device found|^Failed to open libibverbs|^Count not open",
         {"ib-no-device"}),
        ("bootstrap", r"^Bootstrap ?: Using", {"bootstrap"}),
        ("gdr", r"GPU Direct RDMA (?:\([^)]*\) )?(?:[Dd]isabled|[Ee]nabled|%s) for", {"gdr"}),
        # and NCCL_TOPO_FILE's value as the file NCCL loaded, or as aws-ofi-nccl set it
        ("env", r"^(?:%s|NCCL_\w+) set (?:by environment )?to |^Loading topology file "
         r"|Setting NCCL_TOPO_FILE environment variable to ", {"env"}),
        ("transport", r"^(?:Channel|Ring|CollNet|Coll) %0?2?d.* via ", {"connection"}),
        ("version", r"^NCCL version|^cudaDriverVersion %d$", {"version", "cuda-driver"}),
        ("comm", r"- (?:Init|Abort|Destroy|Revoke|%s) (?:START|COMPLETE)"
         r"|^comm %p rank %d n[Rr]anks %d|^rank %d nranks %d", {"comm"}),
        ("trail", r"^%s:%d (?:\(%s\) )?-> %d", {"trail"}),
        ("nvls", r"nvls channels, |^NVLS multicast support|^Connected NVLS|^NVLS comm %p", {
            "channels", "nvls-support", "nvls"}),
        ("gin", r"^Assigned (?:GIN|RMA) plugin", {"gin"}),
        # "Connected all rings/trees", "Connected to proxy", a plugin's "Connected comm=":
        # the process got that far
        ("rings", r"^Connected ", {"ring-gdr", "connected"}),
    )
)  # fmt: skip


def evidence_of(level: str, text: str) -> tuple[str, frozenset[str]] | None:
    """The evidence category of a format string and the kinds that read it, or None.

    >>> evidence_of("INFO", "Using network %s")
    ('network', frozenset({'network'}))
    >>> evidence_of("WARN", "Cuda failure '%s'")
    ('failure', frozenset({'warn'}))
    """
    if level == "WARN":
        return "failure", frozenset({"warn"})
    for name, pattern, kinds in EVIDENCE:
        if pattern.search(text):
            return name, kinds
    return None


#: a WARN pasted without its prefix is recognised by a format whose literal start is at
#: least this long ("Call to posix_fallocate failed : %s", not "%s:%d -> %d")
BARE_PREFIX_CHARS = 12

_CONVERSION = re.compile(
    r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcsp%])"
)


def format_regex(text: str) -> str:
    """A regular expression that matches what ``printf(text, ...)`` can print.

    >>> bool(re.fullmatch(format_regex("NET/IB : Got completion with error %d, len %d"),
    ...                   "NET/IB : Got completion with error 12, len 0"))
    True
    """
    parts = []
    at = 0
    for found in _CONVERSION.finditer(text):
        parts.append(re.escape(text[at : found.start()]))
        kind = found.group(5)
        if kind == "%":
            parts.append("%")
        elif kind in "di":
            parts.append(r"\s*[-+]?\d+")
        elif kind == "u":
            parts.append(r"\s*\d+")
        elif kind in "xXo":
            parts.append(r"\s*[0-9a-fA-F]+")
        elif kind == "p":
            parts.append(r"(?:0x[0-9a-fA-F]+|\(nil\))")
        elif kind in "eEfgG":
            parts.append(r"\s*[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|nan|inf)")
        elif kind == "c":
            parts.append(".")
        else:  # %s: anything, lazily
            parts.append(".*?")
        at = found.end()
    parts.append(re.escape(text[at:]))
    return "".join(parts)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("-", maxsplit=1)[0].split("."))


def runs_range(runs: str) -> VersionRange | None:
    """``2.4.2~2.11.4,2.13.4~2.30.7`` -> the range that covers them (2.4.2, 2.30.7).

    >>> runs_range("2.24.3~2.25.1")
    ((2, 24, 3), (2, 25, 1))
    """
    bounds = [part.split("~") for part in runs.split(",") if part]
    if not bounds:
        return None
    low = min(_version(b[0]) for b in bounds)
    high = max(_version(b[-1]) for b in bounds)
    return (low, high)


class FormatTable:
    """The table, with the WARN formats compiled on first use."""

    def __init__(self, data: Mapping[str, object]) -> None:
        self.releases: tuple[str, ...] = tuple(data["releases"])  # type: ignore[arg-type]
        #: NET plugin -> its repository and the tags read (the formats of a plugin carry
        #: ``plugin``; their runs are the plugin's own releases)
        self.plugins: Mapping[str, Mapping[str, object]] = data.get("plugins") or {}  # type: ignore[assignment]
        #: releases read from a released libnccl.so.2 rather than the source (2.31.2,
        #: 2.32.3): the wheel, the library's sha256, its version banner and the
        #: ``NCCL DIAG`` formats its diagnostics print (tools/nccl_formats/binary.py)
        self.binaries: Mapping[str, Mapping[str, object]] = data.get("binaries") or {}  # type: ignore[assignment]
        self.formats: tuple[dict[str, object], ...] = tuple(data["formats"])  # type: ignore[arg-type]
        self._warns: WarnIndex | None = None
        self._seen: dict[tuple[str | None, str], tuple[str | None, VersionRange | None]] = {}
        #: WARN formats by the start of their leading literal: a WARN pasted without its
        #: prefix is known by it (:meth:`bare_warn`)
        self._bare: dict[str, list[tuple[str, re.Pattern[str] | None]]] = {}
        #: a format NCCL also prints at INFO ("dlvsym failed on %s - %s version %s": a
        #: required symbol's WARN, an optional one's INFO, mlx5dvsymbols.cc): without its
        #: level, such a line is not known to be a WARN
        info = {str(e.get("format") or "").strip() for e in self.formats if e["level"] == "INFO"}
        for entry in self.formats:
            text = str(entry.get("format") or "").strip()
            if entry["level"] != "WARN" or text in info:
                continue
            literal = text.split("%", 1)[0]
            if len(literal) >= BARE_PREFIX_CHARS:
                bucket = self._bare.setdefault(literal[:BARE_PREFIX_CHARS], [])
                bucket.append((text, None))
                first = text.split("\n", 1)[0].strip()
                if first != text and all(first != known for known, _ in bucket):
                    bucket.append((first, None))  # a WARN of several lines: its first alone
        #: the same starts as bytes, for the scanner's test of a line
        self.bare_starts: frozenset[bytes] = frozenset(k.encode() for k in self._bare)
        #: the same with every digit 0 (a test on lines whose digits were made 0)
        zero = bytes.maketrans(b"123456789", b"000000000")
        self.bare_starts_digits_zero = frozenset(k.translate(zero) for k in self.bare_starts)

    def bare_warn(self, message: str) -> bool:
        """Is ``message`` the whole text of a WARN that NCCL or a NET plugin prints, of a
        format that starts with at least :data:`BARE_PREFIX_CHARS` literal characters (a
        program's own words do not match such a format by chance)?

        >>> load_table().bare_warn("Call to posix_fallocate failed : No space left on device")
        True
        >>> load_table().bare_warn("Call to posix_fallocate: my program's own words")
        False
        """
        text = message.strip()
        bucket = self._bare.get(text[:BARE_PREFIX_CHARS])
        if not bucket:
            return False
        for i, (fmt, compiled) in enumerate(bucket):
            pattern = compiled or re.compile(format_regex(fmt) + r"\s*")
            bucket[i] = (fmt, pattern)
            if pattern.fullmatch(text):
                return True
        return False

    def warn(self, where: str | None, message: str) -> tuple[str | None, VersionRange | None]:
        """What NCCL's source says of a WARN line: whether printing it means the call
        fails (``fatal``, ``nonfatal``, ``mixed``, ``recoverable``: fails, but a caller may
        go on, ``unknown``; None: a format no NCCL release prints, a plugin's), and the
        releases that print it at ``where`` (``transport/net_ib.cc:2244``) — None when the
        location names none of them.
        """
        known = self._seen.get((where, message))
        if known is not None:
            return known
        if self._warns is None:
            self._warns = WarnIndex(self.formats)
        warns = self._warns
        text = message.strip()
        releases: VersionRange | None = None
        fatal: str | None = None
        site = _site(where)
        if site is not None:
            matched = [(runs, e) for i, runs, e in warns.at_site(site) if warns.matches(i, text)]
            if matched:
                ranges = [
                    r for r in (runs_range(self._site_runs(runs, e)) for runs, e in matched) if r
                ]
                if ranges:
                    releases = (min(r[0] for r in ranges), max(r[1] for r in ranges))  # type: ignore[type-var]
                fatal = _combine(_at_site(e, site, releases) for _, e in matched)
        if fatal is None:
            entries = [warns.entry(i) for i in warns.candidates(text) if warns.matches(i, text)]
            if entries:
                fatal = _combine(_decision(e, None) for e in entries)
        if len(self._seen) < 10_000:
            self._seen[(where, message)] = (fatal, releases)
        return fatal, releases

    def _site_runs(self, runs: str, entry: Mapping[str, object]) -> str:
        """The releases that print ``entry`` at a site where the table says ``runs``.

        A released binary names the caller of a logging macro (CUDACHECK's ``Cuda
        failure``: ``transport/nvls.cc:246``), the source table the macro's own header
        (``include/checks.h``): a call site read only from binaries does not exclude the
        source releases that print the format through a macro, so the format's own runs
        stand for it there."""
        if not all(
            part.split("~")[0] in self.binaries and part.split("~")[-1] in self.binaries
            for part in runs.split(",")
        ):
            return runs
        sites = entry.get("sites") or {}
        assert isinstance(sites, dict)  # noqa: S101
        by_macro = any(re.search(r"\.(?:h|hpp|cuh):\d+$", str(s)) for s in sites)
        return str(entry.get("runs") or runs) if by_macro else runs


class WarnIndex:
    """NCCL's WARN formats (not a plugin's), indexed by call site and by the literal text
    each starts with, each compiled the first time a message may match it.

    A message can only be printed by a format whose text before its first ``%`` starts
    it, so a message is matched against those alone: compiling all 1,417 formats took
    0.29 s on the first WARN of every run (and emptied ``re``'s cache of 512 patterns,
    which every other module's ``re.search(pattern, ...)`` then compiled again)."""

    def __init__(self, formats: Sequence[Mapping[str, object]]) -> None:
        #: (leading literal, format, entry), in the table's order
        self._formats: list[tuple[str, str, Mapping[str, object]]] = []
        self._sites: dict[str, list[tuple[int, str, Mapping[str, object]]]] = {}
        self._by_literal: dict[str, list[int]] = {}
        for entry in formats:
            if entry["level"] != "WARN" or not entry.get("format") or entry.get("plugin"):
                continue  # a plugin's WARNs: not NCCL's, no release of NCCL prints them
            text = str(entry["format"]).strip()
            index = len(self._formats)
            literal = text.split("%", 1)[0]
            self._formats.append((literal, text, entry))
            self._by_literal.setdefault(literal, []).append(index)
            sites = entry.get("sites") or {}
            assert isinstance(sites, dict)  # noqa: S101
            for site, runs in sites.items():
                self._sites.setdefault(str(site), []).append((index, str(runs), entry))
        self._lengths = sorted({len(literal) for literal in self._by_literal})
        self._patterns: list[re.Pattern[str] | None] = [None] * len(self._formats)

    def entry(self, index: int) -> Mapping[str, object]:
        return self._formats[index][2]

    def at_site(self, site: str) -> Sequence[tuple[int, str, Mapping[str, object]]]:
        """The formats printed at ``site``, with the releases that print each there."""
        return self._sites.get(site, ())

    def candidates(self, text: str) -> list[int]:
        """The formats whose leading literal starts ``text``, in the table's order."""
        found: list[int] = []
        for length in self._lengths:
            if length > len(text):
                break
            found.extend(self._by_literal.get(text[:length], ()))
        return sorted(found)

    def matches(self, index: int, text: str) -> bool:
        """Can the format at ``index`` print ``text`` (stripped)?"""
        literal, fmt, _ = self._formats[index]
        if not text.startswith(literal):
            return False
        pattern = self._patterns[index]
        if pattern is None:
            pattern = self._patterns[index] = re.compile(format_regex(fmt) + r"\s*")
        return pattern.fullmatch(text) is not None


def _site(where: str | None) -> str | None:
    """``transport/net_ib.cc:2244`` from a WARN's location (2.30.7 adds `` (func)``; a
    plugin's function location is no NCCL site)."""
    if not where:
        return None
    place = where.split(" (", 1)[0]
    return place if re.fullmatch(r"[\w./-]+\.(?:cc|cu|c|h|cpp|hpp|cuh):\d+", place) else None


def _at_site(entry: Mapping[str, object], site: str, releases: VersionRange | None) -> str:
    """The decision of the call at ``site`` where it differs from the format's."""
    differ = entry.get("site_fatal")
    if isinstance(differ, dict) and site in differ:
        return str(differ[site])
    return _decision(entry, releases)


def _decision(entry: Mapping[str, object], releases: VersionRange | None) -> str:
    """``fatal`` / ``nonfatal`` / ``mixed`` / ``unknown`` of a WARN format, or
    ``recoverable``: the call that printed it fails, but in one of ``releases`` (any, when
    not known) a caller of that call goes on without passing the error up."""
    fatal = str(entry.get("fatal") or "unknown")
    recover = str(entry.get("recover") or "")
    if fatal not in ("fatal", "mixed") or not recover:
        return fatal
    tags = [_version(tag) for tag in recover.split(",")]
    if releases is None or any(
        (releases[0] is None or releases[0] <= tag) and (releases[1] is None or tag <= releases[1])
        for tag in tags
    ):
        return "recoverable"
    return fatal


def _combine(decisions: object) -> str:
    found = set(decisions)  # type: ignore[call-overload]
    if len(found) == 1:
        return str(found.pop())
    return "mixed" if {"fatal", "nonfatal"} <= found else "unknown"


@functools.cache
def load_table() -> FormatTable:
    """The table shipped with hpnet (read once)."""
    text = resources.files("hpnet.ncclog").joinpath("data/nccl_formats.json").read_text()
    return FormatTable(json.loads(text))
