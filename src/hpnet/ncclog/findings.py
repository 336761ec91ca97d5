"""Findings of ``hpnet verify``, part one: what the log's failure lines say.

Every WARN line, every framework line that reports an NCCL failure and every
return-code trail (``file.cc:123 -> 2``) is matched against the known signatures
(:mod:`hpnet.ncclog.signatures`), which add a cause and a fix. What no signature
knows is still judged by one rule: an NCCL WARN on a failing path is an error. A
process is on a failing path after a WARN or a trail unless it demonstrably went on
(a communicator completed, a connection was set up after it); a framework's error
line (``NCCL error``, a watchdog timeout) is an error wherever it stands.

Evidence is always a line of the input, quoted as ``file:line: text``; what hpnet
concludes from several lines is worded as a conclusion, in ``conclusions``.

Pure functions; :mod:`hpnet.ncclog.report` calls them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from hpnet.ncclog.causes import SUBSYSTEMS, Subsystem, location_of, subsystem_of, warn_files
from hpnet.ncclog.context import crash_places, in_context, one_host, unneeded
from hpnet.ncclog.details import line_details
from hpnet.ncclog.formats import load_table
from hpnet.ncclog.gids import gid_details
from hpnet.ncclog.model import RESULT_NAMES, LogLine, NcclLog, ProcessLog
from hpnet.ncclog.precedence import FAILED_FIRST
from hpnet.ncclog.recovery import failed_first
from hpnet.ncclog.signatures import SIGNATURES, Signature
from hpnet.ncclog.stages import ABORT_CAUSE, ABORT_FIX, ABORT_TRAIL, abort_trail, trail_stage
from hpnet.result import Finding, Severity

__all__ = [
    "comm_states",
    "match_signatures",
    "quotes",
    "trail_findings",
]

MAX_EVIDENCE = 6
#: INFO lines about calls NCCL retried or whose failure it ignores: no failure by
#: themselves (when the retries run out NCCL WARNs, and that line is matched):
#: "Call to ibv_modify_qp failed with %d %s, %s, retrying %d/%d after %u msec of sleep"
#: (ibvwrap.cc:281 @2.24.3), "%s: connect to %s returned %s, retrying (%d/%ld) after sleep
#: for %u msec" (socket.cc:587 @2.28.9), "Call to accept returned %s, retrying"
#: (socket.cc:456), and CUDACHECKIGNORE's "%s:%d Cuda failure '%s'" (checks.h:34 @2.28.9)
_TRANSIENT = re.compile(r"^INFO .*\bretrying\b|^INFO (?:\S+:\d+ )?Cuda failure ")
#: the last retry: "retrying (34/34)", "retrying 34/34" (socket.cc, ibvwrap.cc)
_EXHAUSTED = re.compile(r"retrying \(?(\d+)/\1\)?")


def quotes(lines: Iterable[LogLine | None], limit: int = MAX_EVIDENCE) -> tuple[str, ...]:
    """Up to ``limit`` distinct quotes of the lines given, in the order given."""
    found: dict[str, None] = {}
    for line in lines:
        if line is None or len(found) >= limit:
            continue
        found.setdefault(line.quote(), None)
    return tuple(found)


# ---------------------------------------------------------------- signatures


def _signatures_of(text: str) -> list[Signature]:
    """The signatures a line matches, up to the first exclusive one."""
    found = []
    for signature in SIGNATURES:
        if signature.pattern.search(text):
            found.append(signature)
            if signature.exclusive:
                break
    return found


_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclasses.dataclass(slots=True)
class _Matched:
    """What the lines one signature matched add up to."""

    signature: Signature
    lines: list[LogLine] = dataclasses.field(default_factory=list)
    processes: set[str] = dataclasses.field(default_factory=set)
    count: int = 0
    severity: str = "info"
    fatal: bool = False


def _failing(process: ProcessLog | None, log: NcclLog) -> bool:
    """Is a line of ``process`` on a failing path: its process passed an error up
    (``file.cc:N -> code``) and did not go on, or a framework reports a failure."""
    if process is not None and process.trail_codes and not process.went_on:
        return True
    return bool(log.signals)


_OWN = frozenset({"IB", "Socket"})  # NCCL's own network modules ("Using network IB")


def _judged(
    signature: Signature, process: ProcessLog | None, failure: bool, log: NcclLog, message: str
) -> tuple[str, bool]:
    """(severity, fatal) of a line ``signature`` matched: an error signature on an INFO
    line is a warning (NCCL went on); on a failure line it is fatal, unless NCCL falls
    back after it and the process shows no failure."""
    severity = signature.severity
    gave_up = signature.escalate is not None and not signature.escalate[1]
    if failure and signature.escalate is not None and signature.escalate[0].search(message):
        if gave_up and one_host(process):
            return "warning", False  # NCCL went on without it, and needed no network
        return "error", signature.escalate[1]
    if failure and gave_up and process and process.networks and set(process.networks) <= _OWN:
        # a plugin that gave up, its process then on NCCL's own network: no failure; an
        # error only where that is sockets between hosts
        return ("warning" if one_host(process) or "IB" in process.networks else "error"), False
    if severity != "error":
        return severity, False
    if not failure or (process is not None and process.warn_fatal.get(message) == "nonfatal"):
        return "warning", False  # an INFO line, or a WARN NCCL's source goes on after
    if not signature.survivable:
        return severity, True
    if process is None:
        # pasted alone it proves no failure, but the framework's "Last error:" is the
        # error NCCL returned to it (ProcessGroupNCCL prints ncclGetLastError's text)
        return severity, message.startswith("Last error:")
    # NCCL falls back after it: a failure where the process shows one
    fatal = _failing(process, log)
    return ("error" if fatal else "warning"), fatal


def _unknown_failed(process: ProcessLog | None, line: LogLine, log: NcclLog) -> bool:
    """Is a failure line no signature knows a failure? NCCL's source decides first: a
    WARN whose call returns an error is a failure, one the code goes on after is not;
    else the log's failing path decides."""
    bare = process is None and line.message.startswith("WARN ")
    if process is not None:
        source = process.warn_fatal.get(line.message)
    elif bare:  # pasted alone: its format decides, else whether anything failed
        source = load_table().warn(None, line.message[5:])[0]
    else:
        source = None
    if process is not None:
        on_failing_path = _failing(process, log)
    elif bare:
        on_failing_path = bool(log.signals) or any(_failing(p, log) for p in log.processes)
    else:
        on_failing_path = True  # a framework's failure line
    return source == "fatal" or (source != "nonfatal" and on_failing_path)


