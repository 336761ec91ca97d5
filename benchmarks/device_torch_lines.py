"""Real watchdog lines of two NCCL ranks that part, for the rule that compares them.

    python benchmarks/device_torch_lines.py OUT [SCENARIO ...]

Two processes on GPU 0, each a fake host (``NCCL_HOSTID``: NCCL's network transport
between them), an all_reduce that completes, then a parting; torch's watchdog times out
after 20 s, Flight Recorder on (its stack of the failed collective is printed). Each
rank's stderr goes to OUT/<scenario>/r<rank>.stderr, then ``hpnet hang`` and ``hpnet
verify`` read them (OUT/<scenario>/hang.txt, verify.txt).

p2p-batch-vs-allreduce  rank 0 sends and receives in one batch (``batch_isend_irecv``: a
                        COALESCED work whose size torch never sets, numbered with the
                        sends and receives), rank 1 calls all_reduce: the numbers are of
                        two counters, not one collective
coalesced-sizes         both call all_gather_into_tensor in a coalescing manager (a
                        COALESCED work whose NumelIn is its first input's size), rank 1
                        with twice the elements. On the lent H200 (torch 2.11, NCCL
                        2.28.9) rank 0 completed its part and exited, and rank 1 saw its
                        peer gone (ncclRemoteError): no COALESCED timeout to read

The first is recorded as tests/data/hang/nccl-torch2.11-w2-p2p-batch-vs-allreduce-r0/:
rank 0 blocks in creating the pair's communicator for its first send, its only line
its group's status when the dump signal came (results/torch-lines-h200-2026-11-28/).
"""

from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
from pathlib import Path

SCENARIOS = ("p2p-batch-vs-allreduce", "coalesced-sizes")


def rank_main(rank: int, scenario: str, port: int) -> None:
    import torch
    import torch.distributed as dist

    device = torch.device("cuda:0")
    torch.cuda.set_device(device)
    dist.init_process_group(
        "nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
        timeout=datetime.timedelta(seconds=20), device_id=device,
    )  # fmt: skip
    x = torch.ones(1024, device=device)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    if scenario == "p2p-batch-vs-allreduce":
        if rank == 0:
            y = torch.empty(1024, device=device)
            ops = [dist.P2POp(dist.isend, x, 1), dist.P2POp(dist.irecv, y, 1)]
            for request in dist.batch_isend_irecv(ops):
                request.wait()
        else:
            dist.all_reduce(x)
    elif scenario == "coalesced-sizes":
        n = 1024 * (rank + 1)
        given, gathered = torch.ones(n, device=device), torch.empty(2 * n, device=device)
        with dist._coalescing_manager(device=device):
            dist.all_gather_into_tensor(gathered, given)
    torch.cuda.synchronize()
    dist.destroy_process_group()


def main() -> int:
    if sys.argv[1] == "rank":
        rank_main(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
        return 0
    out = Path(sys.argv[1])
    for scenario in sys.argv[2:] or SCENARIOS:
        where = out / scenario
        where.mkdir(parents=True, exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for rank in range(2):
            env = {
                **os.environ, "NCCL_HOSTID": f"fake-host-{rank}", "NCCL_NVLS_ENABLE": "0",
                "TORCH_FR_BUFFER_SIZE": "2000", "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000",
                "NCCL_DEBUG": "WARN", "PYTHONWARNINGS": "ignore",
            }  # fmt: skip
            with (where / f"r{rank}.stderr").open("wb") as log:
                procs.append(subprocess.Popen(
                    [sys.executable, __file__, "rank", str(rank), scenario, str(port)],
                    env=env, stdout=subprocess.DEVNULL, stderr=log,
                ))  # fmt: skip
        for proc in procs:
            try:
                proc.wait(timeout=150)
            except subprocess.TimeoutExpired:
                proc.kill()
        codes = [p.returncode for p in procs]
        for command in ("hang", "verify"):
            done = subprocess.run(
                [sys.executable, "-m", "hpnet", command, *sorted(map(str, where.glob("*.stderr")))],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            (where / f"{command}.txt").write_text(
                done.stdout + done.stderr + f"rc={done.returncode}\n"
            )
        print(scenario, "exit codes", codes, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
