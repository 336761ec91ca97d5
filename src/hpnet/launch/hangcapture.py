"""``hpnet launch --hang-capture DIR``: run a job so that a hang leaves its evidence in
DIR, and read it (``hpnet hang``) when the job fails.

What every rank gets (torch's names, each older one too: ``TORCH_NCCL_DUMP_ON_TIMEOUT``
and ``TORCH_NCCL_TRACE_BUFFER_SIZE`` are read by ProcessGroupNCCL.cpp, v2.4.0 lines 786
and 796, tests/data/hang/WATCHDOG-FORMATS.md section 11; ``TORCH_FR_BUFFER_SIZE``,
``TORCH_FR_DUMP_TEMP_FILE`` and ``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` are all named in torch
2.13.0's libtorch_cpu.so, its Flight Recorder):

* ``TORCH_FR_BUFFER_SIZE`` / ``TORCH_NCCL_TRACE_BUFFER_SIZE`` = 2000: Flight Recorder
  keeps the last 2000 collectives of each rank (0, the default, records nothing);
* ``TORCH_NCCL_DUMP_ON_TIMEOUT=1``: on a watchdog timeout every rank writes its record;
* ``TORCH_FR_DUMP_TEMP_FILE`` / ``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` = DIR/nccl_trace_rank_:
  where (torch appends the rank);
* ``NCCL_DEBUG=INFO`` and ``NCCL_DEBUG_FILE=DIR/nccl.%h.%p.log`` (NCCL expands host and
  pid): which NICs and transports each rank used, its WARNs — unless the caller set them.

A value the caller gives with ``--env`` wins. DIR must be a path every node can write
and this one can read (a shared filesystem) for the other nodes' files to be read here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from hpnet.cluster.folder import as_unwritable
from hpnet.errors import InputError

__all__ = ["capture_dir", "capture_env", "diagnose"]

#: collectives each rank's Flight Recorder keeps
BUFFER = 2000


def capture_dir(path: str) -> str:
    """DIR as an absolute path, made if need be (ranks on other nodes get it as given)."""
    full = os.path.abspath(path)
    with as_unwritable(
        "cannot make the capture directory",
        where=f"--hang-capture {path}",
        fix="--hang-capture a directory you can write, on a filesystem every node shares",
    ):
        os.makedirs(full, exist_ok=True)
    return full


def capture_env(directory: str, given: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    """The ``K=V`` entries to add to ``--env``: none a ``--env`` entry or (for NCCL's
    debug variables) the caller's environment already sets.

    >>> capture_env("/shared/job", ["NCCL_DEBUG=WARN"], {})[:2]
    ['TORCH_FR_BUFFER_SIZE=2000', 'TORCH_NCCL_TRACE_BUFFER_SIZE=2000']
    >>> [e for e in capture_env("/shared/job", ["NCCL_DEBUG=WARN"], {}) if e.startswith("NCCL_")]
    ['NCCL_DEBUG_FILE=/shared/job/nccl.%h.%p.log']
    """
    prefix = os.path.join(directory, "nccl_trace_rank_")
    wanted = {
        "TORCH_FR_BUFFER_SIZE": str(BUFFER),
        "TORCH_NCCL_TRACE_BUFFER_SIZE": str(BUFFER),
        "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
        "TORCH_FR_DUMP_TEMP_FILE": prefix,
        "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix,
        "NCCL_DEBUG": "INFO",
        "NCCL_DEBUG_FILE": os.path.join(directory, "nccl.%h.%p.log"),
    }
    named = {entry.partition("=")[0] for entry in given}
    caller = {"NCCL_DEBUG", "NCCL_DEBUG_FILE"} & set(environ)
    return [f"{k}={v}" for k, v in wanted.items() if k not in named and k not in caller]


def diagnose(paths: Sequence[str]) -> str | None:
    """``hpnet hang``'s text on what the job left, or None where it left nothing."""
    from hpnet.hang.collect import collect  # noqa: PLC0415
    from hpnet.hang.render import render_hang  # noqa: PLC0415
    from hpnet.hang.verdict import judge_evidence  # noqa: PLC0415

    try:
        evidence = collect([p for p in paths if os.path.isdir(p)])
    except InputError:
        return None
    report = judge_evidence(evidence)
    return render_hang(report)
