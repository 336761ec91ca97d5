"""One rank of ``hpnet bench train``: a synthetic GPT-style model under DDP.

    python -m hpnet.bench.train_worker SPEC.json RESULT.json

RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT come as for
:mod:`hpnet.bench.worker`. Each timed step ends with a device synchronisation and
is timed on the host; rank 0 gathers every rank's step times and writes them with the
losses and the replica check (hpnet.bench.train.summarise turns them into the report).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Mapping
from typing import Any

from hpnet.bench.backends import init_method
from hpnet.bench.worker import PROGRESS, write_json


def _model(torch: Any, spec: dict[str, Any]) -> Any:
    nn = torch.nn
    h = spec["hidden"]

    class GPT(nn.Module):  # type: ignore[misc,name-defined]  # torch is not followed
        """Token + position embedding, pre-norm encoder blocks with a causal mask, a
        final LayerNorm and an output layer tied to the embedding: 12h^2 + 13h weights
        per block (hpnet.bench.train.TrainSpec.parameters counts them)."""

        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(spec["vocab"], h)
            self.positions = nn.Embedding(spec["seq_len"], h)
            block = nn.TransformerEncoderLayer(
                d_model=h,
                nhead=spec["heads"],
                dim_feedforward=4 * h,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            self.blocks = nn.TransformerEncoder(
                block, num_layers=spec["layers"], enable_nested_tensor=False
            )
            self.norm = nn.LayerNorm(h)
            # GPT-2's initialisation: with nn.Embedding's N(0, 1) the tied output layer
            # starts with logits in the tens and a loss far above log(vocab)
            nn.init.normal_(self.tokens.weight, std=0.02)
            nn.init.normal_(self.positions.weight, std=0.02)
            mask = torch.nn.Transformer.generate_square_subsequent_mask(spec["seq_len"])
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x: Any) -> Any:
            positions = torch.arange(x.shape[1], device=x.device)
            hidden = self.tokens(x) + self.positions(positions)
            hidden = self.blocks(hidden, mask=self.mask, is_causal=True)
            return self.norm(hidden) @ self.tokens.weight.t()

    return GPT()


def run(spec: dict[str, Any], ranks: Mapping[str, str]) -> dict[str, Any] | None:
    warnings.filterwarnings("ignore", message=".*NumPy.*")
    import torch  # noqa: PLC0415 - only ranks import torch
    import torch.distributed as dist  # noqa: PLC0415
    from torch.nn import functional  # noqa: PLC0415
    from torch.nn.parallel import DistributedDataParallel  # noqa: PLC0415

    rank, world = int(ranks["RANK"]), int(ranks["WORLD_SIZE"])
    local = int(ranks.get("LOCAL_RANK", rank))
    where = init_method(ranks)
    cuda = spec["device"] == "cuda"
    if cuda:
        device = torch.device("cuda", local % torch.cuda.device_count())
        torch.cuda.set_device(device)
        dist.init_process_group(
            "nccl", init_method=where, rank=rank, world_size=world, device_id=device
        )
        control = dist.new_group(backend="gloo")
    else:
        device = torch.device("cpu")
        local_world = int(ranks.get("LOCAL_WORLD_SIZE", world))
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(local_world, 1)))
        dist.init_process_group("gloo", init_method=where, rank=rank, world_size=world)
        control = None
    torch.manual_seed(1234)  # the same initial weights everywhere (DDP broadcasts anyway)
    model = _model(torch, spec).to(device)
    parameters = sum(p.numel() for p in model.parameters())
    ddp = DistributedDataParallel(model, device_ids=[device.index] if cuda else None)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    generator = torch.Generator(device=device).manual_seed(rank)  # each rank its own data
    batch, seq, vocab = spec["batch"], spec["seq_len"], spec["vocab"]
    tokens = torch.randint(vocab, (batch, seq + 1), device=device, generator=generator)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    autocast = (
        torch.autocast("cuda", dtype=getattr(torch, spec["dtype"]))
        if cuda
        else contextlib.nullcontext()
    )

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    def step(synced: bool) -> float:
        with contextlib.nullcontext() if synced else ddp.no_sync():
            with autocast:
                logits = ddp(inputs)
                loss = functional.cross_entropy(
                    logits.float().reshape(-1, vocab), targets.reshape(-1)
                )
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return float(loss.detach())

    losses = []
    times = []
    total = spec["warmup"] + spec["steps"] * (2 if spec["measure_comm"] else 1)
    done = 0
    for index in range(spec["warmup"] + spec["steps"]):
        sync()
        start = time.perf_counter()
        losses.append(step(synced=True))  # float(): waits for the loss, then sync
        sync()
        if index >= spec["warmup"]:
            times.append(time.perf_counter() - start)
        done += 1
        if rank == 0 and done % 5 == 0:
            print(f"{PROGRESS} train step {done}/{total}", file=sys.stderr, flush=True)
    in_sync = _replicas_in_sync(torch, dist, model, control)
    no_sync_times = []
    if spec["measure_comm"]:
        for _ in range(spec["steps"]):
            sync()
            start = time.perf_counter()
            step(synced=False)
            sync()
            no_sync_times.append(time.perf_counter() - start)
            done += 1
            if rank == 0 and done % 5 == 0:
                print(f"{PROGRESS} train step {done}/{total}", file=sys.stderr, flush=True)
    steps = _gather(torch, dist, times, world, control)
    no_sync = _gather(torch, dist, no_sync_times, world, control) if no_sync_times else []
    meta = None
    if rank == 0:
        meta = {
            "backend": "torch-nccl" if cuda else "gloo",
            "device": "cuda" if cuda else "cpu",
            "torch": torch.__version__,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else None,
            "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            if cuda
            else [],
        }
    hosts = _gather_hosts(torch, dist, control, world)
    # DDP's reducer holds the process group: drop it first, or the group outlives
    # destroy_process_group and its threads abort the interpreter at exit
    # ("terminate called without an active exception")
    ddp = optimizer = model = None
    import gc  # noqa: PLC0415

    gc.collect()
    dist.barrier(group=control)
    dist.destroy_process_group()
    if rank != 0:
        return None
    assert meta is not None  # noqa: S101 - rank 0 built it above
    meta["hosts"] = sorted(set(hosts))
    return {
        "nranks": world,
        "parameters": parameters,
        "steps": steps,
        "no_sync_steps": no_sync,
        "first_loss": losses[0],
        "last_loss": losses[-1],
        "replicas_in_sync": in_sync,
        "metadata": meta,
    }


def _gather(
    torch: Any, dist: Any, values: list[float], world: int, group: Any
) -> list[list[float]]:
    """Per step, every rank's value (plain tensors: the *_object calls need numpy)."""
    mine = torch.tensor(values, dtype=torch.float64)
    parts = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(parts, mine, group=group)
    by_rank = [p.tolist() for p in parts]
    return [list(step) for step in zip(*by_rank, strict=True)]


