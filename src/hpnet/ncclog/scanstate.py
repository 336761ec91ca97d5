"""What the scanner remembers of a source between its blocks (issue 28)."""

from __future__ import annotations

from hpnet.ncclog.passes import DeadLines, dead_lines

__all__ = ["ScanState"]


class ScanState:
    """What the scanner (:func:`hpnet.ncclog.scan.scan_block`) remembers of a source
    between its blocks. It lives on the :class:`~hpnet.ncclog.lines.Classifier` passed
    from block to block, because its dead lines hold only while the classifier's caches
    do (the classifier empties them with its caches)."""

    __slots__ = ("dead", "framework_seen", "source")

    def __init__(self) -> None:
        #: input lines of :attr:`source` that the classifier, as it stands, answers with
        #: no event (a repeat of an idempotent line, a known process's irrelevant line,
        #: program output): the scanner skips them without reading them again
        self.dead: DeadLines = dead_lines()
        self.source: str | None = None
        #: a block of :attr:`source` held a word an artefact reader needs
        self.framework_seen = False

    def start(self, source: str) -> None:
        """A block of ``source`` comes: another source's lines and words are forgotten."""
        if self.source != source:
            self.dead.clear()
            self.source = source
            self.framework_seen = False
