"""The reading of an NCCL ``INFO`` message: ``(kind, data, text)``, what every reader
of :mod:`hpnet.ncclog.messages` and :mod:`hpnet.ncclog.net_messages` returns, and the
words that make a message worth keeping whatever its form.
"""

from __future__ import annotations

import re

__all__ = ["NOTABLE", "Message", "reading"]

#: failures NCCL logs at INFO level (``misc/ibvwrap.cc``, ``NET/IB : No device found``,
#: messages that NOWARN demoted from WARN)
NOTABLE = re.compile(
    r"No device found|returned 0 devices|[Ff]ail|[Ee]rror|Could not|[Aa]bort|timed? ?out"
    r"|Disabled|not found|Unable|unable|not available|retrying|refused|unreachable"
    r"|No route to host|P2P is disabled"
    # 2.25.1's INFO where the kernels want more shared memory than the GPU has
    r"|exceeds device/fn maxSharedMem"
)

#: what an INFO message says: (kind, data, text kept as evidence)
Message = tuple[str, tuple[object, ...], str]
_OTHER: Message = ("other", (), "")


def reading(kind: str, _process: None, data: tuple[object, ...] = (), text: str = "") -> Message:
    """``(kind, data, text)``; every ``other`` reading is one shared value."""
    return (kind, data, text) if kind != "other" else _OTHER
