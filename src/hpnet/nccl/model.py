"""The shape of a catalog entry: one NCCL environment variable.

Facts come from NCCL's documentation ("Environment Variables" in the NCCL user
guide, https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and its
source (NVIDIA/nccl: ``NCCL_PARAM(...)`` in ``src/``, ``ncclGetEnv`` call sites).
"""

from __future__ import annotations

import dataclasses
import enum

__all__ = ["DOC_URL", "Kind", "NcclVar"]

DOC_URL = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"


class Kind(str, enum.Enum):
    """The syntax of a variable's value; each has a validator in :mod:`hpnet.nccl.catalog`."""

    INT = "int"  # a decimal integer within [minimum, maximum] when given
    BOOL = "bool"  # 0 or 1
    ENUM = "enum"  # one of `choices` (case-insensitive unless ``exact_case``)
    #: comma list of `choices`, optional leading ^ (NCCL_ALGO, NCCL_PROTO, NCCL_DEBUG_SUBSYS)
    ENUM_LIST = "enum-list"
    IFACE_LIST = "iface-list"  # NCCL_SOCKET_IFNAME syntax: prefixes, leading ^ excludes, = exact
    HCA_LIST = "hca-list"  # NCCL_IB_HCA syntax: like IFACE_LIST plus :port per entry
    PATH_LEVEL = "path-level"  # LOC, NVL, PIX, PXB, PHB, SYS (or the legacy integers)
    ADDR_FAMILY = "addr-family"  # AF_INET or AF_INET6
    SIZE = "size"  # bytes, a decimal integer
    PATH = "path"  # a file path (may contain %h / %p for NCCL_DEBUG_FILE)
    STRING = "string"  # free text (a plugin name, a host id, an address range)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NcclVar:
    """One NCCL environment variable.

    ``default`` is NCCL's default as documented, spelled as the value would be
    (``"14"``, ``"0"``), or None when NCCL decides at run time (documented as
    "automatic" / unset). ``since`` is the NCCL release that introduced it,
    ``debug_only`` whether the docs present it as a debugging / testing knob that
    should not be left set in production. ``doc`` links to its documentation
    anchor; ``source`` names the NCCL source file that defines it.
    """

    name: str
    kind: Kind
    summary: str
    default: str | None
    since: str | None
    doc: str
    source: str | None = None
    debug_only: bool = False
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    #: the variable's older name, or its newer one ("renamed to NCCL_NET_GDR_LEVEL")
    renamed: str | None = None
    #: version notes a user needs (default changes, ignored cases), one line each
    notes: tuple[str, ...] = ()
    #: the only integers NCCL accepts, when the docs list them (NCCL_NTHREADS: 64..512)
    allowed: tuple[int, ...] = ()
    #: NCCL compares an ENUM value case-sensitively (strcmp / strncmp, not strcasecmp)
    exact_case: bool = False

    @property
    def documented(self) -> bool:
        """Whether NCCL's environment-variable page has a section on it; the others
        are read by NCCL's source but not described (their facts come from the source)."""
        return self.doc != DOC_URL
