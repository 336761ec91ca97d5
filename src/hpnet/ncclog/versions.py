"""Which NCCL releases print a line in exactly this form: version fingerprints.

Only rank 0 printed ``NCCL version`` up to 2.21.5, and excerpts often lack it, so a
process's release is bounded by the forms of the lines it wrote. Each entry names the
first and last release that print the form (from NCCL's source history; the ranges
and the format strings are listed in docs/nccl-log-formats.md). Two processes whose
ranges do not overlap ran different NCCLs, even when no version line says so.

>>> hint_for("bootstrap", "Bootstrap: Using eth0:10.0.0.1<0>")
((2, 24, 3), None)
>>> hint_for("plugin", "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : x")
((2, 17, 1), (2, 18, 6))
"""

from __future__ import annotations

import re

__all__ = ["FINGERPRINTS", "VersionRange", "format_range", "hint_for", "intersect"]

Version = tuple[int, ...]
#: (lowest, highest) release; None: unbounded on that side
VersionRange = tuple["Version | None", "Version | None"]


def _v(text: str | None) -> Version | None:
    return tuple(int(p) for p in text.split(".")) if text else None


def _fp(
    kind: str, pattern: str, lo: str | None, hi: str | None
) -> tuple[str, re.Pattern[str], VersionRange]:
    return kind, re.compile(pattern), (_v(lo), _v(hi))


#: (event kind, pattern over the message, range). Sections refer to docs/nccl-log-formats.md.
FINGERPRINTS: tuple[tuple[str, re.Pattern[str], VersionRange], ...] = (
    # §3.1 bootstrap
    _fp("bootstrap", r"^Bootstrap: Using", "2.24.3", None),
    _fp("bootstrap", r"^Bootstrap : Using \[", "2.4.8", "2.7.8"),
    _fp("bootstrap", r"^Bootstrap : Using [^\[]", "2.8.3", "2.23.4"),
    # §2 version and driver lines
    _fp("version", r"^NCCL version", "2.22.3", None),  # the prefixed INFO form
    _fp("cuda-driver", r"^cudaDriverVersion", "2.13.4", None),
    # §3.3 network choice
    # ("Using network" is no fingerprint: 2.3 printed it, 2.4-2.5 did not, 2.6.4+ do)
    _fp("network", r"^(?:Initialized|Assigned) NET plugin", "2.27.3", None),
    _fp("plugin", r"^NET/Plugin : No plugin found \(libnccl-net\.so\)\.$", "2.4.2", "2.4.8"),
    _fp("plugin", r"^NET/Plugin : No plugin found \([^)]*\), using internal", "2.5.6", "2.16.5"),
    _fp("plugin", r"^NET/Plugin : Plugin load \(", "2.17.1", "2.18.6"),
    _fp("plugin", r"^NET/Plugin : No plugin found, using internal", "2.17.1", "2.18.6"),
    _fp("plugin", r"^NET/Plugin : dlerror=", "2.19.1", "2.20.5"),
    _fp(
        "plugin",
        r"^NET/Plugin: Could not find: \S+\. Using internal network plugin\.",
        "2.22.3",
        "2.25.1",
    ),
    _fp(
        "plugin",
        r"^NET/Plugin: Could not find: \S+\. Using internal net plugin\.",
        "2.26.2",
        "2.26.6",
    ),
    _fp("plugin", r"^NET/Plugin: Could not find: \S+\. $", "2.27.3", "2.27.7"),
    _fp("plugin", r"^NET/Plugin: Could not find: libnccl-net\.so$", "2.28.3", None),
    _fp("plugin", r"^NET/Plugin: Loaded (?:net|collnet) plugin", "2.13.4", None),
    _fp("ib-failed", r"^Failed to initialize NET plugin", "2.28.3", None),
    # §3.2 NIC lists
    _fp("net-list", r"^NET/IB : Using .*\[RO\]", "2.12.7", None),
    # §4 communicator lines
    _fp("comm", r"^\[Rank \d+\] ", "2.29.2", None),
    _fp("comm", r"- Init START", "2.18.3", None),
    _fp("comm", r"^ncclComm\w+ comm ", "2.21.5", None),
    _fp(
        "comm",
        r"^comm 0x\S+ rank \d+ nranks \d+ cudaDev \d+ nvmlDev \d+ - Init COMPLETE",
        "2.4.2",
        "2.4.8",
    ),
    _fp(
        "comm",
        r"^comm 0x\S+ rank \d+ nranks \d+ cudaDev \d+ busId \w+ - Init COMPLETE",
        "2.5.6",
        "2.15.5",
    ),
    _fp(
        "comm",
        r"^comm 0x\S+ rank \d+ nranks \d+ cudaDev \d+ busId \w+ commId \w+ - Init COMPLETE",
        "2.16.2",
        "2.18.1",
    ),
    _fp("comm", r"nNodes \d+ localRanks", "2.20.3", None),
    # §5.5
    _fp("ring-gdr", r"^Connected all rings, use ring PXN", "2.24.3", None),
    _fp("connected", r"^Connected all rings$", "2.8.3", "2.23.4"),
    # §5 transports (what survives the erased channel number); 2.3.5 and 2.3.7 print the
    # forms given from 2.3.5 (src/transport/shm.cu, p2p.cu, net_ib.cu, misc/ibvwrap.cu)
    _fp("connection", r"via direct shared memory", "2.3.5", "2.12.12"),
    _fp("connection", r"via SHM/\w+/\w+", "2.13.4", "2.30.4"),
    _fp("connection", r"via SHM/direct$", "2.30.7", None),
    _fp("connection", r"via P2P/CUMEM", "2.18.1", None),
    _fp("connection", r"via P2P/common device", "2.3.5", "2.7.8"),
    _fp("connection", r"/GDRDMA\(PCI\)", "2.26.2", None),
    # §7.2 completion errors, §7.1 ibverbs
    _fp("warn", r"^NET/IB : Got completion with error", "2.3.5", "2.9.9"),
    _fp("warn", r"^NET/IB : Got completion from peer", "2.10.3", "2.21.5"),
    _fp("warn", r"^NET/IB: Got completion from peer \S+ with status=\d", "2.22.3", "2.28.3"),
    _fp("warn", r"^NET/IB: Got completion from peer \S+ with status=IBV_WC", "2.28.7", None),
    _fp("warn", r"^Failed to open libibverbs", "2.3.5", "2.10.3"),
    _fp("notable", r"^Failed to open libibverbs", "2.11.4", "2.29.7"),
    _fp("warn", r"^Call to ibv_modify_qp failed with error \S.* errno \d+", "2.19.1", "2.23.4"),
    _fp("warn", r"^Call to ibv_modify_qp failed with \d+ ", "2.24.3", None),
)

