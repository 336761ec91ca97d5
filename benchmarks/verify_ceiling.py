"""What one worker's range of ``hpnet verify`` would cost if parts of its Python reading
were free: the ceiling of a redesign, measured before building it.

    python benchmarks/verify_ceiling.py /tmp/big.log --at 486 --mib 486 [--runs 2]

Three ways of scanning the same range (``read._scan_range``, as a worker does), each run
in a fresh process and alternated, CPU seconds of the process:

- ``as shipped``: every distinct line read and folded in Python;
- ``communicator lines in C only``: a line whose message ``read_comm`` (C) reads is
  dropped after that reading: what folding communicator lines without an event each
  could save at most (the output is then wrong: a measurement, not a mode);
- ``no line read``: the compiled passes, the block I/O and the counting only: the floor
  of the present design, whatever the Python reading became.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

_CHILD = r"""
import gc, sys, time
from hpnet.ncclog import read, scan
from hpnet.ncclog.passes import read_comm
path, start, end, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if mode == "comm":
    shipped = scan._Reader.read_all
    def read_all(self, counts):
        kept, firsts = {}, []
        for (whole, count), first in zip(counts.items(), self.firsts):
            at = whole.find(b"NCCL INFO ")
            if at >= 0 and read_comm(whole[at + 10 :]) is not None:
                continue
            kept[whole] = count
            firsts.append(first)
        self.firsts = firsts
        shipped(self, kept)
    scan._Reader.read_all = read_all
elif mode == "none":
    scan._Reader.read_all = lambda self, counts: None
gc.disable()
with open(path, "rb") as handle:
    start = read._boundary(handle, start) if start else 0
    end = read._boundary(handle, end)
began = time.process_time()
read._scan_range(path, start, end, path, start == 0)
print(f"{time.process_time() - began:.2f}")
"""
MODES = {"shipped": "as shipped", "comm": "communicator lines in C only", "none": "no line read"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--at", type=int, default=0, help="the range's start, MiB")
    parser.add_argument("--mib", type=int, default=486, help="the range's length, MiB")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    start, end = args.at << 20, (args.at + args.mib) << 20
    seconds: dict[str, list[str]] = {mode: [] for mode in MODES}
    for _ in range(args.runs):
        for mode, label in MODES.items():
            child = [sys.executable, "-c", _CHILD, args.log, str(start), str(end), mode]
            done = subprocess.run(child, capture_output=True, text=True, check=True)
            seconds[mode].append(done.stdout.strip())
            print(f"{label}: {done.stdout.strip()} s", file=sys.stderr, flush=True)
    print(f"{args.mib} MiB from {args.at} MiB of {args.log}, CPU seconds per run:")
    for mode, label in MODES.items():
        print(f"  {label}: {', '.join(seconds[mode])}")


if __name__ == "__main__":
    main()
