"""Artefact facts -> findings, and those findings merged into ``hpnet verify``'s report.

Pure. Rules (issue 24 rule 3): a RAS MISMATCH names the lagging ranks (the group with
the lowest launched count, whatever RAS listed); ``RUNNING OK`` beside a watchdog timeout
is a contradiction worth noting, never a pass (NVIDIA/nccl#1730); a watchdog timeout
names the collective, its sequence number and the timeout; a fatal error in any
artefact is never a pass (status FAIL, exit 1); an RCCL log is said to be RCCL and is
not dated by NCCL's formats.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.artefacts.model import (
    ArtefactFacts,
    ArtefactSummary,
    Kind,
    RasComm,
    WrappedError,
)
from hpnet.artefacts.watchdog import ERROR_CAUSE, quotes, torch_findings
from hpnet.ncclog.precedence import order_findings
from hpnet.ncclog.signatures import IN_CONTEXT, SIGNATURES
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.ncclog.report import VerifyReport

__all__ = ["artefact_findings", "merge_artefacts", "summaries"]

_KIND_WORDS = {
    Kind.RAS_TEXT: "an ncclras report",
    Kind.RAS_JSON: "an ncclras JSON report",
    Kind.TORCH: "PyTorch's ProcessGroupNCCL text",
    Kind.XLA: "an XLA/JAX error",
    Kind.WRAPPER: "a framework's NCCL error",
    Kind.RCCL: "an RCCL log",
    Kind.NCCL_LOG: "NCCL debug lines",
}


#: the log's findings that name a failure (a signature with its own cause and fix, not a
#: generic consequence): kept beside an artefact's finding that quotes their lines
_NAMING = frozenset(s.id for s in (*SIGNATURES, *IN_CONTEXT) if not s.consequence)


def _lagging(comm: RasComm) -> list[str]:
    """Sentences naming, per op, the ranks behind: the lowest launched count."""
    said = []
    for op in dict.fromkeys(g.op for g in comm.op_groups):
        groups = [g for g in comm.op_groups if g.op == op]
        if len(groups) < 2:
            continue
        low = min(g.launched for g in groups)
        high = max(g.launched for g in groups)
        behind = [g for g in groups if g.launched == low]
        ahead = [g for g in groups if g.launched != low]
        num_behind = sum(g.num_ranks for g in behind)
        named = sorted(r for g in behind for r in g.ranks)
        who = f"ranks {', '.join(map(str, named))}" if named else f"{num_behind} ranks"
        sentence = (
            f"{who} lag at {op} operation {low}"
            + (f" ({num_behind} ranks)" if named and len(named) != num_behind else "")
            + f"; {sum(g.num_ranks for g in ahead)} rank(s) launched up to {high}"
        )
        listed_ahead = sorted(r for g in ahead for r in g.ranks)
        if listed_ahead and not named:
            sentence += (
                f" (RAS lists ranks {', '.join(map(str, listed_ahead))}: they are ahead, "
                "not stuck; RAS names outliers only)"
            )
        said.append(sentence)
    return said


def artefact_findings(facts: Sequence[ArtefactFacts]) -> list[Finding]:
    """The findings every artefact supports, in input order."""
    findings: list[Finding] = []
    timeouts = [e for f in facts for e in f.torch if e.what == "timeout"]
    # one job's ranks in several inputs (a directory of per-rank logs): their torch lines
    # are judged together, where the first input with any stands, as hpnet hang does
    every_torch = tuple(e for f in facts for e in f.torch)
    first_torch = next((f for f in facts if f.torch), None)
    for item in facts:
        for report in item.ras:
            version = f" (NCCL {report.nccl_version})" if report.nccl_version else ""
            for comm in report.comms:
                lag = _lagging(comm)
                if lag:
                    findings.append(
                        Finding(
                            id="ras-mismatch",
                            severity=Severity.WARNING,
                            title=f"RAS{version}: communicator {comm.hash}: {lag[0]}",
                            cause="the ranks behind never launched the collective the others "
                            "did: they are stuck earlier (compute, data loading, another "
                            "communicator) or took another code path",
                            fix="look at what the lagging ranks do (py-spy dump, their last "
                            "log lines, a Flight Recorder dump); the network is not the "
                            "first suspect while ranks differ in launched operations",
                            evidence=quotes(report.evidence),
                            conclusions=tuple(lag),
                        )
                    )
                if "ERROR" in (comm.errors or "") or comm.dead_ranks:
                    findings.append(
                        Finding(
                            id="ras-error",
                            severity=Severity.ERROR,
                            title=f"RAS{version}: communicator {comm.hash} reports errors"
                            + (f": {comm.error_lines[0]}" if comm.error_lines else ""),
                            cause="ranks of the communicator returned an NCCL error",
                            fix="read the NCCL log of the ranks named",
                            evidence=quotes(report.evidence),
                            conclusions=comm.error_lines,
                            fatal=True,
                        )
                    )
            if report.job_errors:
                findings.append(
                    Finding(
                        id="ras-dead-or-missing",
                        severity=Severity.ERROR if report.dead_processes else Severity.WARNING,
                        title=f"RAS{version}: {report.job_errors[0]}",
                        cause="a process of the job died or cannot be reached over RAS's "
                        "network (a node down, a process killed)",
                        fix="find the processes named on their nodes (dmesg, the scheduler's log)",
                        evidence=quotes(report.evidence),
                        fatal=bool(report.dead_processes),
                    )
                )
            if report.all_ok and timeouts:
                first = timeouts[0]
                findings.append(
                    Finding(
                        id="ras-ok-beside-timeout",
                        severity=Severity.WARNING,
                        title=f"RAS{version} says every communicator is RUNNING with no error, "
                        f"yet PyTorch's watchdog timed out {first.op} SeqNum {first.seq}",
                        cause="RAS counts launched operations, not completed ones: a "
                        "collective every rank launched and that never completes looks OK "
                        "to it (NVIDIA/nccl#1730); this points to a collective stuck in "
                        "flight (network, a peer's GPU), not to ranks that never called it",
                        fix="take the NCCL log of the ranks (NCCL_DEBUG=INFO) and a Flight "
                        "Recorder dump (TORCH_NCCL_DUMP_ON_TIMEOUT=1) of the next hang",
                        evidence=quotes([*report.evidence[:2], *first.quotes]),
                    )
                )
            elif report.all_ok:
                findings.append(
                    Finding(
                        id="ras-running-ok",
                        severity=Severity.INFO,
                        title=f"RAS{version}: every communicator RUNNING with no error",
                        evidence=quotes(report.evidence),
                    )
                )
        if item.torch and item is first_torch:  # every input's ranks, compared at once
            findings += torch_findings(dataclasses.replace(item, torch=every_torch))
        # the same failure on several threads or ranks (XLA prints each replica's): one
        # finding, with how often
        alike: dict[tuple[object, ...], list[WrappedError]] = {}
        for wrapped in item.wrapped:
            key = (wrapped.via, wrapped.call, wrapped.error, wrapped.last_error)
            alike.setdefault(key, []).append(wrapped)
        for same in alike.values():
            wrapped = same[0]
            via = {
                "xla": "XLA",
                "vllm": "vLLM",
                "sglang": "SGLang",
                "cupy": "CuPy",
                "tensorrt-llm": "TensorRT-LLM",
            }.get(wrapped.via, "a framework")
            call = f"{wrapped.call} failed" if wrapped.call else "an NCCL call failed"
            last = f"; NCCL's last warning: '{wrapped.last_error}'" if wrapped.last_error else ""
            findings.append(
                Finding(
                    id="framework-nccl-error",
                    severity=Severity.ERROR,
                    title=f"{via}: {call}: {wrapped.error}{last}",
                    cause=ERROR_CAUSE.get(wrapped.error, "NCCL returned an error"),
                    fix="rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET) and pass "
                    "that log too: its first WARN names what broke",
                    evidence=quotes([q for w in same[:3] for q in w.quotes]),
                    count=len(same),
                    fatal=True,
                )
            )
        if item.rccl is not None:
            info = item.rccl
            extra = ", ".join(
                x
                for x in (
                    f"HIP {info.hip}" if info.hip else "",
                    f"ROCm {info.rocm}" if info.rocm else "",
                )
                if x
            )
            findings.append(
                Finding(
                    id="rccl-log",
                    severity=Severity.INFO,
                    title=f"an RCCL (AMD ROCm) log: RCCL {info.version or 'version not stated'}"
                    + (f" ({extra})" if extra else ""),
                    cause="RCCL prints NCCL's prefixes but has its own releases: NCCL's "
                    "release formats do not date it, and NCCL's version facts do not apply",
                    evidence=quotes(info.quotes),
                )
            )
    return findings


def summaries(facts: Sequence[ArtefactFacts]) -> tuple[ArtefactSummary, ...]:
    """One entry per input that holds something other than NCCL debug lines."""
    out = []
    for item in facts:
        if not item.kinds or item.kinds == (Kind.NCCL_LOG,):
            continue
        ras_versions = tuple(r.nccl_version for r in item.ras if r.nccl_version)
        out.append(
            ArtefactSummary(
                source=item.source,
                kinds=tuple(k.value for k in item.kinds),
                rccl_version=item.rccl.version if item.rccl else None,
                ras_nccl_versions=ras_versions,
                collectives=tuple(
                    f"{e.op} SeqNum {e.seq} timeout {e.timeout_ms} ms"
                    + (f" (rank {e.rank})" if e.rank is not None else "")
                    for e in item.torch
                    if e.what == "timeout"
                ),
                errors=tuple(
                    dict.fromkeys(
                        [f"{w.call or 'NCCL'}: {w.error}" for w in item.wrapped]
                        + [f"NCCL: {e.error}" for e in item.torch if e.what == "nccl-error"]
                    )
                ),
                lagging=tuple(s for r in item.ras for c in r.comms for s in _lagging(c)),
            )
        )
    return tuple(out)


#: log findings that follow what the artefacts name: PyTorch's teardown ("Some NCCL
#: operations have failed or timed out"), a launcher's report that a process failed (what
#: failed in it is the cause), and NCCL's socket calls stopped by the communicator's abort
#: (what made it abort is the cause)
_AFTER_ARTEFACTS = frozenset({"watchdog-teardown", "launcher-reported-failure", "abort-trail"})


def _after(finding: Finding, named: set[Severity]) -> bool:
    return finding.id in _AFTER_ARTEFACTS and finding.severity in named


def merge_artefacts(report: VerifyReport, facts: Sequence[ArtefactFacts]) -> VerifyReport:
    """``report`` with the artefacts' findings, status, verdict and summaries.

    A finding of the log pipeline whose every quoted line an artefact finding quotes
    too is left out (the same line, read better)."""
    mine = artefact_findings(facts)
    artefacts = summaries(facts)
    rccl = [f.rccl for f in facts if f.rccl is not None]
    if not mine and not artefacts:
        return report
    quoted = {e for f in mine for e in f.evidence}
    # a log finding whose lines an artefact's finding quotes says nothing more, unless it
    # names the failure (:data:`_NAMING`: "Last error: Cuda failure 802" is the fabric,
    # NVIDIA/nccl#1769)
    kept = [
        f
        for f in report.findings
        if not (f.evidence and set(f.evidence) <= quoted and f.id not in _NAMING)
    ]
    if len(kept) < len(report.findings):
        # what a finding left out explained is ordered again without it (RCCL's advisory
        # WARN at init.cc, read by the log pipeline as a failed init, had placed the
        # failure after it behind a later broken connection)
        kept = order_findings(kept, report.sources)
    # the log's own order (causes first) is kept; an artefact's finding goes after the
    # log's findings of its severity, fatal ones first; but PyTorch's teardown line read
    # in the log follows what the artefacts name (the timeout or error it tore down for)
    named = {m.severity for m in mine if not m.consequence}
    findings = [
        f
        for severity in ("error", "warning", "info")
        for f in (
            *(k for k in kept if k.severity == severity and not _after(k, named)),
            *sorted(
                (m for m in mine if m.severity == severity),
                key=lambda m: (not m.fatal, m.consequence),
            ),
            *(k for k in kept if k.severity == severity and _after(k, named)),
        )
    ]
    ranks = report.ranks
    versions = report.nccl_versions
    if rccl:  # RCCL's releases are not NCCL's: no NCCL version range, no NCCL version
        ranks = tuple(dataclasses.replace(r, version_range=None) for r in ranks)
        stated = {i.version for i in rccl if i.version}
        versions = tuple(v for v in versions if v not in stated)
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity == "warning"]
    sentence = report.verdict
    if report.status == "FAIL" and " — " in sentence:
        sentence = sentence.split(" — ", 1)[1]
    status, verdict = report.status, report.verdict
    kinds = [k for f in facts for k in f.kinds if k is not Kind.NCCL_LOG]
    words = " and ".join(dict.fromkeys(_KIND_WORDS[k] for k in kinds)) or "the input"
    if errors:
        first = errors[0]
        said = (
            "NCCL failed: "
            if first.fatal
            and first.id
            not in (
                "watchdog-timeout",
                "watchdog-stuck",
                "process-crashed",
                "launcher-reported-failure",
            )
            else ""
        )
        tail = (
            f" — {sentence}"
            if report.ranks
            else f" (read from {words}; no NCCL process lines to prove the transport)"
        )
        status, verdict = "FAIL", f"{said}{first.title}{tail}"
    elif warnings and report.status in ("PASS", "UNKNOWN"):
        tail = f" — {sentence}" if report.ranks else f" (read from {words})"
        status, verdict = "WARN", f"{warnings[0].title}{tail}"
    elif not report.ranks and report.status == "UNKNOWN" and mine:
        verdict = f"{mine[0].title} (read from {words}; no NCCL process lines)"
    return dataclasses.replace(
        report,
        status=status,
        verdict=verdict,
        findings=tuple(findings),
        ranks=ranks,
        nccl_versions=versions,
        fatal=any(f.fatal for f in findings),
        artefacts=artefacts,
    )
