"""The floor of a block scan in CPython (issue 28): the passes in C that `hpnet verify`'s
scanner makes over every byte of an 8 MiB block before Python reads a line, and what six
`bytes.count` passes (grep's six patterns, counted the cheapest way Python has) cost, on
ten blocks spread over LOG. Seconds per GB are of one core. Where hpnet.ncclog._fastscan
is built, its two passes are timed beside the Python ones they replace.

    python benchmarks/verify_floor.py LOG
"""

from __future__ import annotations

import collections
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from hpnet.ncclog import passes, scan

BLOCK = 8 << 20
BLOCKS = 10
GREP_WORDS = (b"via ", b"NET/", b"WARN", b"NCCL version", b"Init START", b"Using network")
GREP_LIKE = "grep-like: 6 bytes.count"
ERASE, ERASE_C = "erase channel numbers", "erase, compiled"
SPLIT, COUNT, COUNT_C = "split", "count lines (Counter)", "split and count, compiled"


def blocks(path: str) -> list[bytes]:
    """``BLOCKS`` blocks of whole lines, spread evenly over the file."""
    size = os.path.getsize(path)
    out = []
    with open(path, "rb") as f:
        for k in range(BLOCKS):
            f.seek(size * k // BLOCKS)
            f.readline()
            data = f.read(BLOCK)
            out.append(data[: data.rfind(b"\n") + 1])
    return out


def timed(data: bytes, clock: Callable[[str, Callable[[], Any]], Any]) -> None:
    """The scanner's passes over one block, each timed by ``clock``."""
    normal = clock("normalise", lambda: scan.normalise(data))
    text = clock(ERASE, lambda: passes.erased_py(normal) or normal)
    clock("blank noise (whole block)", lambda: passes.NOISE_ERASED.sub(b"NCCL INFO -", text))
    lines = clock(SPLIT, lambda: text.split(b"\n"))
    clock(COUNT, lambda: collections.Counter(lines))
    if passes._FAST is not None:
        fast = passes._FAST
        clock(ERASE_C, lambda: fast.erase_channels(normal))
        clock(COUNT_C, lambda: fast.count_lines(text, {}, None))
    clock("count markers", lambda: text.count(b"NCCL INFO ") + text.count(b"NCCL WARN "))
    clock(GREP_LIKE, lambda: [normal.count(word) for word in GREP_WORDS])


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    spent: dict[str, float] = collections.defaultdict(float)

    def clock(name: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        out = fn()
        spent[name] += time.perf_counter() - start
        return out

    got = blocks(sys.argv[1])
    for data in got:
        timed(data, clock)
    per_gb = (1 << 30) / BLOCK / len(got)
    for name, seconds in spent.items():
        ms = seconds / len(got) * 1000
        print(f"{name:28s} {ms:6.1f} ms per 8 MiB block, {seconds * per_gb:5.1f} s per GB")
    # at most: a block's noise is blanked whole only after a block of mostly new lines,
    # and only the lines not known to say nothing are counted
    python = sum(spent.values()) - spent[GREP_LIKE] - spent[ERASE_C] - spent[COUNT_C]
    print(f"{'the scanner in C, at most':28s} {python * per_gb:21.1f} s per GB")
    if passes._FAST is not None:
        compiled = python - spent[ERASE] - spent[SPLIT] - spent[COUNT] + spent[ERASE_C]
        compiled += spent[COUNT_C]
        print(f"{'... with the compiled passes':28s} {compiled * per_gb:21.1f} s per GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
