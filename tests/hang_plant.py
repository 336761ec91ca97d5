"""Real gloo jobs that hang, one fault planted per job, for ``hpnet hang`` (issue 27).

Each rank is a process of its own (``python -m tests.hang_plant rank ...``) joined to
a TCPStore the launcher holds, so that a rank that dies or stops takes no one else's
store with it. Every rank runs ``--steps`` steps of the same collectives on the world
group (all_reduce, then all_gather) and on a subgroup of the first half of the ranks
(an all_reduce). Torch's Flight Recorder records them (``TORCH_FR_BUFFER_SIZE``). A
rank whose collective fails (gloo's timeout, a peer gone) sets the store key
``hpnet-dump``, as ProcessGroupNCCL's watchdog signals every rank to dump on a timeout
(``TORCH_NCCL_DUMP_ON_TIMEOUT``); every live rank's watcher thread then writes its
Flight Recorder as JSON (``_dump_fr_trace_json``; ``--pickle``: torch's default
pickle, ``_dump_fr_trace``) to ``nccl_trace_rank_<rank>``, the
name torch's dump on timeout gives (``TORCH_FR_DUMP_TEMP_FILE``'s default prefix), and
the error it saw to ``rank<rank>.log``. A clean job's ranks dump at the end.

Plants, on rank ``--culprit`` at step ``--at``:

========  =================================================================  ===========
plant     what the rank does                                                 the answer
========  =================================================================  ===========
none      nothing                                                            no hang
skip      stops issuing collectives (stuck in its own work), then waits      never-entered
sleep     sleeps past the others' timeout before the step (a straggler)      never-entered
op        calls all_gather where the others call all_reduce                  mismatch
size      calls all_reduce on twice the elements                             mismatch
dtype     calls all_reduce on float64 where the others use float32           mismatch
stop      SIGSTOPs itself (frozen: no dump, its sockets stay open)           silent
kill      SIGKILLs itself (gone: its peers' connections close)               gone
subgroup  skips the subgroup's all_reduce at the last step, then waits        never-entered
cascade   the same at an earlier step: its subgroup peer waits there, so the  never-entered
          world group's next collective waits too (the root is the subgroup)
========  =================================================================  ===========

    python -m tests.hang_plant run --plant skip --world 4 --culprit 2 --out /tmp/h
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

PLANTS = ("none", "skip", "sleep", "op", "size", "dtype", "stop", "kill", "subgroup", "cascade")
#: the kind of hang each plant must be named as
ANSWER = {
    "none": None,
    "skip": "never-entered",
    "sleep": "never-entered",
    "op": "mismatch",
    "size": "mismatch",
    "dtype": "mismatch",
    "stop": "silent",
    "kill": "gone",
    "subgroup": "never-entered",
    "cascade": "never-entered",
}
DUMP_KEY = "hpnet-dump"
NUMEL = 1024


def _rank(ns: argparse.Namespace) -> int:  # one rank's script, top to bottom
    import torch
    import torch.distributed as dist

    rank, world = ns.rank, ns.world
    out = Path(ns.out)
    store = dist.TCPStore(
        "127.0.0.1", ns.port, world, False, timeout=datetime.timedelta(seconds=60)
    )
    timeout = datetime.timedelta(seconds=ns.timeout)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timeout)
    half = list(range(max(2, world // 2)))
    sub = dist.new_group(half, timeout=timeout)
    dumped = threading.Event()

    def dump() -> None:
        if dumped.is_set():
            return  # once, as torch's dump on timeout
        dumped.set()
        c10d = torch._C._distributed_c10d
        data = (c10d._dump_fr_trace if ns.pickle else c10d._dump_fr_trace_json)(True, True)
        path = out / f"nccl_trace_rank_{rank}"
        partial = path.with_suffix(".partial")
        partial.write_bytes(data if isinstance(data, bytes) else data.encode())
        partial.rename(path)

    def watch() -> None:
        while not dumped.is_set():
            try:
                if store.check([DUMP_KEY]):
                    dump()
                    return
            except Exception:  # noqa: BLE001 - the store is gone: nothing to watch
                return
            time.sleep(0.05)

    threading.Thread(target=watch, daemon=True).start()
    x = torch.ones(NUMEL)
    gathered = torch.zeros(NUMEL * world)
    culprit = rank == ns.culprit
    try:
        for step in range(ns.steps):
            here = culprit and step == ns.at
            if here and ns.plant == "skip":
                time.sleep(ns.timeout * 4)
                return 0
            if here and ns.plant == "sleep":
                time.sleep(ns.timeout * 3)
            if here and ns.plant == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
            if here and ns.plant == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if here and ns.plant == "op":
                dist.all_gather_into_tensor(gathered, x)
            elif here and ns.plant == "size":
                dist.all_reduce(torch.ones(NUMEL * 2))
            elif here and ns.plant == "dtype":
                dist.all_reduce(torch.ones(NUMEL, dtype=torch.float64))
            else:
                dist.all_reduce(x)
            dist.all_gather_into_tensor(gathered, x)
            if rank in half:
                last = step == ns.steps - 1
                if culprit and (
                    (ns.plant == "subgroup" and last) or (here and ns.plant == "cascade")
                ):
                    time.sleep(ns.timeout * 4)
                    return 0
                dist.all_reduce(x, group=sub)
            x.fill_(1.0)
    except Exception as exc:  # noqa: BLE001 - the hang's evidence, written as the rank saw it
        (out / f"rank{rank}.log").write_text(f"[rank{rank}]: {type(exc).__name__}: {exc}\n")
        with contextlib.suppress(Exception):  # the launcher's store is gone
            store.set(DUMP_KEY, str(rank))
        dump()
        return 1
    dump()  # a clean run's ranks dump at the end
    return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(plant: str, world: int, culprit: int, out: Path, *, at: int = 2, steps: int = 4,
        timeout: float = 3.0, pickle: bool = False) -> list[int]:  # fmt: skip
    """One job; returns each rank's exit status (-19 stopped, -9 killed)."""
    import torch.distributed as dist

    out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    store = dist.TCPStore("127.0.0.1", port, world, True, wait_for_workers=False)
    env = {**os.environ, "TORCH_FR_BUFFER_SIZE": "2000", "PYTHONWARNINGS": "ignore"}
    # each rank's stderr, as a job's log keeps it (a rank that aborts says why there)
    logs = [(out / f"rank{r}.stderr").open("wb") for r in range(world)]
    procs = []
    for r in range(world):
        argv = [
            sys.executable,
            "-m",
            "tests.hang_plant",
            "rank",
            "--rank",
            str(r),
            "--world",
            str(world),
            "--port",
            str(port),
            "--plant",
            plant,
            "--culprit",
            str(culprit),
            "--at",
            str(at),
            "--steps",
            str(steps),
            "--timeout",
            str(timeout),
            "--out",
            str(out),
            *(["--pickle"] if pickle else []),
        ]
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=logs[r],
                                      cwd=Path(__file__).parents[1]))  # fmt: skip
    deadline = time.monotonic() + timeout * 6 + 30
    codes: list[int | None] = [None] * world
    while time.monotonic() < deadline and any(c is None for c in codes):
        for r, p in enumerate(procs):
            if codes[r] is None:
                codes[r] = p.poll()
        done = [c for c in codes if c is not None]
        if plant == "stop" and len(done) == world - 1:
            break  # the stopped rank never ends on its own
        time.sleep(0.1)
    for r, p in enumerate(procs):
        if codes[r] is None:
            p.kill()
            codes[r] = p.wait()
    del store
    for log in logs:
        log.close()
    (out / "plant.json").write_text(
        json.dumps(
            {
                "plant": plant,
                "world": world,
                "culprit": culprit,
                "at": at,
                "steps": steps,
                "answer": ANSWER[plant],
                "exit": codes,
            }
        )
    )
    return [c if c is not None else -1 for c in codes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("run", "rank"))
    parser.add_argument("--plant", choices=PLANTS, default="none")
    parser.add_argument("--world", type=int, default=4)
    parser.add_argument("--culprit", type=int, default=1)
    parser.add_argument("--at", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pickle", action="store_true", help="torch's default dump: a pickle")
    ns = parser.parse_args(argv)
    if ns.mode == "rank":
        return _rank(ns)
    print(run(ns.plant, ns.world, ns.culprit, Path(ns.out), at=ns.at, steps=ns.steps,
              timeout=ns.timeout, pickle=ns.pickle))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
