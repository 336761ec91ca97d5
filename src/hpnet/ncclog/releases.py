"""Findings of ``hpnet verify`` about NCCL releases: processes that ran different ones,
and releases with a known serious bug.

:func:`mixed_versions` compares the versions the log's processes printed, and the
release ranges their lines' formats fit (:mod:`hpnet.ncclog.versions`) where a process
printed none; :func:`known_bad_versions` checks every version the log shows against the
cited table of :mod:`hpnet.nccl.known_bad`. Both are shared findings of
:mod:`hpnet.ncclog.findings`.
"""

from __future__ import annotations

from collections.abc import Sequence

from hpnet.nccl.known_bad import affecting, conditions_met
from hpnet.ncclog.findings import MAX_EVIDENCE, quotes
from hpnet.ncclog.model import LogLine, NcclLog
from hpnet.ncclog.versions import contains
from hpnet.result import Finding, Severity

__all__ = ["known_bad_versions", "mixed_versions", "parse_range"]


def mixed_versions(log: NcclLog, versions: Sequence[str]) -> Finding | None:
    """Processes that ran more than one NCCL release: by their version lines, or by
    the forms of their lines (:mod:`hpnet.ncclog.versions`)."""
    conclusions: list[str] = []
    witnesses: list[LogLine | None] = []
    if len(versions) > 1:
        by_version: dict[str, list[str]] = {}
        for p in log.processes:
            if p.nccl_version:
                by_version.setdefault(p.nccl_version, []).append(p.host or p.key)
                witnesses.append(p.line("version"))
        for v in log.bare_versions:
            by_version.setdefault(v, []).append("rank 0's version line")
        conclusions = [
            f"NCCL {v} on {', '.join(sorted(set(h))[:6])}" for v, h in by_version.items()
        ]
        # one witness per version
        seen: set[str] = set()
        kept = []
        for p in log.processes:
            line = p.line("version")
            if p.nccl_version and p.nccl_version not in seen and line is not None:
                seen.add(p.nccl_version)
                kept.append(line)
        witnesses = list(kept)
    else:
        ranged = [
            (p, parse_range(p.version_range))
            for p in log.processes
            if p.version_range and not p.nccl_version and not p.version_conflict
        ]
        known = [tuple(int(x) for x in v.split(".")) for v in versions if _dotted(v)]
        conclusions = [
            f"the lines of process {process.key} are written by NCCL {process.version_range}, "
            f"not {', '.join(versions)}"
            for process, bounds in ranged
            if known and not any(contains(bounds, v) for v in known)
        ]
        witnesses = [line for process, _ in ranged for key, line in process.lines_of("form:")]
        if not conclusions and len(ranged) > 1:
            # the ranges have no release in common exactly when the highest lower bound
            # exceeds the lowest upper bound: those two processes are the witnesses
            lows = [(b[0], p) for p, b in ranged if b[0] is not None]
            highs = [(b[1], p) for p, b in ranged if b[1] is not None]
            if lows and highs:
                low, low_process = max(lows, key=lambda item: item[0])
                high, high_process = min(highs, key=lambda item: item[0])
                if low > high:
                    conclusions.append(
                        f"by the form of their lines, process {high_process.key} runs NCCL "
                        f"{high_process.version_range} and process {low_process.key} NCCL "
                        f"{low_process.version_range}"
                    )
    if not conclusions:
        return None
    return Finding(
        id="mixed-nccl-versions",
        severity=Severity.ERROR,
        title="ranks run different NCCL versions",
        cause="the hosts' images or library paths differ; NCCL's protocols are only "
        "guaranteed between identical releases (mismatches hang or fail at init)",
        fix="use one image / one NCCL on every node (check LD_LIBRARY_PATH and the "
        "nvidia-nccl wheel torch loads: `hpnet detect --torch`)",
        evidence=quotes(witnesses),
        conclusions=tuple(conclusions[:MAX_EVIDENCE]),
        count=len(conclusions),
    )


def known_bad_versions(log: NcclLog, versions: Sequence[str]) -> list[Finding]:
    """A finding per known bug (:mod:`hpnet.nccl.known_bad`) of a release the log shows,
    when the log also shows its conditions (more than one host, the IB network); a
    condition the log cannot show (no network line) counts as possible. Already worked
    around (``NCCL_PXN_DISABLE=1``, ``NCCL_RAS_ENABLE=0`` echoed by NCCL): a note.

    A log of NCCL 2.27.7 (RAS on by default) gets ``nccl-known-bug-ras-peers-update-
    segfault``; one of 2.30.4 over IB on two hosts ``nccl-known-bug-pxn-ib-multinode-hang``,
    a note when NCCL echoed ``NCCL_PXN_DISABLE set by environment to 1``.
    """
    hosts = {p.host for p in log.processes if p.host}
    networks = {n for p in log.processes for n in p.networks}
    shows = {"ras-enabled"}
    if len(hosts) > 1:
        shows.add("multi-node")
    if "IB" in networks or any(
        c.transport.kind == "NET" and c.transport.name == "IB"
        for p in log.processes
        for c in p.connections
    ):
        shows.add("net-ib")
    elif not networks:
        shows.add("unknown:net-ib")
    env: dict[str, str] = {}
    for p in log.processes:
        env.update(dict(p.env))
    found = []
    for version in versions:
        for bug in affecting(version):
            applies, worked_around = conditions_met(bug, env=env, shows=frozenset(shows))
            if not applies:
                continue
            witnesses = [p.line("version") for p in log.processes if p.nccl_version == version] + [
                p.line(f"env:{name}") for p in log.processes for name in bug.workaround
            ]
            setting = " ".join(f"{k}={v}" for k, v in bug.workaround.items())
            found.append(
                Finding(
                    id=f"nccl-known-bug-{bug.id}",
                    # a bug only an outside action triggers (a RAS query) is a note
                    severity=Severity.INFO if worked_around or bug.trigger else Severity.WARNING,
                    title=f"NCCL {version} has a known bug: {bug.what}"
                    + (f" (worked around here: {setting})" if worked_around else ""),
                    cause=f"it matters with {bug.when}"
                    + (f", when {bug.trigger}" if bug.trigger else "")
                    + f"; sources: {'; '.join(bug.citations)}",
                    fix="" if worked_around else f"{bug.fix}, or set {setting}",
                    evidence=quotes(witnesses),
                    conclusions=tuple(
                        f"NCCL {version} is in the affected releases "
                        f"{'.'.join(map(str, bug.first))}-{'.'.join(map(str, bug.last))}"
                        for _ in (0,)
                    ),
                )
            )
    return found


def _dotted(text: str) -> bool:
    return all(part.isdigit() for part in text.split("."))


def parse_range(text: str | None) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """The inverse of :func:`hpnet.ncclog.versions.format_range`."""
    if not text or text == "any":
        return (None, None)

    def version(part: str) -> tuple[int, ...]:
        return tuple(int(x) for x in part.strip().split("."))

    if text.startswith(">= "):
        return (version(text[3:]), None)
    if text.startswith("<= "):
        return (None, version(text[3:]))
    lo, _, hi = text.partition("-")
    return (version(lo), version(hi or lo))
