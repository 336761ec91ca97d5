"""The job's folder: where the ranks of one job keep their files (a temporary
directory, or with ``--logs DIR`` the job's own directory in DIR, named after its
rendezvous), rank 0's ``result.json`` in it; and the one way a directory hpnet was told
to write into fails (:func:`as_unwritable`: ``error[unwritable]`` naming the flag,
never a traceback)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from hpnet.errors import InputError

__all__ = [
    "LOGS_FIX",
    "RESULT",
    "as_unwritable",
    "job_directory",
    "job_name",
    "read_result",
    "write_result",
]

#: what rank 0's worker leaves in the job's folder for rank 0's hpnet to read
RESULT = "result.json"
#: what to do when ``--logs DIR`` cannot be written
LOGS_FIX = "--logs a directory you own"


@contextlib.contextmanager
def as_unwritable(what: str, *, where: str, fix: str, after: str = "") -> Iterator[None]:
    """An OSError in the block (making a directory, writing a file in it) raised as
    InputError ``unwritable``: ``what``, the system's reason, then ``after``.

    >>> with tempfile.NamedTemporaryFile() as plain:  # a file where a folder should be
    ...     with as_unwritable("cannot keep the files there", where="--logs", fix=LOGS_FIX):
    ...         os.makedirs(os.path.join(plain.name, "logs"))
    Traceback (most recent call last):
    hpnet.errors.InputError: cannot keep the files there: Not a directory
    """
    try:
        yield
    except OSError as exc:
        raise InputError(
            f"{what}: {exc.strerror or exc}{after}", code="unwritable", where=where, fix=fix
        ) from None


def job_directory(keep_dir: str | None, ranks: Mapping[str, str], kind: str = "check-all") -> str:
    """Where this job's ranks keep their files: a new temporary directory, or with
    ``--logs DIR`` the job's own directory in DIR (:func:`job_name`), made if need be.
    ``kind`` names the command (``check-all``, ``isolate``)."""
    if keep_dir is None:
        return tempfile.mkdtemp(prefix=f"hpnet-{kind}-")
    out = os.path.join(keep_dir, job_name(ranks, kind))
    with as_unwritable("cannot keep the job's files there", where=f"--logs {keep_dir}",
                       fix=LOGS_FIX):  # fmt: skip
        os.makedirs(out, exist_ok=True)
    return out


def job_name(ranks: Mapping[str, str], kind: str = "check-all") -> str:
    """The name of a job's directory: after its rendezvous, which every rank of the job
    knows and no other job running at the same time has.

    >>> job_name({"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"})
    'check-all-10.0.0.1-29500'
    >>> job_name({"MASTER_ADDR": "fe80::1%eth0", "MASTER_PORT": "29500"})
    'check-all-fe80_1_eth0-29500'
    """
    return f"{kind}-" + re.sub(
        r"[^A-Za-z0-9_.-]+", "_", f"{ranks['MASTER_ADDR']}-{ranks['MASTER_PORT']}"
    )


def write_result(out: str, data: Mapping[str, Any]) -> None:
    """Rank 0's worker: the job's result into its folder, replaced in one step (a
    reader never sees half of it; a symlink planted there is replaced, never followed:
    :func:`hpnet.outputfile.write_file`)."""
    from hpnet.outputfile import write_file  # noqa: PLC0415

    write_file(os.path.join(out, RESULT), json.dumps(data))


def read_result(out: str) -> dict[str, Any]:
    """Rank 0: what its worker left in the job's folder (:func:`write_result`)."""
    with open(os.path.join(out, RESULT)) as handle:
        result: dict[str, Any] = json.load(handle)
    return result
