"""The files of a stuck job: every Flight Recorder dump and every rank's text log under
the paths given (files or folders, walked recursively; links and special files are
skipped, never followed or opened)."""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from hpnet.artefacts.model import RasReport
from hpnet.artefacts.scan import read_artefacts
from hpnet.errors import InputError
from hpnet.hang.analyzer import Analysis, read_analysis
from hpnet.hang.desync import DesyncReport, read_desync
from hpnet.hang.exits import Exit, mentions_exit, read_exits
from hpnet.hang.flight import MAX_DUMP_BYTES, RankDump, load_dump, looks_like_dump
from hpnet.hang.ranklog import MAX_LOG_BYTES, RankError, file_rank, read_errors
from hpnet.hang.stacks import Stack, read_stacks
from hpnet.ncclog.facts import parse_nccl_text
from hpnet.ncclog.model import NcclLog

__all__ = ["Evidence", "collect"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Evidence:
    dumps: tuple[RankDump, ...]
    errors: tuple[RankError, ...]
    logs: int  # text files read for error lines
    #: ranks a log's file name names: each is a rank of the job, dump or not
    log_ranks: tuple[int, ...] = ()
    #: files that look like dumps but could not be read as one: "path: why"
    unreadable: tuple[str, ...] = ()
    #: NCCL RAS reports (ncclras text or JSON) among the files
    ras: tuple[RasReport, ...] = ()
    #: NCCL debug logs (NCCL_DEBUG=INFO): where each rank ran, its transports and WARNs
    nccl: tuple[NcclLog, ...] = ()
    #: the collectives a Flight Recorder analyzer's report (fr_trace's text) names
    analyses: tuple[Analysis, ...] = ()
    #: the processes py-spy dumps show, where each waits
    stacks: tuple[Stack, ...] = ()
    #: the processes a launcher says ended
    exits: tuple[Exit, ...] = ()
    #: torch's desync reports (TORCH_NCCL_DESYNC_DEBUG): the ranks found lagging
    desync: tuple[DesyncReport, ...] = ()


def _files(paths: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for given in paths:
        root = Path(given)
        try:
            mode = os.lstat(root).st_mode
        except OSError as exc:
            raise InputError(
                f"cannot read it: {exc.strerror or exc}",
                code="hang-input",
                where=given,
                fix="pass the folder (or files) that hold the job's Flight Recorder dumps and "
                "rank logs",
            ) from None
        if stat.S_ISDIR(mode):
            out += sorted(p for p in root.rglob("*") if not p.is_symlink() and p.is_file())
        elif stat.S_ISREG(mode):
            out.append(root)
    return out


def collect(paths: Iterable[str], *, require: bool = True) -> Evidence:
    """Everything under the paths; with ``require``, finding nothing is an error."""
    dumps: list[RankDump] = []
    errors: list[RankError] = []
    logs = 0
    log_ranks: set[int] = set()
    unreadable: list[str] = []
    ras: list[RasReport] = []
    nccl: list[NcclLog] = []
    analyses: list[Analysis] = []
    stacks: list[Stack] = []
    exits: list[Exit] = []
    desync: list[DesyncReport] = []
    for file in _files(paths):
        try:
            with open(file, "rb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)) as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    continue
                head = handle.read(65536)
                if looks_like_dump(head, file.name):
                    # one rank's truncated dump (killed while writing it) leaves the others
                    try:
                        dumps.append(load_dump(str(file), head + handle.read(MAX_DUMP_BYTES)))
                    except InputError as exc:
                        unreadable.append(f"{file}: {exc.what}")
                elif b"\0" not in head[:4096]:
                    logs += 1
                    raw = head + handle.read(MAX_LOG_BYTES)
                    errors += read_errors(str(file), raw)
                    text = raw.decode("utf-8", "replace")
                    ras += read_artefacts(str(file), text).ras
                    if (b"Thread " in raw and (b" (idle)" in raw or b" (active" in raw)) or (
                        raw.startswith(b"#0 ") or b"\n#0 " in raw  # gdb's backtrace
                    ):
                        stacks += read_stacks(str(file), list(enumerate(text.splitlines(), 1)))
                    if mentions_exit(raw):
                        exits += read_exits(str(file), list(enumerate(text.splitlines(), 1)))
                    if b"ollective" in raw:  # the analyzer's heads: "[Cc]ollective"
                        analyses += read_analysis(str(file), text)
                    if b"] Timeout at collective: " in raw:
                        desync += read_desync(str(file), list(enumerate(text.splitlines(), 1)))
                    if b" NCCL INFO " in raw or b" NCCL WARN " in raw:
                        nccl.append(parse_nccl_text(raw, source=str(file)))
                    named = file_rank(str(file))
                    if named is not None:
                        log_ranks.add(named)
        except OSError:
            continue  # vanished or unreadable: not evidence
    # a process exiting without destroy_process_group() is when, not evidence of a hang
    said = [e for e in errors if not e.exiting]
    if require and not (dumps or said or ras or analyses or stacks or exits or desync):
        raise InputError(
            "no Flight Recorder dump (or its analyzer's report), rank error line, RAS "
            "report, py-spy dump or launcher's report of a process that ended found there"
            + (f" ({len(unreadable)} unreadable: {unreadable[0]})" if unreadable else ""),
            code="hang-no-evidence",
            where=", ".join(str(p) for p in paths),
            fix="run the job with TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 and "
            "TORCH_FR_DUMP_TEMP_FILE=<shared folder>/nccl_trace_rank_, then pass that folder "
            "and the ranks' logs",
        )
    return Evidence(
        dumps=tuple(dumps),
        errors=tuple(errors),
        logs=logs,
        log_ranks=tuple(sorted(log_ranks)),
        unreadable=tuple(unreadable),
        ras=tuple(ras),
        nccl=tuple(nccl),
        analyses=tuple(analyses),
        stacks=tuple(stacks),
        exits=tuple(exits),
        desync=tuple(desync),
    )
