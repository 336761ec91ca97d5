"""``hpnet isolate`` in one rank of a launcher's job: gather the node's facts, run the
rounds in a child process (:mod:`hpnet.isolate.worker`) under ``NCCL_DEBUG=INFO``, and
on rank 0 read the result back.

The child gets the rank's environment without its secrets
(:func:`hpnet.localrun.inheritable_env`). Files: a temporary directory, or with
``--logs DIR`` the job's own directory ``DIR/isolate-<rendezvous address>-<port>``
(every rank of one job names the same one, no other job at the same time can):
``nccl.rank<R>.log``, ``round<N>/rank<R>.log`` (what each round logged), ``result.json``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from hpnet.errors import HpnetError, InputError
from hpnet.isolate.drain import scheduler_of
from hpnet.isolate.facts import PER_NODE, node_facts

__all__ = ["IsolateOptions", "run_isolate"]

TIMEOUT_SECONDS = 1800.0


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class IsolateOptions:
    device: str = "auto"  # auto, cuda, cpu
    bytes: int | None = None  # per all_reduce; None: 64 MiB on GPUs, 1 MiB on CPUs
    iters: int = 20
    baseline: Mapping[str, Any] | None = None  # an earlier run's --json
    groups: Mapping[str, str] | None = None  # node -> rack / leaf switch
    keep_dir: str | None = None
    seed: int = 0


def _device(requested: str) -> str:
    if requested != "auto":
        return requested
    from hpnet.bench.run import local_defaults  # noqa: PLC0415

    return local_defaults(None, "auto")[1]


def node_name(environ: Mapping[str, str]) -> str:
    """What NCCL takes for the node: NCCL_HOSTID (fake hosts) or the host name."""
    from hpnet.check.cluster import node_id  # noqa: PLC0415

    return node_id(environ)


def job_directory(keep_dir: str | None, ranks: Mapping[str, str]) -> str:
    from hpnet.check.cluster import job_name  # noqa: PLC0415

    if keep_dir is None:
        return tempfile.mkdtemp(prefix="hpnet-isolate-")
    out = os.path.join(keep_dir, job_name(ranks).replace("check-all-", "isolate-", 1))
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot keep the job's files there: {exc.strerror or exc}",
            code="unwritable",
            where=f"--logs {keep_dir}",
            fix="--logs a directory you own",
        ) from None
    return out


def run_isolate(
    options: IsolateOptions, environ: Mapping[str, str], ranks: Mapping[str, str]
) -> dict[str, Any] | None:
    """This rank's part; rank 0 returns the job's result (the worker's result.json),
    the other ranks None."""
    from hpnet.detect import DetectOptions, detect  # noqa: PLC0415
    from hpnet.localrun import RankResult, describe_exit, inheritable_env  # noqa: PLC0415

    device = _device(options.device)
    local_rank = int(ranks.get("LOCAL_RANK", "0"))
    # every rank sends its facts (fake hosts share a machine but not local rank 0);
    # rank 0 keeps each node's first rank's
    inventory = detect(DetectOptions(gpus=device != "cpu"), env=dict(environ), python_path=sys.path)
    facts = node_facts(inventory, environ)
    spec = {
        "node": node_name(environ),
        "rail": local_rank,
        "facts": facts,
        "device": device,
        "bytes": options.bytes or (64 << 20 if device == "cuda" else 1 << 20),
        "iters": options.iters,
        "baseline": options.baseline,
        "groups": options.groups,
        "seed": options.seed,
        "per_node_keys": sorted(PER_NODE),
        "scheduler": scheduler_of(environ),
    }
    out = job_directory(options.keep_dir, ranks)
    spec_path = os.path.join(out, f"spec.rank{ranks['RANK']}.json")
    with open(spec_path, "w") as handle:
        json.dump(spec, handle)
    if ranks["RANK"] == "0":
        # a result left by an earlier job in --logs must not be read as this one's
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(out, "result.json"))
    child = {
        **inheritable_env(environ),
        **ranks,
        "NCCL_DEBUG": "INFO",
        "NCCL_DEBUG_SUBSYS": "INIT,NET,ENV",
        "NCCL_DEBUG_FILE": os.path.join(out, f"nccl.rank{ranks['RANK']}.log"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "hpnet.isolate.worker", spec_path, out],
        env=child,
        stdout=subprocess.PIPE,
        stderr=None if ranks["RANK"] == "0" else subprocess.PIPE,  # rank 0's progress shows
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    if done.returncode != 0:
        tail = ((done.stderr or "") + (done.stdout or "")).strip().splitlines()[-1:] or [""]
        how = describe_exit(
            RankResult(rank=int(ranks["RANK"]), returncode=done.returncode, log_path=out)
        )
        raise HpnetError(
            f"rank {ranks['RANK']}'s rounds {how}: {tail[0][:300]}",
            code="check-failed",
            where=out,
            fix="rerun with --logs DIR and read the NCCL logs there (nccl.rank<R>.log)",
        )
    if ranks["RANK"] != "0":
        return None
    with open(os.path.join(out, "result.json")) as handle:
        result: dict[str, Any] = json.load(handle)
    result["files"] = out
    return result
