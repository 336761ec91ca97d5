"""Artefacts other than NCCL debug logs: ncclras reports (text and JSON), PyTorch
ProcessGroupNCCL text, XLA/JAX and wrapper errors, RCCL logs.

Pure readers of text (:func:`read_artefacts`; one module per kind:
:mod:`~hpnet.artefacts.ras`, :mod:`~hpnet.artefacts.framework`,
:mod:`~hpnet.artefacts.rccl`), facts in :mod:`~hpnet.artefacts.model`, and their
judgement for ``hpnet verify`` (:mod:`~hpnet.artefacts.judge`). ``hpnet hang`` reuses
the readers.
"""

from hpnet.artefacts.model import ArtefactFacts, ArtefactSummary, Kind
from hpnet.artefacts.scan import read_artefacts

__all__ = ["ArtefactFacts", "ArtefactSummary", "Kind", "read_artefacts"]