#: FINGERPRINTS by kind, in order
_BY_KIND: dict[str, tuple[tuple[re.Pattern[str], VersionRange], ...]] = {
    kind: tuple((pattern, bounds) for k, pattern, bounds in FINGERPRINTS if k == kind)
    for kind, _, _ in FINGERPRINTS
}


def hint_for(kind: str, message: str) -> VersionRange | None:
    """The release range a message of this kind pins, or None if it says nothing."""
    found: VersionRange | None = None
    for pattern, bounds in _BY_KIND.get(kind, ()):
        if pattern.search(message):
            found = bounds if found is None else intersect(found, bounds)
    return found


def intersect(a: VersionRange, b: VersionRange) -> VersionRange:
    """The releases in both ranges (lo > hi when there are none)."""
    lows = [v for v in (a[0], b[0]) if v is not None]
    highs = [v for v in (a[1], b[1]) if v is not None]
    return (max(lows) if lows else None, min(highs) if highs else None)


def contains(bounds: VersionRange, version: Version) -> bool:
    lo, hi = bounds
    return (lo is None or version >= lo) and (hi is None or version[: len(hi)] <= hi)


def empty(bounds: VersionRange) -> bool:
    lo, hi = bounds
    return lo is not None and hi is not None and lo > hi


def format_range(bounds: VersionRange) -> str:
    """``2.17.1-2.18.6``, ``>= 2.24.3``, ``<= 2.7.8``."""
    lo, hi = bounds
    text = [".".join(map(str, v)) if v else "" for v in (lo, hi)]
    if lo and hi:
        return text[0] if lo == hi else f"{text[0]}-{text[1]}"
    if lo:
        return f">= {text[0]}"
    if hi:
        return f"<= {text[1]}"
    return "any"
