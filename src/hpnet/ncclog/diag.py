"""NCCL's own diagnostics (2.31+): ``NCCL DIAG`` lines -> results per communicator.

``NCCL_RUN_DIAGNOSTICS=1`` (P2P check; 2.32 adds a network bandwidth check) and
``NCCL_RUN_RAS_DIAGNOSTICS=1`` (GPU inventory, CUDA driver, ECC, NVLink and the NCCL_*
variables compared across the ranks of a communicator) make NCCL print its results with
``printf``, not through its logger: ``"%s:%d NCCL DIAG " + tag + message`` with host and
pid, no ``[cudaDev]``, no level, and ``NCCL_DEBUG`` does not filter them. The tags are
``[OK]   `` (the check passed) and ``[INFO] `` (information, or a problem NCCL found
without failing the communicator for it). Every format is in the format table's
``binaries`` section (read from the 2.31.2 and 2.32.3 wheels' ``libnccl.so.2``) and in
docs/nccl-log-formats.md ("NCCL DIAG lines"); ``tests/unit/test_diag.py`` reads an
instance of each through :func:`read_diag`.

The rule, so that a format nobody listed is still read: the tag gives ``ok``; an
``[INFO]`` message is ``found`` (a problem) unless it is one of the few that only
describe (:data:`_NOTES`: a value line of an environment mismatch, a measurement's
detail, a check that could not run); the area is the text before the first ``:``. A
``found`` result becomes a warning finding, never a fatal one: NCCL went on.

>>> line = read_diag("vm:628 NCCL DIAG [OK]   ECC: no uncorrected volatile errors "
...                  "across 2 ranks in comm 0xcd1768909de95a8d")
>>> line.process, line.status, line.area, line.comm
('vm:628', 'ok', 'ECC', '0xcd1768909de95a8d')
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from hpnet.ncclog.model import LogLine
from hpnet.ncclog.prefix import launcher_rank
from hpnet.result import Finding, Severity

__all__ = ["DiagCheck", "DiagComm", "DiagLine", "diag_findings", "read_diag", "summarize_diag"]

#: ``[tags] host:pid NCCL DIAG <body>`` (misc/diagnostics of 2.31.2 / 2.32.3: the format
#: strings ``"%s:%d NCCL DIAG ..."`` of the table's ``binaries``)
_LINE = re.compile(
    r"(?:^|(?<=[\s\]>:]))(?P<host>[A-Za-z0-9_.-]+):(?P<pid>\d+) NCCL DIAG (?P<body>.*)$"
)
#: ``[OK]   ``, ``[INFO] ``, and 2.32's ``[%s] net bw:`` (any word in the brackets)
_TAG = re.compile(r"\[(?P<tag>[A-Za-z]+)\]\s*")
_COMM = re.compile(r"\bin comm (0x[0-9a-fA-F]+)")
_ACROSS = re.compile(r"\bacross (\d+)(?: of \d+)? ranks\b")
#: the ranks a line names: ``rank(s) {0,2}`` (2.31.2), ``rank 3``, ``rank=3``, ``server_rank=1``
_RANKS = re.compile(r"\brank(?:\(s\))?[ =](?:\{([\d,\s-]*)\}|(\d+(?:[-,]\d+)*))")
_ENV_MISMATCH = re.compile(r"^NCCL environment: mismatch across \d+ ranks in comm \S+ for (\S+)")
_ENV_VALUE = re.compile(r"^NCCL environment: (NCCL_\w+)=(.*) on rank\(s\) (\S+)$")
#: ``[INFO]`` messages that describe and find nothing (their area's problem, if any, is
#: another line): the values behind an environment mismatch and its count, a partial
#: comparison, a check NVML could not run, a measurement and its setting, P2P's note
#: that it enabled peer access, a check that returned 0
_NOTES = re.compile(
    r"^NCCL environment: (?:NCCL_\w+=|\d+ NCCL_\* env var\(s\) differ|\d+ rank\(s\) had >)"
    r"|unavailable(?: via NVML)? across|^net bw: (?:mode=|multiple net devices|net devices are "
    r"shared|[\d.]+/[\d.]+/[\d.]+ Gbit/s)|^p2p: temporarily enabled|returned 0$"
)
#: untagged lines: section headers, summaries, RAS skipped (2.32)
_SUMMARY = re.compile(r"^(?:NCCL|RAS) diagnostics completed in ([\d.]+) ms across (\d+) ranks")

#: area -> (why NCCL reports it, what to do); an area not listed gets the generic pair
_AREAS: dict[str, tuple[str, str]] = {
    "NCCL environment": (
        "NCCL_RUN_RAS_DIAGNOSTICS compares the NCCL_* variables of every rank: ranks of one "
        "job normally share them, and a variable that differs makes those ranks behave "
        "differently (NCCL_HOSTID differing is what splits one machine into several NCCL "
        "hosts, as a test of the inter-node path does on purpose: hpnet cannot tell intent)",
        "set the same NCCL_* variables on every rank in the launcher, unless the difference "
        "is intended",
    ),
    "GPU inventory": (
        "RAS compares the GPU count and model of every rank's node: a node that differs "
        "has a GPU missing (fallen off the bus, hidden by CUDA_VISIBLE_DEVICES) or another "
        "model",
        "run nvidia-smi on the named ranks' nodes and compare CUDA_VISIBLE_DEVICES",
    ),
    "CUDA driver version": (
        "the ranks run different CUDA drivers",
        "install the same driver on every node",
    ),
    "ECC": (
        "volatile ECC errors on the named ranks' GPUs: a GPU whose memory fails can corrupt "
        "results or hang collectives",
        "drain the node and check `nvidia-smi -q -d ECC`; reset or replace the GPU",
    ),
    "NVLink": (
        "NVLink links are inactive, missing or at different speeds on the named ranks' "
        "GPUs: traffic that expects NVLink is slower or takes another path",
        "check `nvidia-smi nvlink --status` on those nodes, and the fabric manager",
    ),
    "p2p": (
        "NCCL's P2P check wrote and read GPU memory between the GPUs of a node and a "
        "transfer failed or returned other data (ACS or the IOMMU in the PCIe path, P2P "
        "broken in a VM, a driver problem)",
        "follow the next step NCCL's line gives; check ACS/IOMMU settings; "
        "NCCL_P2P_DISABLE=1 confirms P2P is the problem",
    ),
    "net bw": (
        "NCCL's network bandwidth check found a rank far from the median, or could not run",
        "test the named rank's NIC (`hpnet check`, ib_write_bw), its link speed and cable",
    ),
}
_GENERIC = (
    "NCCL's built-in diagnostics reported a problem without failing the communicator",
    "read the line: NCCL names the check and often the next step",
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DiagLine:
    """One ``NCCL DIAG`` line, read."""

    process: str  # host:pid, as NCCL's other lines name the process
    launcher_rank: int | None
    #: ``ok``, ``found`` (a problem NCCL found), ``note`` (describes, finds nothing),
    #: ``summary`` (a header, ``... diagnostics completed``)
    status: str
    area: str  # ``ECC``, ``p2p``, ``net bw``, ``NCCL environment`` ...; "" for a summary
    message: str  # NCCL's text after the tag
    comm: str | None  # the communicator's commId (``in comm 0x...``)
    num_ranks: int | None  # ``across N ranks``
    ranks: tuple[int, ...]  # the ranks the line names


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DiagCheck:
    """One result NCCL's diagnostics printed."""

    area: str
    status: str  # ok, found, note
    message: str  # NCCL's text after the tag
    ranks: tuple[int, ...]
    evidence: str  # ``file:line: the line``


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DiagComm:
    """NCCL's diagnostics of one communicator (``comm`` None: lines that name none)."""

    comm: str | None
    num_ranks: int | None
    processes: tuple[str, ...]
    checks: tuple[DiagCheck, ...]
    #: ``NCCL_HOSTID: host0 on rank(s) 0; host1 on rank(s) 1``, one per variable
    env_differs: tuple[str, ...]
    #: ``NCCL diagnostics completed in 0.2 ms across 2 ranks`` and RAS's
    completed: tuple[str, ...]


