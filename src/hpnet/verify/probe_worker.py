"""One rank of ``hpnet verify --run``: init NCCL, all_reduce a few times, check, exit.

Run as ``python -m hpnet.verify.probe_worker SIZE_BYTES`` with RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT set. Exit 0 only if every all_reduce gave
the right sum. Imports torch, so only worker processes load it.
"""

from __future__ import annotations

import os
import sys

ITERATIONS = 5


def main(argv: list[str]) -> int:
    import torch  # noqa: PLC0415 - the worker is the only place torch is loaded
    import torch.distributed as dist  # noqa: PLC0415

    size_bytes = int(argv[1]) if len(argv) > 1 else 64 << 20
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    device = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device)
    numel = max(1, size_bytes // 4)
    data = torch.full((numel,), float(rank + 1), device=device)
    expected = world * (world + 1) / 2
    ok = True
    for step in range(ITERATIONS):
        data.fill_(float(rank + 1))
        dist.all_reduce(data)
        torch.cuda.synchronize()
        if not bool(torch.all(data == expected)):
            print(f"hpnet probe: rank {rank} step {step}: wrong sum", file=sys.stderr)
            ok = False
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
