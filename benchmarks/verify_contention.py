"""How one range's scan slows when other workers scan at the same time (issue 28).

    python benchmarks/verify_contention.py LOG --at 512 --mib 64 --workers 1 2 4 8 16

For each count N, N forked processes each scan the same ``--mib`` MiB of LOG starting
at ``--at`` MiB, warm (each first scans the ``--mib`` MiB before it, untimed, with the
same classifier, as a worker in the middle of a long range would be), all at once; each
reports its scan's CPU and wall seconds. Then cold, as a worker starts its range: a new
classifier, every process met anew. Two controls run the same way: the compiled
passes alone (``count_split`` over the erased blocks: every byte, no Python per line)
and six ``bytes.count`` (grep's patterns, the cheapest pass there is). Where a scan's
time grows with N while the machine has N cores, the cores are shared (SMT siblings,
memory bandwidth, a frequency limit), and a range's time on 16 workers is not its
time alone.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import statistics
import time
from collections.abc import Callable

from hpnet.ncclog import read
from hpnet.ncclog.facts import LogFolder
from hpnet.ncclog.lines import Classifier
from hpnet.ncclog.passes import count_split, erased
from hpnet.ncclog.scan import iter_blocks, scan_block

PATTERNS = (b"NCCL WARN", b"via NET/", b"via P2P", b"via SHM", b"NET/Socket", b"Init COMPLETE")


def _slice(path: str, at_mib: int, mib: int) -> bytes:
    with open(path, "rb") as handle:
        start = read._boundary(handle, at_mib << 20)
        end = read._boundary(handle, (at_mib + mib) << 20)
        handle.seek(start)
        return handle.read(end - start)


def _scan(warm: bytes, data: bytes) -> Callable[[], None]:
    classifier = Classifier()
    folder = LogFolder()
    for block, _ in iter_blocks(warm, read.BLOCK_BYTES):
        folder.add(scan_block(block, source="x", start_line=1, classifier=classifier))

    def run() -> None:
        for block, _ in iter_blocks(data, read.BLOCK_BYTES):
            folder.add(scan_block(block, source="x", start_line=1, classifier=classifier))

    return run


def _cold(_warm: bytes, data: bytes) -> Callable[[], None]:
    def run() -> None:
        classifier = Classifier()
        folder = LogFolder()
        for block, _ in iter_blocks(data, read.BLOCK_BYTES):
            folder.add(scan_block(block, source="x", start_line=1, classifier=classifier))

    return run


def _passes(_warm: bytes, data: bytes) -> Callable[[], None]:
    def run() -> None:
        for block, _ in iter_blocks(data, read.BLOCK_BYTES):
            text, _blanked = erased(block)
            count_split(text, collections.Counter(), set(), 1 << 30, 1 << 20, blank=True, words=())

    return run


def _counts(_warm: bytes, data: bytes) -> Callable[[], None]:
    def run() -> None:
        for pattern in PATTERNS:
            data.count(pattern)

    return run


def _together(
    workers: int, make: Callable[[bytes, bytes], Callable[[], None]], warm: bytes, data: bytes
) -> list[tuple[float, float]]:
    """Fork ``workers`` processes; each prepares, waits for the others, then runs once."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            gc.disable()
            run = make(warm, data)
            os.write(ready_w, b"r")
            os.read(go_r, 1)
            cpu, wall = time.process_time(), time.perf_counter()
            run()
            line = f"{time.process_time() - cpu:.4f} {time.perf_counter() - wall:.4f}\n"
            os.write(out_w, line.encode())
            os._exit(0)
        children.append(pid)
    for _ in range(workers):
        os.read(ready_r, 1)
    os.write(go_w, b"g" * workers)
    for pid in children:
        os.waitpid(pid, 0)
    os.close(out_w)
    text = b""
    while chunk := os.read(out_r, 65536):
        text += chunk
    for fd in (ready_r, ready_w, go_r, go_w, out_r):
        os.close(fd)
    rows = [row.split() for row in text.decode().split("\n") if row]
    return [(float(cpu), float(wall)) for cpu, wall in rows]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--at", type=int, default=512, help="MiB where the timed slice starts")
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    args = parser.parse_args()
    warm = _slice(args.log, args.at - args.mib, args.mib)
    data = _slice(args.log, args.at, args.mib)
    print(f"cpus {os.cpu_count()}, slice {len(data) >> 20} MiB at {args.at} MiB")
    kinds = (
        ("scan", _scan), ("scan, cold", _cold), ("passes", _passes), ("bytes.count x6", _counts),
    )  # fmt: skip
    for name, make in kinds:
        for workers in args.workers:
            times = _together(workers, make, warm, data)
            cpu = [c for c, _ in times]
            wall = [w for _, w in times]
            print(
                f"{name:15} {workers:3} at once: cpu mean {statistics.mean(cpu):.3f} "
                f"max {max(cpu):.3f} s, wall max {max(wall):.3f} s"
            )


if __name__ == "__main__":
    main()
