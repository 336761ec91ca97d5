"""What the prefix of an NCCL log line says: host, pid, device, launcher rank, place.

The patterns of ``[launcher tags] [timestamp] host:pid:tid [cudaDev] [file.cc:123]``
before ``NCCL INFO`` / ``NCCL WARN`` (NCCL ``src/debug.cc``), the launcher rank a tag
names (:func:`launcher_rank`) and the ``file.cc:123`` that ends a prefix with no host
(:func:`where_of`). :class:`hpnet.ncclog.lines.Classifier` reads prefixes with them
and caches what each says.
"""

from __future__ import annotations

import re

__all__ = [
    "HOSTNAME",
    "LAUNCHER_ONLY",
    "MARKDOWN_LINK",
    "PREFIX",
    "TIMESTAMP",
    "launcher_rank",
    "unlink",
    "where_of",
]

#: ``host:pid:tid [dev]`` and, on WARN lines, `` file.cc:line`` (searched from the end
#: of the text before ``NCCL INFO``/``NCCL WARN``). 2.30.7 adds the function, ``file.cc:123
#: (func)`` ("[%d] %s:%d (%s) NCCL WARN %s\n", debug.cc:345 @2.30.7); aws-ofi-nccl passes
#: ``__PRETTY_FUNCTION__`` as the file, spaces and parentheses included (``int
#: nccl_net_ofi_rdma_connect(...):123``, include/nccl_ofi_log.h @v1.21.1)
PREFIX = re.compile(
    # the host starts a run of host characters (the look-behind): tried from inside a
    # run too, a 200 kB run without a ':' took as many scans of it as it has characters
    r"(?<![^\s:\[\]])(?P<host>[^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>-?\d+)\]"
    r"(?: (?P<where>[^\s\[\]](?:[^\[\]]*?[^\s\[\]])?:\d+)(?: \((?P<func>[^()\s]*)\))?)?\s*$"
)
#: a WARN's ``file.cc:123`` (or a plugin's function) where no host prefix stands before it:
#: what ``(?:^|\s)([^\s\[\]](?:[^\[\]]*?[^\s\[\]])?:\d+)\s*$`` finds, in two linear steps
#: (that pattern scanned to the end of the text from every space: minutes on a long line)
_WHERE_END = re.compile(r"(?<=[^\s\[\]]):(\d+)\s*$")
_WHERE_START = re.compile(r"(?<!\S)[^\s\[\]]")
#: timestamps that log collectors glue in front of the host (CloudWatch, kubectl
#: --timestamps, NCCL 2.26+'s ``[2026-11-21 23:50:29]``), removed before the host is read
TIMESTAMP = re.compile(r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?")
_OMPI_TAG = re.compile(r"\[\d+,(\d+)\]<std(?:out|err)>:")
#: torchrun ``[rank3]:`` / ``[default3]:``, TorchX ``[trainer3]:`` / ``[trainer0|3]:``;
#: of tags stacked by launchers that wrap each other's output (``[rank0]:[rank4]:``) the
#: innermost, the process's own
_TORCHRUN_TAG = re.compile(
    r"(?:^|\s)(?:\[[A-Za-z_]*?\d+(?:\|\d+)?\]:)*\[[A-Za-z_]*?(\d+)(?:\|\d+)?\]:"
)
_SRUN_TAG = re.compile(r"^\s*(\d+): ")
_BRACKET_RANK = re.compile(r"^\[(\d+)\] ")


#: what NCCL can print as a host: gethostname() cut at the first '.' (getHostName,
#: misc/utils.cc), with '%' and '/' made '-' from 2.29.2 (debug.cc:51 @2.29.2)
HOSTNAME = re.compile(r"[A-Za-z0-9_-]+")
#: text before the host that is a launcher's tags and nothing else (Open MPI's, srun's,
#: torchrun's, Ray's, a log forwarder's); ``>`` quotes a line in
#: Markdown and e-mail (an issue's pasted log): the host after it is the line's own, not
#: program output glued to it
LAUNCHER_ONLY = re.compile(
    r"\s*(?:(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: |\[[A-Za-z_]*\d+(?:\|\d+)?\]:|\[\d+\] |>"
    # Ray's worker prefix: "(pid=2918546) ", "(RayWorkerWrapper pid=7602, ip=10.0.0.2) ";
    # Azure ML's log forwarder: "[<pod>, <ip or unknown_ip>] " (its time taken off before)
    r"|\((?:[\w.-]+,? )?(?:rank=\d+, )?pid=\d+(?:, ip=[\d.]+)?\)"
    r"|\[[\w.-]+, (?:unknown_ip|[\d.]+|[0-9a-fA-F:]+)\])\s*)*"
)
#: a link GitHub's Markdown made of a word that looks like a domain (``net_ib.cc:101``
#: -> ``[net_ib.cc:101](http://net_ib.cc:101/)``) in a pasted log: the word is what NCCL
#: printed (:func:`unlink`)
MARKDOWN_LINK = re.compile(r"\[([^\[\]\s]+)\]\(https?://[^()\s]*\)")


def unlink(text: str) -> str:
    """The text NCCL printed, without the links a Markdown renderer made of it.

    >>> unlink("n1:7:9 [0] transport/[net_ib.cc:101](http://net_ib.cc:101/) ")
    'n1:7:9 [0] transport/net_ib.cc:101 '
    """
    return MARKDOWN_LINK.sub(r"\1", text) if "](http" in text else text


def launcher_rank(tags: str) -> int | None:
    for pattern in (_OMPI_TAG, _TORCHRUN_TAG, _SRUN_TAG, _BRACKET_RANK):
        found = pattern.search(tags)
        if found:
            return int(found.group(1))
    return None


def where_of(text: str) -> str | None:
    """The ``file.cc:123`` that ends ``text``: from the first word after the last bracket
    before it (a plugin's function name holds spaces) to its line number.

    >>> where_of("ts=1 net.cc:93"), where_of("[x] int f(int a):12  "), where_of("no place")
    ('ts=1 net.cc:93', 'int f(int a):12', None)
    """
    end = _WHERE_END.search(text)
    if end is None:
        return None
    colon = end.start()
    after_bracket = max(text.rfind("[", 0, colon), text.rfind("]", 0, colon)) + 1
    start = _WHERE_START.search(text, after_bracket, colon)
    return text[start.start() : end.end(1)] if start else None