def _gather_hosts(torch: Any, dist: Any, group: Any, world: int) -> list[str]:
    name = os.uname().nodename.encode()[:255]
    mine = torch.zeros(256, dtype=torch.uint8)
    mine[: len(name)] = torch.tensor(list(name), dtype=torch.uint8)
    parts = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(parts, mine, group=group)
    return [bytes(p.tolist()).split(b"\0", 1)[0].decode("utf-8", "replace") for p in parts]


def _replicas_in_sync(torch: Any, dist: Any, model: Any, group: Any) -> bool:
    """Whether every rank holds the same weights: DDP's promise after synced steps.
    Compares a float64 checksum of all weights by its max and min over the ranks."""
    with torch.no_grad():
        total = sum(p.detach().double().sum() for p in model.parameters())
        checksum = torch.tensor([float(total), -float(total)], dtype=torch.float64)
    dist.all_reduce(checksum, op=dist.ReduceOp.MAX, group=group)
    return bool(abs(checksum[0] + checksum[1]) <= 1e-9 * max(1.0, abs(float(checksum[0]))))


def main(argv: list[str]) -> int:
    with open(argv[1]) as handle:
        spec = json.load(handle)
    result = run(spec, os.environ)
    if result is not None:
        write_json(argv[2], {**result, "complete": True})
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