def match_signatures(log: NcclLog) -> list[Finding]:
    """Every kept WARN / failure / framework line against :data:`SIGNATURES`.

    On a WARN or framework line an error signature is a failure (``fatal``), except a
    survivable one (NCCL falls back) whose process went on; on an INFO line a signature
    is at most a warning. A WARN no signature knows is a failure when it is on a failing
    path (:func:`_failing`), a warning otherwise; a framework's failure line no signature
    knows is a failure.
    """
    # (process or None, the line, is it a failure line: WARN or framework)
    lines: list[tuple[ProcessLog | None, LogLine, bool]] = [
        (p, w, w.message.startswith("WARN")) for p in log.processes for w in p.warnings
    ]
    lines += [(None, s, True) for s in log.signals]
    lines += [(None, w, True) for w in log.bare_warnings]
    for said in log.processes:
        lines += [(said, decision.line, False) for decision in said.gdr]
        lines += [(said, note, False) for note in said.plugin_notes]
    found: dict[str, _Matched] = {}
    broke: dict[str, list[tuple[ProcessLog | None, LogLine]]] = {}
    failed: list[tuple[ProcessLog | None, LogLine]] = []
    survived: list[tuple[ProcessLog | None, LogLine]] = []
    transient: list[LogLine] = []
    num_transient = 0
    matching: dict[str, list[Signature]] = {}
    for process, line, failure in lines:
        message = line.message or line.text
        if not failure and not message.startswith("INFO"):
            message = f"INFO {message}"
        if _TRANSIENT.search(message):
            transient.append(line)
            num_transient += line.count
            continue
        known = matching.get(message)
        if known is None:  # the same text from many processes: matched once
            known = matching[message] = _signatures_of(message)
        signatures = in_context(known, message, process, line, log)
        line_fatal = False
        for signature in signatures:
            severity, fatal = _judged(signature, process, failure, log, message)
            line_fatal = line_fatal or fatal
            entry = found.setdefault(signature.id, _Matched(signature))
            entry.lines.append(line)
            if process is not None:
                entry.processes.add(process.key)
            entry.count += line.count
            if _RANK[severity] > _RANK[entry.severity]:
                entry.severity = severity
            entry.fatal = entry.fatal or fatal
        # only a generic signature, or none: the line's source location names what broke
        subsystem = _broken(process, line, log, signatures, line_fatal if failure else None)
        if subsystem is not None:
            broke.setdefault(subsystem.id, []).append((process, line))
        elif not (signatures or not failure):
            (failed if _unknown_failed(process, line, log) else survived).append((process, line))
    findings = [
        Finding(
            id=m.signature.id,
            severity=Severity(m.severity),
            title=m.signature.title,
            cause=m.signature.cause,
            fix=m.signature.fix,
            evidence=quotes(m.lines),
            conclusions=line_details(m.signature.id, m.lines)
            + _queue_pair_gids(m, log)
            + (
                unneeded(m.processes, log)
                if m.signature.escalate is not None and m.severity == "warning"
                else ()
            )
            + (crash_places(m.lines, log) if m.signature.id == "process-crashed" else ()),
            count=m.count,
            processes=tuple(sorted(m.processes)),
            consequence=m.signature.consequence,
            fatal=m.fatal,
        )
        for m in found.values()
    ]
    findings += [_broke(_SUBSYSTEM[key], said) for key, said in broke.items()]
    if failed:
        findings.append(
            Finding(
                id="nccl-failure",
                severity=Severity.ERROR,
                title="NCCL reported a failure hpnet has no signature for",
                cause="NCCL warned on the path of a call that failed (the error went up "
                "through 'file.cc:N -> code' lines, or the framework reports a failure): "
                "the line itself names the failure",
                fix="read the lines; the first one in time is the cause, the others follow "
                "from it (if one explains a failure hpnet does not know, report it to hpnet)",
                evidence=quotes(line for _, line in failed),
                count=len(failed),
                processes=tuple(sorted({p.key for p, _ in failed if p is not None})),
                fatal=True,
            )
        )
    if survived:
        findings.append(
            Finding(
                id="other-warnings",
                severity=Severity.WARNING,
                title="NCCL warned of something its code goes on after; the failure is "
                "elsewhere in the log"
                if any(_failing(p, log) for p, _ in survived)
                else "NCCL warned, and nothing in the log shows a failure after it",
                cause="NCCL printed a WARN hpnet has no signature for, with no error passed "
                "up after it ('file.cc:N -> code') and no framework error, or one after which "
                "NCCL's source goes on (a proxy that closes one connection and serves the "
                "others): something was off, and NCCL (or its plugin) went on",
                fix="read the lines; if one explains a problem, report it to hpnet",
                evidence=quotes(line for _, line in survived),
                count=len(survived),
                processes=tuple(sorted({p.key for p, _ in survived if p is not None})),
            )
        )
    exhausted = [line for line in transient if _EXHAUSTED.search(line.text)]
    if exhausted:
        findings.append(
            Finding(
                id="retries-exhausted",
                severity=Severity.ERROR,
                title="NCCL retried a call to its last attempt, and it still failed",
                cause="a connection (or an RDMA queue-pair transition) failed on every retry "
                "NCCL allows (NCCL_SOCKET_RETRY_CNT, NCCL_IB_MQP_RETRY_CNT): after the last one "
                "NCCL gives up with an error; the reason is in the line (No route to host: the "
                "peer's address is not reachable from here, a wrong interface or a firewall; "
                "Connection refused: nothing listens there)",
                fix="make every node reach the others' addresses on the interface NCCL uses "
                "(NCCL_SOCKET_IFNAME naming the same network on every node; open the ports)",
                evidence=quotes(exhausted),
                count=len(exhausted),
            )
        )
    if transient:
        findings.append(
            Finding(
                id="retried-calls",
                severity=Severity.INFO,
                title="NCCL retried calls that failed, or ignored their failure",
                cause="a connection or an RDMA queue-pair transition failed and NCCL tried "
                "again (NCCL_IB_MQP_RETRY_*, NCCL_SOCKET_RETRY_*), or a CUDA call whose "
                "failure NCCL ignores failed; if the retries ran out NCCL printed a WARN, "
                "reported on its own",
                fix="nothing if the job ran; if it hangs or fails, the WARN lines say why",
                evidence=quotes(transient),
                count=num_transient,
            )
        )
    return findings


