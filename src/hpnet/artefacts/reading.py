"""The edge for artefacts: the inputs ``hpnet verify`` was given, read once for both the
NCCL log pipeline and the artefact readers.

Regular files are read again here (whole up to :data:`~hpnet.artefacts.scan.MAX_TEXT_BYTES`,
else their first and last MiB: a job's versions and RAS reports come first, the
watchdog's timeout and the framework's error last);
streams and gzip files, which can be read once only, through the pipeline's ``tap``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hpnet.artefacts.model import ArtefactFacts
from hpnet.artefacts.scan import ArtefactTap, combine, file_text, read_artefacts
from hpnet.ncclog.inputs import LogInput
from hpnet.ncclog.model import NcclLog

__all__ = ["read_with_artefacts"]


def read_with_artefacts(
    inputs: Sequence[LogInput],
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    notes: Sequence[str] = (),
    idle_timeout_seconds: float | None = None,
    waiting: Callable[[str], None] | None = None,
) -> tuple[NcclLog, list[ArtefactFacts]]:
    """The NCCL log of every input, and each input's artefact facts."""
    from hpnet.ncclog.read import read_logs  # noqa: PLC0415 - read imports the scanner

    tap = ArtefactTap()
    log = read_logs(
        inputs,
        jobs=jobs,
        progress=progress,
        notes=notes,
        idle_timeout_seconds=idle_timeout_seconds,
        waiting=waiting,
        tap=tap,
    )
    facts = []
    # the inputs in which the NCCL pipeline saw a framework or RAS word (words.MARKS)
    marked = set(log.framework_sources)
    for source in inputs:
        name = "<stdin>" if source.path == "-" else source.path
        if source.stream or source.gzip:
            parts = [(tap.text(name), 1)]
        elif name not in marked:
            continue  # no word any artefact reader needs: nothing but NCCL's lines to read
        else:
            try:
                parts = file_text(source.path, source.size_bytes, source.skip_bytes)
            except OSError:  # gone since the pipeline read it: its lines are judged there
                continue
        found = combine([read_artefacts(name, text, first) for text, first in parts])
        if found.kinds:
            facts.append(found)
    return log, facts
