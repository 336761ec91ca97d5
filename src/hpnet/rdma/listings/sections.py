"""A pasted listing as sections, each read whole or named as not read.

People paste several commands at once (``ls /dev/infiniband``, then ``ls
/sys/class/infiniband``, then ``ls /sys/class/net``; ``ip a`` then ``ibv_devinfo``).
A section starts at each command line (a shell prompt with a command, ``CMD:``, a
verbs tool's name alone on its line, or the ``/dir:`` heading ``ls`` prints before each
of several directories). A section is one tool's output only when *every*
line in it is a line that tool prints (or a tool's error or warning line, or an
elision ``...``): a text that only mentions ``uverbs0`` or ``/dev/infiniband`` is
not a listing. Sections that are not are reported, never dropped silently.

Pure functions of text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from hpnet.rdma.listings._common import MAX_LINE_CHARS
from hpnet.rdma.listings.iproute import RDMA_LINK_LINE

__all__ = ["Section", "split_sections"]

# "$ cmd", "# cmd", "~$ cmd", "[root@node ~]# cmd", "root@host:/# cmd", "host:~ # cmd"
_PROMPT = re.compile(
    r"^(?:\[[^\]]*\]|[\w.-]+@[\w.-]+(?::\S*)?|[\w.-]+:\S*|~\S*|\([\w.-]+\)\s*\S*)?"
    r"\s*[$#%>]\s*(?P<cmd>\S.*?)\s*$"
)
_LS_HEADER = re.compile(r"^(/[\w./-]*):$")
_LEGEND_ENTRY = re.compile(r"^NIC\d+:\s*\S+$")
_CMD = re.compile(r"^CMD:\s*(?P<cmd>\S.*?)\s*$")
#: the first words of the commands whose output hpnet reads, alone on a line
_TOOLS = frozenset(
    {"ibv_devinfo", "ibv_devices", "ibstat", "ibstatus", "show_gids", "ibdev2netdev", "rdma"}
)
#: lines any tool may print among its output: its errors and warnings, an elision
_NOISE = re.compile(
    r"^(?:\.{3,}|\[\.\.\.\]|…|(?:ibpanic|ibwarn|libibverbs|ibv_\w+|ibstat\w*|ls|rdma|"
    r"show_gids|ibdev2netdev)(?:\[\d+\])?:\s.*|total \d+|-+)$"
)
_DEVICE = (
    r"(?:mlx[45]_\w+|erdma_\d+|irdma\d+|efa_?\d+|bnxt_re\d+|rxe\w*|siw\w*|qedr\d+|hfi1_\d+|"
    r"hns_\d+|ocrdma\d+|cxgb4_\d+|vmw_pvrdma\d+|mana_\d+|ionic_\d+|roce\w+|ibp\w+)"
)
_DEV_NODE = r"(?:uverbs\d+|rdma_cm|umad\d+|issm\d+|ucm\d+|uat|by-ibdev|by-path)"
_LS_LONG = re.compile(
    r"^[bcdlps-][rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+(?:\d+,\s*)?\d+\s+\S+\s+\S+\s+\S+\s+"
    r"(?P<name>\S+)(?:\s+->\s+\S+)?$"
)


def _tokens(pattern: str) -> Callable[[str], bool]:
    whole = re.compile(rf"^(?:{pattern}/?\s*)+$")
    return lambda line: bool(whole.match(line))


def _ls(pattern: str) -> Callable[[str], bool]:
    name = re.compile(rf"^(?:{pattern}|\.|\.\.)/?$")
    tokens = _tokens(pattern)

    def accounts(line: str) -> bool:
        long = _LS_LONG.match(line)
        return bool(name.match(long.group("name"))) if long else tokens(line)

    return accounts


def _matches(*patterns: str) -> Callable[[str], bool]:
    compiled = [re.compile(p) for p in patterns]
    return lambda line: any(p.search(line) for p in compiled)


_HEX_GID = r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*"
#: ibstat's and ibstatus' field names (``infiniband-diags`` ibstat.c, ibstatus)
_IBSTAT_KEYS = (
    r"CA type|Number of ports|Firmware version|Hardware version|Node GUID|"
    r"System image GUID|State|Physical state|Rate|Base lid|LMC|SM lid|Capability mask|"
    r"Port GUID|Link layer"
)
_IBSTATUS_KEYS = r"default gid|base lid|sm lid|state|phys state|rate|link_layer"
#: kind -> whether a line (stripped) is one that tool prints
GRAMMAR: dict[str, Callable[[str], bool]] = {
    # devinfo.c: "key:<tabs>value" with one-word keys (and a few fixed others), GID[ n],
    # -v's capability flags one a line, and a GID's address wrapped onto its own line
    # (mail clients do this)
    "ibv_devinfo": _matches(
        r"^No IB devices found",
        # devinfo.c's print_hca_cap, to stderr, for a device ibv_open_device refuses
        # (before its hca_id line: the device's name is not printed)
        r"^Failed to open device$",
        r"^(?:[A-Za-z_]\w*(?:\[\s*\d+\])?|Device ports|Unknown flags|\w+ caps):(?:\s.*)?$",
        r"^[A-Z][A-Z0-9_]+$",
        rf"^{_HEX_GID}(?:,.*)?$",
    ),
    "ibv_devinfo -l": _matches(r"^\d+ HCAs? found:?$", rf"^{_DEVICE}$"),
    "ibstat": _matches(r"^CA '[^']+'$", r"^Port \d+:$", rf"^(?:{_IBSTAT_KEYS}):"),
    "ibstatus": _matches(
        r"^Infiniband device '[^']+' port \d+ status:$", rf"^(?:{_IBSTATUS_KEYS}):"
    ),
    "show_gids": _matches(
        r"^DEV\s+PORT\s+INDEX\s+GID",
        r"^[-\s]+$",
        r"^n_gids_found=\d+$",
        r"^\S+\s+\d+\s+\d+\s+[0-9A-Fa-f:]+\s",
    ),
    "ibdev2netdev": _matches(r"\bport\s+\d+\s*(?:\([^)]*\)\s*)?==>\s*\S+"),
    "rdma link": lambda line: bool(RDMA_LINK_LINE.match(line)) or line.startswith("caps: <"),
    "ibv_devices": _matches(r"^device\s+node GUID$", r"^[-\s]+$", r"^\S+\s+[0-9A-Fa-f]{16}$"),
    "ls /sys/class/infiniband": _ls(_DEVICE),
    "ls /dev/infiniband": _ls(_DEV_NODE),
}


#: a section with more than one line in this many that its tool does not print is not
#: that tool's output
MAX_STRAY_SHARE = 10


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Section:
    """Lines ``first``..``last`` (1-based) of the input; ``command`` as pasted, if any."""

    first: int
    last: int
    command: str | None
    #: the output lines (number, stripped text), without the command line and blanks
    lines: tuple[tuple[int, str], ...]
    #: the tool whose output the section is, or None (``strays`` says why)
    kind: str | None = None
    #: lines that tool (:data:`GRAMMAR`) does not print: not read
    strays: tuple[tuple[int, str], ...] = ()

    def text(self, total_lines: int) -> str:
        """The whole input with only this section's lines kept: line numbers hold."""
        kept = dict(self.lines)
        return "\n".join(kept.get(n, "") for n in range(1, total_lines + 1))

    def describe(self) -> str:
        where = (
            f"lines {self.first}-{self.last}" if self.last > self.first else f"line {self.first}"
        )
        return f"{where} (`{self.command}`)" if self.command else where