_SUBSYSTEM = {s.id: s for s in SUBSYSTEMS}


def _queue_pair_gids(matched: _Matched, log: NcclLog) -> tuple[str, ...]:
    """For a queue pair that could not connect or whose traffic failed, the GIDs the
    failing processes' queue pairs used, where their NET/IB lines say (hpnet.ncclog.gids)."""
    if not matched.signature.id.startswith(("modify-qp", "completion")):
        return ()
    return gid_details(
        [said for p in log.processes if p.key in matched.processes for said in p.lines_of("gid:")]
    )


def _broken(
    process: ProcessLog | None,
    line: LogLine,
    log: NcclLog,
    signatures: Sequence[Signature],
    fatal: bool | None,
) -> Subsystem | None:
    """The subsystem a fatal failure line (``fatal`` None: not a failure line) names by
    its source location, when no signature but a generic one matched it (a generic
    subsystem only without any)."""
    if fatal is None or any(not s.consequence for s in signatures):
        return None
    message = line.message or line.text
    subsystem = subsystem_of(message)
    if subsystem is None or (subsystem.generic and signatures):
        return None
    if not signatures:
        fatal = _unknown_failed(process, line, log) or (
            process is None and warn_files(message.removeprefix("WARN "))[1] == "fatal"
        )
    return subsystem if fatal else None


