"""A torchrun job whose rank 1 ends itself by a signal after one all_reduce, while rank
0 waits in the next (issue 27's plants, under torchrun): what torchrun prints of a rank
that died (its "failed (exitcode: ...)" line and ChildFailedError table) is recorded
for `hpnet hang`.

    NCCL_NVLS_ENABLE=0 python3 -m torch.distributed.run --nproc_per_node 2 \
        benchmarks/torchrun_exit.py --die-by KILL

Each rank is a fake host (NCCL_HOSTID) so that two ranks may share one GPU.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import time

import torch
import torch.distributed as dist


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--die-by", default="KILL", help="the signal: KILL, SEGV, ABRT, BUS")
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    os.environ["NCCL_HOSTID"] = f"fakehost{rank}"
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(0)
    dist.init_process_group(
        "nccl", timeout=datetime.timedelta(seconds=args.timeout), device_id=torch.device("cuda:0")
    )
    x = torch.ones(1024, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"rank {rank} pid {os.getpid()}: all_reduce #1 done", flush=True)
    if rank == 1:
        time.sleep(1)
        os.kill(os.getpid(), getattr(signal, f"SIG{args.die_by}"))
    dist.all_reduce(x)
    torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
