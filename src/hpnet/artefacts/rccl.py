"""An RCCL (AMD ROCm) log -> :class:`RcclInfo`; pure.

RCCL is NCCL hipified: it prints NCCL's ``NCCL INFO`` / ``NCCL WARN`` prefixes, but its
own releases. Its version line: ``RCCL version 2.6.4+hip3.5`` since ROCm/rccl#212
(2020), ``RCCL version 2.18.3+hip5.5 develop:6ecf771+``, and from 2.20 a block
``RCCL version : 2.21.5-main:a29a210+`` / ``HIP version  : ...`` / ``ROCm version :
...``. Other marks: ``librccl-net.so`` (its plugin name), source paths under
``hipify/src/``, ``ROCr version``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hpnet.artefacts.model import Quote, RcclInfo
from hpnet.artefacts.words import RCCL_WORDS

__all__ = ["RCCL_MARK", "RCCL_WORDS", "mentions_rccl", "read_rccl"]

_VERSION = re.compile(r"\bRCCL version\s*:?\s*(\d+\.\d+\.\d+)(?:\+hip(\d+\.\d+))?")
_HIP = re.compile(r"^\s*HIP version\s*:\s*(\S+)")
_ROCM = re.compile(r"^\s*ROCm version\s*:\s*(\S+)")
#: a line only RCCL writes
RCCL_MARK = re.compile(
    r"\bRCCL version\b|librccl|/hipify/src/|\bROCr version\b|\[rocprofiler-sdk-rccl\]"
)


def mentions_rccl(text: str) -> bool:
    """Whether a line of ``text`` is RCCL's (:data:`RCCL_MARK`).

    >>> mentions_rccl("x NCCL INFO RCCL version 2.18.3+hip5.5"), mentions_rccl("NCCL INFO")
    (True, False)
    """
    return any(word in text for word in RCCL_WORDS) and RCCL_MARK.search(text) is not None


def read_rccl(lines: Iterable[Quote]) -> RcclInfo | None:
    """The RCCL version and its HIP / ROCm versions, or None when no line is RCCL's.

    >>> read_rccl([Quote(source="f", line=1, text="RCCL version 2.18.3+hip5.5")]).hip
    '5.5'
    """
    version = hip = rocm = None
    quotes: list[Quote] = []
    marked = False
    for quote in lines:
        text = quote.text
        if not marked and RCCL_MARK.search(text):
            marked = True
            quotes.append(quote)
        if version is None and (found := _VERSION.search(text)):
            version, hip = found.group(1), found.group(2) or hip
            if quote not in quotes:
                quotes.append(quote)
        elif hip is None and (found := _HIP.match(text)):
            hip = found.group(1)
        elif rocm is None and (found := _ROCM.match(text)):
            rocm = found.group(1)
            quotes.append(quote)
    if not marked:
        return None
    return RcclInfo(version=version, hip=hip, rocm=rocm, quotes=tuple(quotes[-2:]))
