"""A rank of a job that hangs, for ``hpnet launch --hang-capture`` (torchrun, gloo): rank 1
stops before the second all_reduce. gloo has no watchdog that dumps on a timeout, so
each rank writes its Flight Recorder where torch's NCCL watchdog would
(``TORCH_FR_DUMP_TEMP_FILE`` + rank): ranks 0.. on their timeout, rank 1 once the others
have timed out (as torch's dump signal reaches every rank)."""

from __future__ import annotations

import datetime
import os
import sys
import time

TIMEOUT_S = 3


def dump(rank: int) -> None:
    import torch  # here, not at import: the suite's doctest collection imports this file

    data = torch._C._distributed_c10d._dump_fr_trace_json(True, True)
    path = os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(rank)
    with open(path, "wb") as handle:
        handle.write(data if isinstance(data, bytes) else data.encode())


def main() -> int:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=TIMEOUT_S))
    rank = dist.get_rank()
    x = torch.ones(8)
    dist.all_reduce(x)
    if rank == 1:  # stuck in its own work past the others' timeout
        time.sleep(TIMEOUT_S + 1)
        dump(rank)
        return 0
    try:
        dist.all_reduce(x)
    except RuntimeError as exc:
        print(f"[rank{rank}]: RuntimeError: {exc}", file=sys.stderr, flush=True)
        dump(rank)
        time.sleep(TIMEOUT_S)  # let rank 1 answer the dump before the job ends
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