def read_diag(text: str) -> DiagLine | None:
    """An ``NCCL DIAG`` line, or None when ``text`` is not one.

    >>> read_diag("vm:628 NCCL DIAG [INFO] NCCL environment: NCCL_HOSTID=host1 on rank(s) {1}")
    ... # doctest: +ELLIPSIS
    DiagLine(process='vm:628', ..., status='note', area='NCCL environment', ...ranks=(1,))
    """
    found = _LINE.search(text.rstrip())
    if found is None:
        return None
    body = found.group("body").strip()
    tag = _TAG.match(body)
    if tag:
        message = body[tag.end() :]
        word = tag.group("tag").upper()
        if word == "OK":
            status = "ok"
        elif word == "INFO" and _NOTES.search(message):
            status = "note"
        else:  # INFO, or a tag no release printed yet: a problem, read as one
            status = "found"
    else:
        message = body
        status = "note" if message.startswith("INFO ") else "summary"
    area = ""
    if status != "summary":
        head = message.removeprefix("INFO ").split(":", 1)[0]
        area = head if len(head) <= 40 else "other"
        if area.startswith("transport detect"):
            area = "transport detect"
    comm = _COMM.search(message)
    across = _ACROSS.search(message)
    return DiagLine(
        process=f"{found.group('host').split('.', 1)[0]}:{found.group('pid')}",
        launcher_rank=launcher_rank(text[: found.start()]) if found.start() else None,
        status=status,
        area=area,
        message=message,
        comm=comm.group(1) if comm else None,
        num_ranks=int(across.group(1)) if across else None,
        ranks=_ranks(message),
    )


