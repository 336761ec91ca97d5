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

from hpnet.artefacts.framework import called_from
from hpnet.artefacts.model import (
    ArtefactFacts,
    ArtefactSummary,
    Kind,
    Quote,
    RasComm,
    TorchEvent,
)
from hpnet.artefacts.parted import apart, behind_text, parted, rank_works, ranks_named
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.ncclog.report import VerifyReport

__all__ = ["artefact_findings", "merge_artefacts", "summaries"]

MAX_QUOTES = 6
_KIND_WORDS = {
    Kind.RAS_TEXT: "an ncclras report",
    Kind.RAS_JSON: "an ncclras JSON report",
    Kind.TORCH: "PyTorch's ProcessGroupNCCL text",
    Kind.XLA: "an XLA/JAX error",
    Kind.WRAPPER: "a framework's NCCL error",
    Kind.RCCL: "an RCCL log",
    Kind.NCCL_LOG: "NCCL debug lines",
}
#: what NCCL's error string means, and where to look (NCCL's ncclResult_t)
_ERROR_CAUSE = {
    "unhandled system error": "a system call failed inside NCCL (a socket, an RDMA verb, "
    "shared memory): usually the network or the bootstrap",
    "unhandled cuda error": "a CUDA call failed inside NCCL (driver, GPU state, P2P/IPC setup)",
    "internal error": "NCCL hit an internal check (often topology detection or a plugin)",
    "invalid argument": "an argument or config NCCL was given is not valid for this "
    "library (often a library older or built otherwise than the caller expects)",
    "invalid usage": "the program used NCCL wrongly (two ranks on one GPU, a rank out of "
    "range, mismatched calls)",
    "remote process exited or there was a network error": "a peer process died or the "
    "network to it failed: the cause is on the peer or the fabric",
}


def _quotes(quotes: Sequence[Quote]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(q) for q in quotes))[:MAX_QUOTES]


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
                            evidence=_quotes(report.evidence),
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
                            evidence=_quotes(report.evidence),
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
                        evidence=_quotes(report.evidence),
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
                        evidence=_quotes([*report.evidence[:2], *first.quotes]),
                    )
                )
            elif report.all_ok:
                findings.append(
                    Finding(
                        id="ras-running-ok",
                        severity=Severity.INFO,
                        title=f"RAS{version}: every communicator RUNNING with no error",
                        evidence=_quotes(report.evidence),
                    )
                )
        findings += _torch_findings(item)
        for wrapped in item.wrapped:
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
                    cause=_ERROR_CAUSE.get(wrapped.error, "NCCL returned an error"),
                    fix="rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET) and pass "
                    "that log too: its first WARN names what broke",
                    evidence=_quotes(wrapped.quotes),
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
                    evidence=_quotes(info.quotes),
                )
            )
    return findings


def _torch_findings(item: ArtefactFacts) -> list[Finding]:
    findings = []
    events = item.torch
    timeouts = [e for e in events if e.what == "timeout"]
    status = [e for e in events if e.what == "status"]
    if timeouts:
        first = timeouts[0]
        ranks = sorted({e.rank for e in timeouts if e.rank is not None})
        numel = f", {_elements(first.numel_in)}" if first.numel_in is not None else ""
        stated = (f"rank {e.rank}: last enqueued work {e.last_enqueued}, last completed "
                  f"{e.last_completed} (stuck at {e.seq})" for e in status)  # fmt: skip
        conclusions = list(dict.fromkeys(stated))  # a rank's two status lines say it once
        apart, mismatch = _ranks_apart(timeouts, status)
        conclusions += apart
        conclusions += [
            said
            for e in events
            if e.what == "stack" and (said := called_from(e.global_rank, e.frames))
        ]
        late = [e for e in timeouts if e.ran_ms and e.timeout_ms and e.ran_ms > 2 * e.timeout_ms]
        if late:
            worst = max(late, key=lambda e: e.ran_ms or 0)
            conclusions.append(
                f"ran for {worst.ran_ms} ms against a {worst.timeout_ms} ms timeout: the "
                f"watchdog noticed {((worst.ran_ms or 0) - (worst.timeout_ms or 0)) / 3.6e6:.1f} h "
                "late (its thread was itself blocked)"
            )
        same = len({(e.seq, e.op) for e in timeouts}) == 1
        findings += mismatch
        findings.append(
            Finding(
                id="watchdog-timeout",
                severity=Severity.ERROR,
                title=(
                    f"PyTorch's watchdog: {first.op} {_seq(first.seq)}{numel} did not "
                    f"complete within {first.timeout_ms} ms"
                    + (f" on rank(s) {', '.join(map(str, ranks))}" if ranks else "")
                )
                if same
                else f"PyTorch's watchdog: collectives did not complete within "
                f"{first.timeout_ms} ms: " + _by_rank(timeouts),
                cause="a rank stopped participating (crashed, hangs, or waits on another "
                "collective) or the network stalled; the timeout is the symptom, the first "
                "error on another rank is the cause",
                fix="find the first failing rank (its log, a Flight Recorder dump with "
                "TORCH_NCCL_DUMP_ON_TIMEOUT=1); rerun with NCCL_DEBUG=INFO",
                evidence=_quotes(
                    [q for e in timeouts for q in e.quotes] + [q for e in status for q in e.quotes]
                ),
                conclusions=tuple(conclusions),
                count=len(timeouts),
                fatal=True,
                consequence=bool(mismatch),
            )
        )
    stuck = [e for e in events if e.what == "stuck"]
    if stuck:
        first = stuck[0]
        findings.append(
            Finding(
                id="watchdog-stuck",
                severity=Severity.ERROR,
                title=f"PyTorch's heartbeat monitor: the ProcessGroupNCCL watchdog got stuck "
                f"for {first.stuck_seconds} s"
                + (f" on rank {first.rank}" if first.rank is not None else "")
                + "; the process is terminated",
                cause="the watchdog thread was blocked inside a CUDA or NCCL call (an abort "
                "or cudaEventDestroy that hangs, often after a collective timed out)",
                fix="look for the collective timeout or NCCL error before it; "
                "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC raises the limit",
                evidence=_quotes([q for e in stuck for q in e.quotes]),
                count=len(stuck),
                fatal=True,
                consequence=bool(timeouts),
            )
        )
    for event in (e for e in events if e.what == "nccl-error"):
        version = f" (NCCL {event.nccl_version})" if event.nccl_version else ""
        last = f"; NCCL's last error: {event.last_error}" if event.last_error else ""
        findings.append(
            Finding(
                id="framework-nccl-error",
                severity=Severity.ERROR,
                title=(
                    f"PyTorch: {event.op} SeqNum {event.seq} raised NCCL's "
                    f"'{event.error}'{version}{last}"
                    if event.op
                    else f"PyTorch: NCCL returned '{event.error}'{version}{last}"
                )
                + ("" if event.last_error or not event.op else "; NCCL gave no last error"),
                cause=_ERROR_CAUSE.get(event.error or "", "NCCL returned an error"),
                fix="the line after 'Last error:' is NCCL's last WARN: rerun with "
                "NCCL_DEBUG=INFO to see the lines before it",
                evidence=_quotes(event.quotes),
                fatal=True,
            )
        )
    return findings