def _broke(subsystem: Subsystem, said: Sequence[tuple[ProcessLog | None, LogLine]]) -> Finding:
    """A fatal failure line whose cause its NCCL source location names
    (:mod:`hpnet.ncclog.causes`)."""
    return Finding(
        id=subsystem.id,
        severity=Severity.ERROR,
        title=subsystem.broke,
        cause=subsystem.cause,
        fix=subsystem.fix,
        evidence=quotes(line for _, line in said),
        conclusions=tuple(
            f"the failing call is in {where} ({subsystem.name})"
            for where in dict.fromkeys(
                location_of(line.message) or "the NCCL source that prints this message"
                for _, line in said
            )
        )[:3]
        + line_details(subsystem.id, [line for _, line in said]),
        count=sum(line.count for _, line in said),
        processes=tuple(sorted({p.key for p, _ in said if p is not None})),
        fatal=True,
    )


def _subsystems(lists: Iterable[str]) -> str:
    """The debug subsystems of comma-separated lists, as one: INIT first, then by name.

    >>> _subsystems(["INIT,GRAPH", "INIT,SHM"])
    'INIT,GRAPH,SHM'
    """
    names = {name for names in lists for name in names.split(",")}
    return ",".join(sorted(names, key=lambda name: (name != "INIT", name)))


