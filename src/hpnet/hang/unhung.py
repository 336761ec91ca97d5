"""What the ranks' error lines say where the job did not hang: its process group (or
the launcher's rendezvous before it) never came up, a CUDA error ended a rank's
watchdog, or a rank's read from the store timed out. Each is one sentence for
``hpnet hang``'s verdict, or None where the lines say something else."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from hpnet.hang.model import ranks_text
from hpnet.hang.ranklog import DUMP_WAIT, TEARDOWN, RankError
from hpnet.ncclog.interfaces import DOCKER_BRIDGE, in_docker_bridge

__all__ = [
    "crashed",
    "never_met",
    "ray_folded",
    "store_unreached",
    "store_waited",
    "stuck_summary",
    "teardown_summary",
]

#: what torch's store barrier counted when it gave up (distributed_c10d.py
#: _store_based_barrier: it waits while ``worker_count != world_size``)
#: torch's TCPStore (torch/csrc/distributed/c10d/TCPStore.cpp, 2.4 on), its spelling
_NO_LIBUV = "use_libuv was requested but PyTorch was build without libuv support"
_BARRIER_COUNT = re.compile(r"\(world_size=(\d+), worker_count=(\d+)")


def never_met(errors: Sequence[RankError]) -> str | None:
    """Where every line says the process group could not be made: the job never
    reached a collective, so it never hung in one; what to look at."""
    # the launcher's rendezvous, with the store connection it lost (torch's
    # c10d_rendezvous_backend raises RendezvousConnectionError from the store's error)
    if any(e.launcher and not e.random_id for e in errors) and all(
        e.launcher or e.store or (e.peer_closed and e.op is None) for e in errors
    ):
        return _rendezvous(errors)
    # a rank's read from the store that timed out is part of making the group (its ranks
    # meet through the store) where another line says the group could not be made
    if not any(e.init for e in errors) or not all(e.init or e.store for e in errors):
        return None
    who = _ranks_phrase(errors, "its ranks")
    first = errors[0]
    said = (
        f"the job never reached a collective: {who} failed while making the process group "
        f"({Path(first.where).name}: {first.text}): not a hang"
    )
    if any(_NO_LIBUV in e.text for e in errors):
        return (
            f"{said}; this PyTorch build has no libuv (the Windows builds) and its store was "
            "asked to use it (torch 2.4 on asks by default): set USE_LIBUV=0 in the ranks' "
            "environment, or add ?use_libuv=0 to the init_method URL"
        )
    counted = next((c for e in errors if (c := _BARRIER_COUNT.search(e.text))), None)
    if counted is not None:
        ranks, arrived = int(counted.group(1)), int(counted.group(2))
        if arrived > ranks:
            return (
                f"{said}; the barrier counted {arrived} arrivals for {ranks} ranks, and it "
                "waits for the count to equal the ranks: no rank is missing, the counter in "
                "the store also holds an earlier start's arrivals (the launcher restarted "
                "the worker group on the same store, or another job used the same store "
                "address and port). The first start's own failure is the cause: run it "
                "with --max_restarts 0 to see it, or give each job its own port"
            )
        if arrived < ranks:
            return (
                f"{said}; {arrived} of {ranks} ranks reached the barrier: {ranks - arrived} "
                "never started or could not reach the store (its address and port, a "
                "firewall, a timeout shorter than the job's start)"
            )
    return (
        f"{said}; see why the ranks could not meet (the store's address and port, a "
        "firewall, a timeout shorter than the job's start)"
    )


def _ranks_phrase(errors: Sequence[RankError], nobody: str) -> str:
    """``rank 3`` / ``ranks 1, 4`` of the lines, ``nobody`` where none names one."""
    ranks = sorted({e.rank for e in errors if e.rank is not None})
    return ranks_text(ranks) if ranks else nobody


def _rendezvous(errors: Sequence[RankError]) -> str:
    """The launcher's rendezvous failed, or could not be closed: what its lines say of
    the store and the id."""
    launcher = [e for e in errors if e.launcher]
    failed = next((e for e in launcher if e.init), None)
    if failed is None:  # only its close failed: at the run's end, or after a failure
        first = next(e for e in launcher if e.shutdown)
        said = [
            f"the launcher could not close its rendezvous ({Path(first.where).name}: "
            f"{first.text}): the store it met in was gone, its host had exited (the agent "
            "on the endpoint's node, whose run ended or failed first, or another job's "
            "agent on the same store address and port); an agent closes the rendezvous "
            "after its workers exit, so this is not a hang, and the lines do not say how "
            "the workers ended: read their own output; give each job its own port"
        ]
    else:
        said = [
            f"the job never started: the launcher's rendezvous failed before any worker "
            f"ran ({Path(failed.where).name}: {failed.text}): not a hang"
        ]
    endpoint = next((e.endpoint for e in launcher if e.endpoint), None)
    if endpoint is not None:
        host, _, port = endpoint.partition(":")
        said.append(
            f"the agent's connection to the rendezvous store at {endpoint} timed out: no "
            "store listened there (the node whose own address is the endpoint starts it) "
            f"or the port is not reachable; on that node `ss -ltnp | grep {port or 'PORT'}` "
            f"shows whether it listens, from the others `nc -vz {host} {port or 'PORT'}`"
            + _bridge(host)
        )
    if any(e.random_id for e in launcher):
        said.append(
            "this launch drew a random rendezvous id (no --rdzv_id given): each node's "
            "launcher draws its own, so on several nodes they never join one rendezvous; "
            "pass the same --rdzv_id on every node"
        )
    if failed is not None and len(said) == 1:
        said.append(
            "the nodes' agents could not all join the store at --rdzv_endpoint in time: "
            "its address and port, a firewall, a node that never started"
        )
    return "; ".join(said)


def _bridge(host: str) -> str:
    """Docker's default bridge network (docker0, 172.17.0.0/16): an address of a
    container reachable inside its own host only."""
    if not in_docker_bridge(host):
        return ""
    return (
        f"; {host} is in {DOCKER_BRIDGE}, Docker's default bridge network (docker0): a "
        "container's address there is reachable from its own host only, so a store's host "
        "that published it cannot be reached from other nodes: run the containers with "
        "host networking, or give the store a routable address (MASTER_ADDR and the "
        "framework's host address)"
    )


def store_unreached(errors: Sequence[RankError]) -> str | None:
    """A process's connection to a store timed out while other ranks' collectives had
    run: a group made while the job ran (a framework's group for another set of
    processes, its own store) never met; the ranks waiting in a collective may wait for
    a process stuck there."""
    unreached = next((e for e in errors if e.launcher and e.endpoint), None)
    if unreached is None or not any(e.op is not None for e in errors):
        return None
    host = unreached.endpoint.partition(":")[0] if unreached.endpoint else ""
    return (
        f"and a process timed out connecting to a store at {unreached.endpoint} "
        f"({unreached.where}): a process group being made while the job ran never met "
        "there, and a rank that waits in its making is not in the collective the others "
        f"wait in{_bridge(host)}"
    )


def crashed(errors: Sequence[RankError]) -> str | None:
    """Where a rank's watchdog ended on a CUDA error: a crash, whatever else the lines
    say (the other ranks' timeouts wait for the rank that crashed); what to look at."""
    first = next((e for e in errors if e.crash), None)
    if first is None:
        return None
    if first.rank is not None:
        who = f"rank {first.rank}"
    elif first.pg is not None and first.pg_rank is not None:
        who = f"rank {first.pg_rank} of group {first.pg} (its rank in that group)"
    elif first.pg_rank is not None:  # torch up to 2.2: "[Rank N]", the group not named
        who = f"rank {first.pg_rank} of a group the line does not name"
    else:
        who = "a rank the line does not name"
    others = len(errors) - 1
    more = f"; {others} other error line(s) besides" if others else ""
    return (
        f'not a hang: a CUDA error ended the watchdog of {who}: "{first.crash}" '
        f"({first.where}){more}; a kernel faulted on that GPU, and CUDA reports a fault at a "
        "later call (here the watchdog's query of a collective's events), not where it "
        "happened: rerun with CUDA_LAUNCH_BLOCKING=1 (or under compute-sanitizer) to find "
        "the kernel, and look for Xid errors in the host's kernel log (dmesg)"
    )


def store_waited(errors: Sequence[RankError]) -> str | None:
    """Where every line is a rank's read from the store that timed out: the rank waited
    for a key another rank had to write; the line says neither which key nor which rank."""
    if not errors or not all(e.store for e in errors):
        return None
    who = _ranks_phrase(errors, "a rank the lines do not name")
    stores = ", ".join(dict.fromkeys(str(e.store) for e in errors))
    first = errors[0]
    return (
        f"{who} waited for the c10d store at {stores} until the read timed out "
        f"({Path(first.where).name}): a key another rank had to write never came (a "
        "rendezvous through the store, such as a new NCCL communicator's unique id, which "
        "its first rank writes); the lines do not say which key or rank: the other ranks' "
        "logs, or `py-spy dump` of each, say where they stopped"
    )


def teardown_summary(errors: Sequence[RankError]) -> str:
    """Only the watchdogs' teardown lines (ranklog.TEARDOWN, DUMP_WAIT): whose watchdog
    tore its process down, whose Flight Recorder dump did not finish in time."""
    said = []
    for pattern, what in (
        (TEARDOWN, "found an NCCL operation failed or timed out and takes its process down"),
        (DUMP_WAIT, "waited {0} ms for the Flight Recorder dump, which did not finish"),
    ):
        lines = [(e, m) for e in errors if (m := pattern.search(e.text))]
        if lines:
            ranks = sorted({e.rank for e, _ in lines if e.rank is not None})
            who = ranks_text(ranks) if ranks else "a rank the lines do not name"
            said.append(
                f"the watchdog of {who} {what.format(*lines[0][1].groups())} ({lines[0][0].where})"
            )
    return (
        "; ".join(said) + ": a collective failed or timed out before these lines; no Flight "
        "Recorder dump or watchdog timeout line says which, or which rank is behind"
    )


def stuck_summary(
    errors: Sequence[RankError], exits: Sequence[RankError], *, dumped: bool
) -> str | None:
    """Watchdogs that got stuck, or a group's abort that did not return, where no
    collective timed out in the lines: the thread that checks the collectives was itself
    blocked (a CUDA or NCCL call that does not return, or the GIL), so no collective can
    be named; where the ranks were exiting without destroy_process_group(), that is when.
    A group's abort is its teardown (ncclCommAbort of each communicator), not a
    collective: with no work pending (the heartbeat monitor's ``workMetaList_.size()=0``)
    nothing was left on the wire."""
    stuck = [e for e in errors if e.stuck]
    aborts = [e for e in errors if e.abort_wait_ms is not None]
    if not stuck and not aborts:
        return None
    said = []
    if aborts:
        waited = sorted({e.rank for e in aborts if e.rank is not None})
        said.append(
            f"the process group's abort did not return on "
            f"{ranks_text(waited) if waited else 'a rank'} in "
            f"{max(e.abort_wait_ms or 0 for e in aborts)} ms: its teardown (ncclCommAbort of "
            "each communicator, at destroy_process_group() or when the group is destroyed) "
            "is stuck, not a collective"
        )
    if stuck:
        ranks = sorted({e.rank for e in stuck if e.rank is not None})
        groups = sorted({e.pg for e in stuck if e.pg is not None}, key=lambda g: (len(g), g))
        where = f" of group{'s' if len(groups) > 1 else ''} {', '.join(groups)}" if groups else ""
        who = ranks_text(ranks) if ranks else _group_ranks(stuck) or "a rank"
        said.append(
            # the watchdog ends its loop at the teardown; its monitor stops after the abort
            f"the heartbeat monitor{where} fired on {who} while it waited (a group torn "
            "down beats no more)"
            if aborts
            else f"the watchdog{where} got stuck on {who}: a CUDA or NCCL call (or the GIL) "
            "blocked the thread that checks the collectives, so no collective timed out in "
            "these lines"
        )
        idle = sorted({e.rank for e in stuck if e.pending == 0 and e.rank is not None})
        if idle:
            said.append(f"{ranks_text(idle)} had no collective pending (workMetaList_.size()=0)")
    text = "; ".join(said)
    gone = sorted({e.rank for e in exits if e.rank is not None})
    if exits:
        text += (
            f"; {ranks_text(gone) if gone else 'the processes'} were exiting without "
            "destroy_process_group() (the groups torn down at interpreter exit)"
        )
    if not dumped:
        text += (
            "; py-spy dump --native of the stuck process says where ncclCommAbort waits"
            if aborts
            else "; py-spy dump of the stuck process (its watchdog thread) says which call"
        )
    return text


def _group_ranks(stuck: Sequence[RankError]) -> str:
    """The stuck ranks the lines name only by their rank in a group other than the
    default (``[PG ID 4 PG GUID  Rank 2]``): ``rank 2 of group 4, rank 0 of group 6 (ranks
    within their groups)``; empty where none is so named."""
    named = dict.fromkeys(
        (e.pg_rank, e.pg) for e in stuck if e.rank is None and e.pg_rank is not None
    )
    if not named:
        return ""
    return ", ".join(f"rank {r} of group {g}" for r, g in named) + (
        " (ranks within their groups)" if len(named) > 1 else " (its rank in that group)"
    )


def ray_folded(repeated: int) -> str:
    """Ray's log dedup folded alike lines of other workers into the ones shown (numbers
    aside: another rank's same error reads alike), so more ranks said it than the lines
    name (docs.ray.io, "Log deduplication").

    >>> ray_folded(3)[:55]
    "Ray folded up to 3 more workers' alike lines into these"
    """
    return (
        f"Ray folded up to {repeated} more workers' alike lines into these ('[repeated "
        f"{repeated}x across cluster]'): more ranks said so than the lines name, and which "
        "ones is hidden; RAY_DEDUP_LOGS=0 shows each worker's lines"
    )