def _ranks(message: str) -> tuple[int, ...]:
    """``rank(s) {0,2-3}`` -> (0, 2, 3); every rank the message names, in order."""
    ranks: list[int] = []
    for found in _RANKS.finditer(message):
        for part in (found.group(1) or found.group(2)).replace(" ", "").split(","):
            low, _, high = part.partition("-")
            if low.isdigit() and (not high or high.isdigit()):
                ranks.extend(range(int(low), int(high or low) + 1))
    return tuple(dict.fromkeys(ranks))


def summarize_diag(lines: Sequence[LogLine]) -> tuple[DiagComm, ...]:
    """The ``NCCL DIAG`` lines the folder kept (input order) -> one entry per communicator.

    A line that names no communicator (P2P results in 2.31, the summaries, an
    environment mismatch's value lines) belongs to the one its process's other lines
    name, when they name exactly one; else to the entry of ``comm`` None.
    """
    read = [(line, d) for line in lines if (d := read_diag(line.text)) is not None]
    comms_of: dict[str, set[str]] = {}
    for _, d in read:
        if d.comm:
            comms_of.setdefault(d.process, set()).add(d.comm)
    groups: dict[str | None, list[tuple[LogLine, DiagLine]]] = {}
    for line, d in read:
        named = comms_of.get(d.process, set())
        comm = d.comm or (next(iter(named)) if len(named) == 1 else None)
        groups.setdefault(comm, []).append((line, d))
    return tuple(_comm(comm, members) for comm, members in groups.items())


def _comm(comm: str | None, members: list[tuple[LogLine, DiagLine]]) -> DiagComm:
    checks: list[DiagCheck] = []
    completed: list[str] = []
    values: dict[str, list[str]] = {}  # variable -> "value on rank(s) r"
    mismatched: list[str] = []
    for line, d in members:
        if d.status == "summary":
            if _SUMMARY.match(d.message):
                completed.append(d.message)
            continue
        env = _ENV_VALUE.match(d.message)
        if env:
            rank_text = ",".join(str(r) for r in d.ranks) or env.group(3)
            values.setdefault(env.group(1), []).append(f"{env.group(2)} on rank(s) {rank_text}")
        mismatch = _ENV_MISMATCH.match(d.message)
        if mismatch:
            mismatched.append(mismatch.group(1))
        checks.append(
            DiagCheck(
                area=d.area, status=d.status, message=d.message, ranks=d.ranks,
                evidence=line.quote(),
            )
        )  # fmt: skip
    env_differs = tuple(
        f"{name}: {'; '.join(values.get(name, ())) or 'values not shown'}"
        for name in dict.fromkeys(mismatched + list(values))
    )
    sizes = [d.num_ranks for _, d in members if d.num_ranks]
    return DiagComm(
        comm=comm,
        num_ranks=max(sizes) if sizes else None,
        processes=tuple(dict.fromkeys(d.process for _, d in members)),
        checks=tuple(checks),
        env_differs=env_differs,
        completed=tuple(completed),
    )


def diag_findings(comms: Sequence[DiagComm]) -> list[Finding]:
    """A warning per problem NCCL's diagnostics found (never fatal: NCCL went on)."""
    findings = []
    for entry in comms:
        where = f"comm {entry.comm}" if entry.comm else "a communicator the lines do not name"
        env = {text.split(":", 1)[0]: text for text in entry.env_differs}
        for check in entry.checks:
            if check.status != "found":
                continue
            cause, fix = _AREAS.get(check.area, _GENERIC)
            mismatch = _ENV_MISMATCH.match(check.message)
            if mismatch:
                name = mismatch.group(1)
                title = f"NCCL's diagnostics: {name} differs across the ranks of {where}"
                said = env.get(name, name).split(": ", 1)[-1]
                conclusions: tuple[str, ...] = (f"{name} is {said}",)
                evidence = (check.evidence, *_value_lines(entry, name))
                ident = "diag-env-differs"
            else:
                text = _COMM.sub("", check.message).rstrip()
                title = f"NCCL's diagnostics found a problem ({check.area}) in {where}: {text}"
                ranks = ", ".join(str(r) for r in check.ranks)
                conclusions = (f"rank(s) named: {ranks}",) if ranks else ()
                evidence = (check.evidence,)
                ident = "diag-" + (
                    re.sub(r"[^a-z0-9]+", "-", check.area.lower()).strip("-") or "other"
                )
            findings.append(
                Finding(
                    id=ident,
                    severity=Severity.WARNING,
                    title=title,
                    cause=cause,
                    fix=fix,
                    evidence=evidence[:6],
                    conclusions=conclusions,
                    processes=entry.processes,
                )
            )
    return findings


def _value_lines(entry: DiagComm, name: str) -> tuple[str, ...]:
    return tuple(
        c.evidence for c in entry.checks if c.message.startswith(f"NCCL environment: {name}=")
    )