def trail_findings(log: NcclLog, named: Iterable[str]) -> list[Finding]:
    """Return-code trails (``transport/net.cc:1362 -> 6``): a call failed and the error
    went up through these functions. An error unless the process went on afterwards;
    a consequence when a WARN of the same process names the cause."""
    failing = [p for p in log.processes if p.trail_codes and not p.went_on]
    if not failing:
        return []
    codes = sorted({c for p in failing for c in p.trail_codes})
    names = ", ".join(f"{RESULT_NAMES.get(c, 'code')} ({c})" for c in codes)
    # a WARN after the first trail line does not say what the trail passed up
    before = {p.key for p in failing if failed_first(p)}
    explained = set(named) - before
    texts = {p.key: [line.message or line.text for line in p.trails] for p in failing}
    stages = {p.key: trail_stage(texts[p.key]) for p in failing}
    aborts = {p.key for p in failing if abort_trail(texts[p.key], p.trail_codes, bool(p.warnings))}
    aborted = len(aborts) == len(failing)  # every trail is the abort's
    named = {s.name for s in stages.values() if s is not None}
    # one stage for every failing process: the title names it
    stage = f" in {named.pop()}" if len(named) == 1 and None not in stages.values() else ""
    subsystems = {s.subsystem for s in stages.values() if s is not None} or {"INIT,NET"}
    return [
        Finding(
            id="abort-trail" if aborted else "error-trail",
            severity=Severity.ERROR,
            title=(
                f"NCCL's socket calls{stage} stopped on the communicator's abort ({names})"
                if aborted
                else f"a call inside NCCL failed{stage} and the error went up to the caller "
                f"({names})"
            ),
            cause=ABORT_CAUSE
            if aborted
            else "NCCL prints 'file.cc:line -> N' at every function the error passes on its way "
            "up (include/checks.h); the first WARN of the same process says what failed, and "
            "without one the first trail line is where it started",
            fix=ABORT_FIX
            if aborted
            else "read the WARN lines before the trail; if there are none, rerun with "
            f"NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS={_subsystems(subsystems)} to see the failing call",
            evidence=quotes(line for p in failing for line in p.trails[:2]),
            conclusions=tuple(
                f"process {p.key}: error code {', '.join(map(str, p.trail_codes))}"
                + (
                    f", failed in {at.text} ({at.where} in its trail)"
                    # what a system error there usually is, where no WARN says it
                    + (
                        f"; {at.system_error}"
                        if at.system_error and 2 in p.trail_codes and p.key not in explained
                        else ""
                    )
                    if (at := stages[p.key])
                    else ""
                )
                + (f"; {ABORT_TRAIL}" if p.key in aborts else "")
                + (
                    f"; {FAILED_FIRST} (its first trail line, line "
                    f"{min(t.line_number for t in p.trails)}): what failed first is not in "
                    "the input"
                    if p.key in before
                    else ""
                )
                for p in failing[:MAX_EVIDENCE]
            ),
            count=len(failing),
            processes=tuple(p.key for p in failing),
            consequence=all(p.key in explained or p.key in aborts for p in failing),
            fatal=True,
        )
    ]


# ---------------------------------------------------------------- communicators


def comm_states(
    log: NcclLog, comms: Sequence[tuple[str, int, int, bool, bool, int]]
) -> list[Finding]:
    """Communicators that never completed init, and aborted ones.

    ``comms``: (id, nranks, ranks seen, init complete, aborted, connections) each.
    """
    findings = []
    errors = any(w.message.startswith("WARN") for p in log.processes for w in p.warnings) or any(
        p.trail_codes for p in log.processes
    )
    started = [c for c in comms if not c[3] and not c[4] and c[2]]
    if started:
        connected = all(c[5] for c in started)
        findings.append(
            Finding(
                id="init-incomplete",
                # without an error the log cannot tell a hang from a cut excerpt
                severity=Severity.WARNING if errors and not connected else Severity.INFO,
                title=f"{len(started)} communicator(s) started but never logged Init COMPLETE",
                cause="initialisation failed or hung (see the WARN lines), or the log was cut "
                "before it finished"
                + (" (their connections were set up: probably a cut log)" if connected else ""),
                fix="if the job hung, rerun with NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP and "
                "a timeout",
                conclusions=tuple(
                    f"communicator {c[0]}: init lines of {c[2]} of its {c[1]} ranks, none "
                    "saying Init COMPLETE"
                    for c in started[:4]
                ),
                count=len(started),
            )
        )
    aborted = [c for c in comms if c[4]]
    if aborted:
        findings.append(
            Finding(
                id="comm-aborted",
                severity=Severity.WARNING if errors else Severity.INFO,
                title=f"{len(aborted)} communicator(s) were aborted",
                cause="a rank hit an error or a timeout and the framework aborted the "
                "communicator (ncclCommAbort); some frameworks also abort at shutdown",
                fix="the cause is the first error before it",
                evidence=quotes(p.line("abort") for p in log.processes),
                conclusions=tuple(f"communicator {c[0]} was aborted" for c in aborted[:4]),
                count=len(aborted),
                consequence=True,
            )
        )
    return findings
