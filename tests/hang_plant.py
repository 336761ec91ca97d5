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
net       (NCCL) its network threads stop (ptrace from a helper process): the  stuck-in-
          NET/Socket path through it stalls, every process lives and dumps    collective
========  =================================================================  ===========

``--backend nccl`` runs the same on the GPUs (rank r on GPU r mod the count) with what
``hpnet launch --hang-capture OUT`` sets (Flight Recorder, dump on timeout to
OUT/nccl_trace_rank_, NCCL INFO to OUT/nccl.<host>.<pid>.log), a fake host per rank
(``NCCL_HOSTID``: NCCL's network transport between every pair) and NCCL_NVLS_ENABLE=0.
There torch's own watchdog times out, signals every rank to dump, and aborts the
process; each step ends in ``torch.cuda.synchronize()``, as a training step's
``loss.item()`` does.

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
#: NCCL only: the culprit's network threads stop (ptrace) from step ``--at`` on, so
#: that the fake hosts' NET/Socket path through it stalls while every process lives
NET_PLANTS = ("net",)
#: NCCL's threads that move a rank's network traffic (src/proxy.cc "NCCL Progress%2d",
#: src/transport/net_socket.cc "NCCL Sock%c%1u%2u%2u"), as /proc/<pid>/task/*/comm shows
NET_THREADS = ("NCCL Progress", "NCCL Sock")
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
    "net": "stuck-in-collective",
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
    nccl = ns.backend == "nccl"
    device = torch.device("cpu")
    if nccl:  # ProcessGroupNCCL's own watchdog dumps on timeout (TORCH_NCCL_DUMP_ON_TIMEOUT)
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    dist.init_process_group(ns.backend, store=store, rank=rank, world_size=world, timeout=timeout)
    half = list(range(max(2, world // 2)))
    sub = dist.new_group(half, timeout=timeout)
    dumped = threading.Event()
    # the watcher thread and the main thread may both dump: the second waits for the
    # first to finish (a main thread that returned while the watcher wrote ended the
    # process mid-write: an empty .partial on a 16-core run, benchmarks/README.md)
    dumping = threading.Lock()

    def dump() -> None:
        with dumping:
            if dumped.is_set():
                return  # once, as torch's dump on timeout
            c10d = torch._C._distributed_c10d
            if nccl:
                dump_nccl = c10d._dump_nccl_trace if ns.pickle else c10d._dump_nccl_trace_json
                data = dump_nccl(True, True)
            else:
                data = (c10d._dump_fr_trace if ns.pickle else c10d._dump_fr_trace_json)(True, True)
            path = out / f"nccl_trace_rank_{rank}"
            partial = path.with_suffix(".partial")
            partial.write_bytes(data if isinstance(data, bytes) else data.encode())
            partial.rename(path)
            dumped.set()

    def watch() -> None:
        while not dumped.is_set():
            try:
                if store.check([DUMP_KEY]):
                    dump()
                    return
            except Exception:  # noqa: BLE001 - the store is gone: nothing to watch
                return
            time.sleep(0.05)

    if not nccl:
        threading.Thread(target=watch, daemon=True).start()
    x = torch.ones(NUMEL, device=device)
    gathered = torch.zeros(NUMEL * world, device=device)
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
            if here and ns.plant == "net":
                _stall_network(out, ns.timeout * 6)
            if here and ns.plant == "op":
                dist.all_gather_into_tensor(gathered, x)
            elif here and ns.plant == "size":
                dist.all_reduce(torch.ones(NUMEL * 2, device=device))
            elif here and ns.plant == "dtype":
                dist.all_reduce(torch.ones(NUMEL, dtype=torch.float64, device=device))
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
            if nccl:  # a training step waits for its result (loss.item()) before the next
                torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - the hang's evidence, written as the rank saw it
        (out / f"rank{rank}.log").write_text(f"[rank{rank}]: {type(exc).__name__}: {exc}\n")
        if nccl:
            return 1  # ProcessGroupNCCL dumps on its own timeout
        with contextlib.suppress(Exception):  # the launcher's store is gone
            store.set(DUMP_KEY, str(rank))
        dump()
        return 1
    dump()  # a clean run's ranks dump at the end
    return 0


PR_SET_PTRACER, PR_SET_PTRACER_ANY = 0x59616D61, 2**64 - 1  # linux/prctl.h
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207  # linux/ptrace.h


def _stall_network(out: Path, seconds: float) -> None:
    """Stop this process's NCCL network threads from a helper process: PTRACE_SEIZE then
    PTRACE_INTERRUPT stop that thread alone, so the process lives on (its watchdog times
    out and dumps) while its NET transport moves no byte, as over a stalled link."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PTRACER, ctypes.c_ulong(PR_SET_PTRACER_ANY), 0, 0, 0)  # Yama: any tracer
    tasks = Path("/proc/self/task")
    tids = [t.name for t in tasks.iterdir() if (t / "comm").read_text().startswith(NET_THREADS)]
    argv = [sys.executable, "-m", "tests.hang_plant", "freeze", "--out", str(out),
            "--tids", ",".join(tids), "--timeout", str(seconds)]  # fmt: skip
    subprocess.Popen(argv, cwd=Path(__file__).parents[1])
    time.sleep(1.0)  # stopped before the next collective is issued


def _freeze(ns: argparse.Namespace) -> int:
    """The helper: stop each thread, hold it ``--timeout`` seconds (a tracer that exits
    lets its threads go), and say what it stopped in OUT/freeze.log."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    done = []
    for tid in (int(t) for t in ns.tids.split(",") if t):
        for request in (PTRACE_SEIZE, PTRACE_INTERRUPT):
            if libc.ptrace(request, tid, None, None) != 0:
                done.append(f"{tid}: ptrace {request:#x}: {os.strerror(ctypes.get_errno())}")
                break
        else:
            done.append(f"{tid}: stopped")
    (Path(ns.out) / "freeze.log").write_text("\n".join(done or ["no NCCL network thread"]) + "\n")
    time.sleep(ns.timeout)
    return 0


def nccl_env(out: Path, rank: int, ras_port: int) -> dict[str, str]:
    """What ``hpnet launch --hang-capture OUT`` gives a rank, a fake host per rank
    (NCCL_HOSTID: NCCL then connects every pair through its network transport), and the
    job's own RAS port (NCCL_RAS_ADDR: jobs side by side would share 28028)."""
    from hpnet.launch.hangcapture import capture_env

    given = [e.partition("=") for e in capture_env(str(out), [], {})]
    return {
        **{k: v for k, _, v in given},
        "NCCL_HOSTID": f"plant-host-{rank}",
        "NCCL_NVLS_ENABLE": "0",
        "NCCL_RAS_ADDR": f"127.0.0.1:{ras_port}",
        # NCCL names its threads only when asked (src/debug.cc, NCCL_SET_THREAD_NAME
        # default 0): the net plant finds its network threads by name
        "NCCL_SET_THREAD_NAME": "1",
        "TORCH_NCCL_ENABLE_TIMING": "1",  # Flight Recorder tells started from scheduled
        "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC": "5000",
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(plant: str, world: int, culprit: int, out: Path, *, at: int = 2, steps: int = 4,
        timeout: float = 3.0, pickle: bool = False,
        backend: str = "gloo", ras_port: int = 0) -> list[int]:  # fmt: skip
    """One job; returns each rank's exit status (-19 stopped, -9 killed)."""
    import torch.distributed as dist

    out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    ras_port = ras_port or _free_port()
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
            "--backend",
            backend,
            *(["--pickle"] if pickle else []),
        ]
        rank_env = {**env, **nccl_env(out, r, ras_port)} if backend == "nccl" else env
        procs.append(subprocess.Popen(argv, env=rank_env, stdout=subprocess.DEVNULL,
                                      stderr=logs[r], cwd=Path(__file__).parents[1]))  # fmt: skip
    codes = _wait(procs, plant, timeout * 6 + (60 if backend == "nccl" else 30))
    del store
    for log in logs:
        log.close()
    (out / "plant.json").write_text(
        json.dumps(
            {
                "plant": plant,
                "backend": backend,
                "ras_port": ras_port if backend == "nccl" else None,
                "world": world,
                "culprit": culprit,
                "at": at,
                "steps": steps,
                "answer": ANSWER[plant],
                "exit": codes,
            }
        )
    )
    return codes


def _wait(procs: list[subprocess.Popen[bytes]], plant: str, limit: float) -> list[int]:
    world = len(procs)
    deadline = time.monotonic() + limit
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
    return [c if c is not None else -1 for c in codes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("run", "rank", "freeze"))
    parser.add_argument("--tids", default="", help="freeze: the threads to stop")
    parser.add_argument("--plant", choices=PLANTS + NET_PLANTS, default="none")
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    parser.add_argument("--world", type=int, default=4)
    parser.add_argument("--culprit", type=int, default=1)
    parser.add_argument("--at", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pickle", action="store_true", help="torch's default dump: a pickle")
    parser.add_argument("--ras-port", type=int, default=0, help="NCCL's RAS port (0: a free one)")
    ns = parser.parse_args(argv)
    if ns.mode == "rank":
        return _rank(ns)
    if ns.mode == "freeze":
        return _freeze(ns)
    print(run(ns.plant, ns.world, ns.culprit, Path(ns.out), at=ns.at, steps=ns.steps,
              timeout=ns.timeout, pickle=ns.pickle, backend=ns.backend,
              ras_port=ns.ras_port))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