def command_of(line: str) -> str | None:
    """The command a pasted command line runs, or None for an output line.

    >>> command_of("[root@node75 ~]# rdma link show"), command_of("mlx5_0 port 1 ==> ib0 (Up)")
    ('rdma link show', None)
    """
    stripped = line.strip()
    if stripped == "NIC Legend:":
        # the legend `nvidia-smi topo -m` prints under its matrix: another tool's output,
        # its own section (reported as not read), never part of the listing after it
        return "nvidia-smi topo -m"
    header = _LS_HEADER.match(stripped)
    if header:  # `ls` of several directories heads each one's names with "<dir>:"
        return f"ls {header.group(1)}"
    for pattern in (_CMD, _PROMPT):
        found = pattern.match(stripped)
        if found:
            return found.group("cmd")
    words = stripped.split()
    if words and words[0] in _TOOLS and not any(":" in w or "=" in w for w in words):
        return stripped
    return None


def _ls_kind(command: str | None) -> str | None:
    """``ls [-la] /dev/infiniband/``: the kind its output is (names alone do not say)."""
    words = (command or "").split()
    if not words or words[0] != "ls":
        return None
    paths = [w.rstrip("/") for w in words[1:] if not w.startswith("-")]
    if paths == ["/dev/infiniband"]:
        return "ls /dev/infiniband"
    if paths == ["/sys/class/infiniband"]:
        return "ls /sys/class/infiniband"
    return None


def split_sections(text: str, kind_of_line: Callable[[str], str | None]) -> list[Section]:
    """Cut ``text`` at its command lines and name each section's tool (or why none).

    ``kind_of_line`` names the tool a characteristic line comes from; a section is of
    that kind only when :data:`GRAMMAR` accounts for every one of its lines.
    """
    raw: list[tuple[int, str | None, list[tuple[int, str]]]] = []
    current: tuple[int, str | None, list[tuple[int, str]]] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or len(stripped) > MAX_LINE_CHARS:
            continue
        command = command_of(stripped)
        if command is not None:
            current = (number, command, [])
            raw.append(current)
            continue
        if current is None or (
            current[1] == "nvidia-smi topo -m" and not _LEGEND_ENTRY.match(stripped)
        ):
            # the legend's "NICn: name" lines end where another tool's output begins
            current = (number, None, [])
            raw.append(current)
        current[2].append((number, line.rstrip("\r\n")))
    sections = []
    for first, command, lines in raw:
        last = lines[-1][0] if lines else first
        if not lines:
            continue  # a command with no output: nothing to read or to miss
        kind = _ls_kind(command) or next(
            (k for _, s in lines if not _NOISE.match(s.strip()) and (k := kind_of_line(s.strip()))),
            None,
        )
        strays: list[tuple[int, str]] = []
        if all(_NOISE.match(s.strip()) for _, s in lines):
            kind = None  # only the tool's errors: no stray line, no device in it
        elif kind is not None:
            accounts = GRAMMAR[kind]
            # ibv_devinfo -v indents all but hca_id: its capability blocks vary by
            # provider and version ("NO SUPPORT", "log atomic arg sizes (mask)  0x8")
            indented = kind == "ibv_devinfo"
            strays = [
                (n, s.strip())
                for n, s in lines
                if not _NOISE.match(s.strip())
                and not accounts(s.strip())
                and not (indented and s[:1].isspace())
            ]
            # the tool's output as a whole: a stray line (a note, a byte of junk) in ten
            # is read past and named; more, and the text is not this tool's output
            if len(strays) * MAX_STRAY_SHARE > len(lines):
                kind = None
        else:
            strays = [next((n, s.strip()) for n, s in lines if not _NOISE.match(s.strip()))]
        sections.append(
            Section(
                first=first,
                last=last,
                command=command,
                lines=tuple(lines),
                kind=kind,
                strays=tuple(strays),
            )
        )
    return sections
