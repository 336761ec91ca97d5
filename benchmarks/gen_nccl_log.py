"""Write a large, realistic NCCL debug log for the `hpnet verify` speed benchmark.

    python benchmarks/gen_nccl_log.py OUT.log --size-gb 5
    python benchmarks/gen_nccl_log.py OUT.log --size-gb 1 --hosts 1536   # 12,288 processes

The lines are NCCL 2.28.9's, taken from a real run on the 4x H200 machine with
NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,ENV (tests/data/nccl-logs/h200x4-fake-hosts-2x2-net-
socket-nccl2.28.9/rank0.log): the lines NCCL prints once per process (version, plugins,
NIC lists) once per process, the lines it prints per communicator (topology, graphs,
proxy connections, init) per communicator, scaled to a large job: 128 hosts x 8 GPUs,
each job creating four kinds of communicator (world, a tensor-parallel group inside
each host, a data-parallel group across hosts, the world again after a restart), with
32 channels of ring connections (P2P/CUMEM inside a host, NET/IB/<nic>/GDRDMA between
hosts) and a program's own output between NCCL's lines. Ranks' lines are interleaved
in small bursts, as a launcher merges them. The job goes on creating new generations of
these communicators (new addresses and commIds; the same 1024 processes) until the size
is reached, as a long job that re-creates its groups does: no two generations' lines
are equal, and the number of processes stays that of one job.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

HOSTS = 128
GPUS = 8
CHANNELS = 32
RECORDED = (
    Path(__file__).parents[1]
    / "tests/data/nccl-logs/h200x4-fake-hosts-2x2-net-socket-nccl2.28.9/rank0.log"
)


def _recorded() -> tuple[list[str], list[str]]:
    """The recorded rank's lines, prefix removed: (once per process, per communicator).

    NCCL prints everything up to "Assigned NET plugin" once per process; the rest,
    but the connection and init lines (generated below), once per communicator.
    """
    process: list[str] = []
    comm: list[str] = []
    target = process
    for line in RECORDED.read_text().splitlines():
        _, sep, message = line.partition(" NCCL INFO ")
        if not sep:
            continue
        if message.startswith("Assigned NET plugin"):
            target = comm
        if " via " in message or " - Init " in message or message.startswith("comm 0x"):
            continue
        target.append(message)
    return process, comm


def _rank_block(job: int, comm: int, rank: int, nranks: int, members: list[int]) -> list[str]:
    """One rank's lines for one communicator (and its process's, with the first)."""
    host, gpu = divmod(members[rank], GPUS)
    pid = 10000 + members[rank]
    prefix = f"node{host:03d}:{pid}:{pid} [{gpu}] NCCL INFO "
    comm_ptr = f"0x55{job:04x}{comm:02x}{members[rank]:06x}"
    comm_id = f"0x{job:08x}{comm:08x}"
    lines = [
        f"ncclCommInitRankConfig comm {comm_ptr} rank {rank} nranks {nranks} cudaDev {gpu} "
        f"nvmlDev {gpu} busId {gpu + 1}0000 commId {comm_id} - Init START",
        f"comm {comm_ptr} rank {rank} nRanks {nranks} nNodes {HOSTS} localRanks {GPUS} "
        f"localRank {gpu} MNNVL 0",
    ]
    if comm == 0 and job == 0:
        lines = PROCESS_LINES + lines
    lines += COMM_LINES
    nxt, prv = (rank + 1) % nranks, (rank - 1) % nranks
    next_local = members[nxt] // GPUS == host
    prev_local = members[prv] // GPUS == host
    for channel in range(CHANNELS):
        nic = channel % 8
        if next_local:
            lines.append(
                f"Channel {channel:02d}/0 : {rank}[{gpu}] -> {nxt}[{members[nxt] % GPUS}] "
                "via P2P/CUMEM"
            )
        else:
            lines.append(
                f"Channel {channel:02d}/0 : {rank}[{gpu}] -> {nxt}[{members[nxt] % GPUS}] "
                f"[send] via NET/IB/{nic}/GDRDMA"
            )
        if not prev_local:  # NET prints the receiving side too (transport/net.cc)
            lines.append(
                f"Channel {channel:02d}/0 : {prv}[{members[prv] % GPUS}] -> {rank}[{gpu}] "
                f"[receive] via NET/IB/{nic}/GDRDMA"
            )
    lines.append("Connected all rings, use ring PXN 0 GDR 1")
    lines.append(
        f"ncclCommInitRankConfig comm {comm_ptr} rank {rank} nranks {nranks} cudaDev {gpu} "
        f"nvmlDev {gpu} busId {gpu + 1}0000 commId {comm_id} - Init COMPLETE"
    )
    out = [prefix + line for line in lines]
    # the program's own output between NCCL's lines
    out += [
        f"[rank{members[rank]}] step {s} loss {2 + random.random():.4f} lr 3.0e-04 "
        f"tokens/s {random.randint(90000, 99999)}"
        for s in range(12)
    ]
    return out


def _job(job: int) -> str:
    world = list(range(HOSTS * GPUS))
    comms: list[list[int]] = [world]
    comms += [list(range(h * GPUS, (h + 1) * GPUS)) for h in range(HOSTS)]  # TP
    comms += [list(range(g, HOSTS * GPUS, GPUS)) for g in range(GPUS)]  # DP
    comms.append(world)  # after a restart
    blocks: list[list[str]] = []
    for index, members in enumerate(comms):
        for rank in range(len(members)):
            blocks.append(_rank_block(job, index, rank, len(members), members))
    # interleave bursts of up to 8 lines from the ranks, as a launcher does
    lines: list[str] = []
    cursors = [0] * len(blocks)
    live = list(range(len(blocks)))
    while live:
        still = []
        for b in live:
            burst = random.randint(1, 8)
            lines += blocks[b][cursors[b] : cursors[b] + burst]
            cursors[b] += burst
            if cursors[b] < len(blocks[b]):
                still.append(b)
        live = still
    return "\n".join(lines) + "\n"


PROCESS_LINES, COMM_LINES = _recorded()


def main() -> None:
    global HOSTS  # noqa: PLW0603 - every job of the log has this many
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--size-gb", type=float, default=5.0)
    parser.add_argument(
        "--hosts", type=int, default=HOSTS, help=f"hosts of {GPUS} GPUs (default {HOSTS})"
    )
    args = parser.parse_args()
    HOSTS = args.hosts
    random.seed(1)
    target = int(args.size_gb * 1e9)
    written = 0
    job = 0
    with open(args.out, "w") as handle:
        while written < target:
            text = _job(job)
            handle.write(text)
            written += len(text)
            job += 1
            print(f"gen: {written / 1e9:.2f} GB", flush=True)


if __name__ == "__main__":
    main()
