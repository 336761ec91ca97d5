"""The bounds and shapes of what a launch request may hold, checked before any plan is
built: every value here ends up in a file name, a batch script, a manifest or a
command line, and one that cannot be written there safely is refused with the flag
and the fix named, never quoted into something else.

* ``--job-name``: a file name under ``--output-dir`` and a ``#SBATCH`` line, so
  letters, digits, ``_``, ``.`` and ``-`` only, starting with a letter or digit (no
  ``/``, no ``..`` path, no line break);
* ports (``--master-port``, ``--ssh-port``, a platform's ``MASTER_PORT``): 1-65535;
* counts (``--nproc-per-node``, ``--nnodes``, hostfile slots): 1 up to
  :data:`MAX_PROCS_PER_NODE` / :data:`MAX_NODES`;
* ``--workdir``, ``--output-dir`` and ``--hostfile``: no NUL byte or line break; one
  that starts with ``-`` is written ``./-...`` where it becomes an operand (``sbatch
  -o/x.sbatch`` would read an option, ``cd -P`` too).
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from hpnet.errors import InputError

if TYPE_CHECKING:
    from hpnet.launch.plan import LaunchRequest

__all__ = [
    "MAX_NODES",
    "MAX_PROCS_PER_NODE",
    "check_count",
    "check_job_name",
    "check_path",
    "check_port",
    "check_request",
    "operand",
    "parse_count",
]

#: nodes in one job: a Slurm node list, a hostfile, --nnodes (the largest clusters
#: have tens of thousands of nodes; a list past this is a mistake or an attack)
MAX_NODES = 65536
#: processes on one node (GPUs, or CPU cores for mpirun's CPU jobs)
MAX_PROCS_PER_NODE = 4096

#: anchored with \Z: "$" also matches before a final line feed ("x\n" would pass)
_JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_DIGITS = re.compile(r"^[0-9]{1,12}\Z")


def check_job_name(name: str, *, where: str = "--job-name") -> str:
    """``name`` if it can be a file name and a ``#SBATCH`` value; InputError otherwise.

    >>> check_job_name("train-2x8.v1")
    'train-2x8.v1'
    >>> check_job_name("../../x")
    Traceback (most recent call last):
    ...
    hpnet.errors.InputError: not a job name: '../../x'
    """
    if _JOB_NAME.match(name):
        return name
    raise InputError(
        f"not a job name: {name!r}",
        code="bad-job-name",
        where=where,
        fix="name the job with letters, digits, '_', '.' and '-' (up to 64, starting with a "
        "letter or digit): it names the generated files and the batch job",
    )


def check_port(port: int, *, where: str) -> int:
    """``port`` if it is a TCP port (1-65535).

    >>> check_port(29500, where="--master-port")
    29500
    """
    if 1 <= port <= 65535:
        return port
    raise InputError(
        f"not a TCP port: {port}",
        code="bad-port",
        where=where,
        fix="give a port from 1 to 65535",
    )


def check_count(count: int, *, where: str, limit: int) -> int:
    """``count`` if it is 1 to ``limit``.

    >>> check_count(8, where="--nproc-per-node", limit=MAX_PROCS_PER_NODE)
    8
    """
    if 1 <= count <= limit:
        return count
    raise InputError(
        f"{count} is out of range (1 to {limit})",
        code="bad-count",
        where=where,
        fix=f"give a number from 1 to {limit}",
    )


def parse_count(text: str, *, where: str, limit: int, minimum: int = 1) -> int:
    """A count written in ASCII digits (``str.isdigit`` also takes ``²``, which ``int``
    refuses), ``minimum`` to ``limit``.

    >>> parse_count("8", where="slots", limit=MAX_PROCS_PER_NODE)
    8
    """
    if _DIGITS.match(text) and minimum <= int(text) <= limit:
        return int(text)
    raise InputError(
        f"not a count from {minimum} to {limit}: {text!r}",
        code="bad-count",
        where=where,
        fix=f"give a number from {minimum} to {limit}",
    )


def check_path(path: str, *, where: str) -> str:
    """``path`` if a file system and a remote shell can both take it as one word."""
    if "\0" in path or "\n" in path or "\r" in path:
        raise InputError(
            f"the path holds a NUL byte or a line break: {path!r}",
            code="bad-path",
            where=where,
            fix="give a path without control characters",
        )
    if not _utf8(path):
        raise InputError(
            f"the path is not UTF-8 text: {path!r}",
            code="bad-path",
            where=where,
            fix="give a path in UTF-8: it is written into scripts and manifests",
        )
    return path


def _utf8(text: str) -> bool:
    """Whether ``text`` is text: bytes that were not UTF-8 reach Python as lone
    surrogates (PEP 383), which no script, manifest or terminal can take."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def operand(path: str) -> str:
    """``path`` as a command's operand: ``./`` in front of a leading ``-``, which a
    program would read as an option (the same file or directory).

    >>> operand("-P"), operand("out"), operand("/abs")
    ('./-P', 'out', '/abs')
    """
    return f"./{path}" if path.startswith("-") else path


def check_request(request: LaunchRequest, *, num_nodes: int | None = None) -> LaunchRequest:
    """Every bound above, for one request (``num_nodes``: ``--nnodes``), with the flag
    that gave the value named; the host names were checked when they were read.
    Returns the request with its paths made operands (:func:`operand`)."""
    from hpnet.launch.hosts import check_host  # noqa: PLC0415 - hosts imports this module

    check_job_name(request.job_name)
    if request.master_port is not None:
        check_port(request.master_port, where=f"--master-port {request.master_port}")
    if request.ssh_port is not None:
        check_port(request.ssh_port, where=f"--ssh-port {request.ssh_port}")
    if request.nproc_per_node is not None:
        check_count(
            request.nproc_per_node,
            where=f"--nproc-per-node {request.nproc_per_node}",
            limit=MAX_PROCS_PER_NODE,
        )
    if num_nodes is not None:
        check_count(num_nodes, where=f"--nnodes {num_nodes}", limit=MAX_NODES)
    if request.master_addr is not None:
        check_host(request.master_addr, where="--master-addr")
    check_path(request.workdir, where="--workdir")
    check_path(request.output_dir, where="--output-dir")
    for word in request.command:
        if "\0" in word:
            raise InputError(
                "a word of the command holds a NUL byte",
                code="bad-command",
                where="the command after --",
                fix="no command line can carry a NUL byte: remove it",
            )
        if not _utf8(word):
            raise InputError(
                f"a word of the command is not UTF-8 text: {word!r}",
                code="bad-command",
                where="the command after --",
                fix="write the command in UTF-8: it is written into scripts and manifests",
            )
    if request.hostfile_path is not None:
        check_path(request.hostfile_path, where="--hostfile")
    flags = {"--image": request.image, "--namespace": request.namespace,
             "--shm-size": request.shm_size, "--iface": request.iface,
             "--profile": request.profile,
             **{f"--resource {k}": f"{k}={v}" for k, v in request.resources}}  # fmt: skip
    for flag, text in flags.items():
        if text is not None and ("\0" in text or not _utf8(text)):
            raise InputError(
                f"not UTF-8 text: {text!r}",
                code="usage",
                where=flag,
                fix="give the value in UTF-8: it is written into manifests and printed",
            )
    return dataclasses.replace(
        request,
        output_dir=operand(request.output_dir),
        hostfile_path=None if request.hostfile_path is None else operand(request.hostfile_path),
    )