def _by_rank(timeouts: Sequence[TorchEvent], limit: int = 4) -> str:
    """``rank 7 BROADCAST SeqNum 80078; rank 3 ALLREDUCE SeqNum 80078`` (the first few)."""
    seen = dict.fromkeys(
        f"rank {e.rank if e.rank is not None else '?'} {e.op} {_seq(e.seq)}" for e in timeouts
    )
    shown = list(seen)[:limit]
    more = f"; {len(seen) - limit} more" if len(seen) > limit else ""
    return "; ".join(shown) + more


def _ranks_apart(
    timeouts: Sequence[TorchEvent], status: Sequence[TorchEvent]
) -> tuple[list[str], list[Finding]]:
    """What the ranks' timed-out works say together: a sequence number the ranks reached
    with different collectives (a mismatch: the programs diverged), or ranks at different
    sequence numbers of one group (those ahead completed what the others wait in). A
    timeout line names no group; the rank's status line after it does, and names the
    work of a rank whose timeout line is not there (its call unknown). Ranks without a
    rank prefix, or with several timed-out works each (several process groups), are not
    compared (:mod:`hpnet.artefacts.parted`, the rule ``hpnet hang`` applies too)."""
    by_rank: dict[int, list[TorchEvent]] = {}
    for event in timeouts:
        if event.rank is not None and event.seq is not None:
            by_rank.setdefault(event.rank, []).append(event)
    stated = {e.rank: e for e in status if e.rank is not None}
    single = rank_works(
        {
            rank: [(e.pg, e.seq or 0, (e.op or "?", e.numel_in)) for e in events]
            for rank, events in by_rank.items()
        },
        {rank: (e.pg, e.seq) for rank, e in stated.items()},
    )
    if single is None:
        return [], []
    conclusions: list[str] = []
    findings: list[Finding] = []
    for seq, calls in parted(single):
        said = ", ".join(
            f"rank {r} {op}" + (f" ({_elements(numel)})" if numel is not None else "")
            for r, (op, numel) in calls.items()
        )
        findings.append(
            Finding(
                id="collective-mismatch",
                severity=Severity.ERROR,
                title=f"the ranks called different collectives at SeqNum {seq}: {said}",
                cause="every rank of a process group must call the same collectives in the "
                "same order with the same sizes; here they diverged (a collective called on "
                "some ranks only, a data-dependent branch, an uneven last batch), so each "
                "waits for a partner that never comes: a program bug, not the network",
                fix="find where the ranks' code paths part before this collective (set "
                "TORCH_DISTRIBUTED_DEBUG=DETAIL to have torch check each collective's op and "
                "sizes across ranks; a Flight Recorder dump shows each rank's last calls)",
                evidence=_quotes(
                    [q for r, es in by_rank.items() if r in calls for q in es[0].quotes]
                ),
                fatal=True,
            )
        )
    found = apart(single, {r: e.last_completed for r, e in stated.items()})
    if found:
        enqueued = {r: e.last_enqueued for r, e in stated.items()}
        where = (
            ""
            if found.named
            else f"where the SeqNum {found.seq} of {ranks_named(found.ahead)} is of the same "
            "process group (not every line names its group), "
        )
        conclusions.append(
            f"the ranks stand at different sequence numbers: {where}"
            + behind_text(found, enqueued, never=True)
        )
    return conclusions, findings


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
    kept = [f for f in report.findings if not (f.evidence and set(f.evidence) <= quoted)]
    # the log's own order (causes first) is kept; an artefact's finding goes after the
    # log's findings of its severity, fatal ones first
    findings = [
        f
        for severity in ("error", "warning", "info")
        for f in (
            *(k for k in kept if k.severity == severity),
            *sorted(
                (m for m in mine if m.severity == severity),
                key=lambda m: (not m.fatal, m.consequence),
            ),
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
            if first.fatal and first.id not in ("watchdog-timeout", "watchdog-stuck")
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


def _elements(numel: int) -> str:
    return f"{numel} element{'' if numel == 1 else 's'}"


def _seq(seq: int | None) -> str:
    return f"SeqNum {seq}" if seq is not None else "(SeqNum not shown)"
