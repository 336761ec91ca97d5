"""What ``hpnet verify`` says of PyTorch's ProcessGroupNCCL lines: the watchdog's
timeouts and status, how the ranks' works compare (:mod:`hpnet.artefacts.parted`, the
rule ``hpnet hang`` applies too), the heartbeat monitor, NCCL errors torch raised."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hpnet.artefacts.framework import called_from, job_rank
from hpnet.artefacts.model import ArtefactFacts, Quote, TorchEvent
from hpnet.artefacts.parted import (
    Work,
    apart,
    behind_text,
    parted,
    rank_works,
    ranks_named,
    signalled,
    unentered,
    unentered_text,
)
from hpnet.result import Finding, Severity

__all__ = ["ERROR_CAUSE", "MAX_QUOTES", "quotes", "torch_findings"]

MAX_QUOTES = 6
#: what NCCL's error string means, and where to look (NCCL's ncclResult_t)
ERROR_CAUSE = {
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


def quotes(said: Sequence[Quote]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(q) for q in said))[:MAX_QUOTES]


def torch_findings(item: ArtefactFacts) -> list[Finding]:
    findings = []
    events = [replace(e, rank=job_rank(e)) for e in item.torch]
    timeouts = [e for e in events if e.what == "timeout"]
    status = [e for e in events if e.what == "status"]
    if timeouts:
        first = timeouts[0]
        ranks = sorted({e.rank for e in timeouts if e.rank is not None})
        numel = f", {_elements(first.numel_in)}" if first.numel_in is not None else ""
        stated = (f"rank {e.rank}: last enqueued work {e.last_enqueued}, last completed "
                  f"{e.last_completed} "
                  + (f"(stuck at {e.seq})" if e.seq is not None else "(when told to dump)")
                  for e in status)  # fmt: skip
        conclusions = list(dict.fromkeys(stated))  # a rank's two status lines say it once
        apart, mismatch = _ranks_apart(timeouts, status)
        conclusions += apart + _unentered(timeouts, status)
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
                evidence=quotes(
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
        stuck_ranks = sorted({e.rank for e in stuck if e.rank is not None})
        findings.append(
            Finding(
                id="watchdog-stuck",
                severity=Severity.ERROR,
                title="PyTorch's heartbeat monitor: the ProcessGroupNCCL watchdog got stuck"
                + (f" for {first.stuck_seconds} s" if first.stuck_seconds is not None else "")
                + (
                    f" on rank{'s' if len(stuck_ranks) > 1 else ''} "
                    + ", ".join(map(str, stuck_ranks))
                    if stuck_ranks
                    else ""
                )
                + "; the process is terminated",
                cause="the watchdog thread was blocked inside a CUDA or NCCL call (an abort "
                "or cudaEventDestroy that hangs, often after a collective timed out)",
                fix="look for the collective timeout or NCCL error before it; "
                "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC raises the limit",
                evidence=quotes([q for e in stuck for q in e.quotes]),
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
                cause=ERROR_CAUSE.get(event.error or "", "NCCL returned an error"),
                fix="the line after 'Last error:' is NCCL's last WARN: rerun with "
                "NCCL_DEBUG=INFO to see the lines before it",
                evidence=quotes(event.quotes),
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


def _works(
    timeouts: Sequence[TorchEvent], status: Sequence[TorchEvent], minimum: int = 2
) -> tuple[dict[int, list[TorchEvent]], dict[int, TorchEvent], dict[int, Work] | None]:
    """Each rank's timed-out works, its status line that names its work, and the ranks'
    one work each where they compare (:func:`hpnet.artefacts.parted.rank_works`)."""
    by_rank: dict[int, list[TorchEvent]] = {}
    for event in timeouts:
        if event.rank is not None and event.seq is not None:
            by_rank.setdefault(event.rank, []).append(event)
    stated = {e.rank: e for e in status if e.rank is not None and e.seq is not None}
    single = rank_works(
        {
            rank: [(e.pg, e.seq or 0, (e.op or "?", e.numel_in)) for e in events]
            for rank, events in by_rank.items()
        },
        {rank: (e.pg, e.seq) for rank, e in stated.items()},
        minimum,
    )
    return by_rank, stated, single


def _unentered(timeouts: Sequence[TorchEvent], status: Sequence[TorchEvent]) -> list[str]:
    """Ranks whose group's status, when told to dump, shows they never enqueued the work
    the others timed out in (:func:`hpnet.artefacts.parted.unentered`, as hpnet hang)."""
    single = _works(timeouts, status, 1)[2]
    found = unentered(single, signalled(status)) if single is not None else None
    if found is None or single is None:
        return []
    op = single[found.waiting[0]][2][0]
    return [
        f"{ranks_named(sorted(found.ranks))} never entered {op if op != '?' else 'collective'} "
        f"SeqNum {found.seq} of group {found.pg}, in which {ranks_named(found.waiting)} "
        f"{'waits' if len(found.waiting) == 1 else 'wait'}: {unentered_text(found)}"
    ]


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
    by_rank, stated, single = _works(timeouts, status)
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
                evidence=quotes(
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


def _elements(numel: int) -> str:
    return f"{numel} element{'' if numel == 1 else 's'}"


def _seq(seq: int | None) -> str:
    return f"SeqNum {seq}" if seq is not None else "(SeqNum not shown)"
