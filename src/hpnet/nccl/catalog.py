"""The NCCL variable catalog: lookup, did-you-mean, and value validation.

Entries live in :mod:`hpnet.nccl.catalog_data` (facts from NCCL's documentation and
source, cited there); this module judges values against them. Validation follows
how NCCL itself reads a value, so that the messages say what NCCL will *do*:

* integer variables go through ``strtoll(value, NULL, 0)`` with no check of what
  follows the number (NVIDIA/nccl ``src/misc/param.cc``, ``ncclLoadParam``): ``abc``
  silently becomes 0, ``22s`` becomes 22, and a leading zero means octal
  (``0136`` is 94); an empty value or one out of the 64-bit range (``ERANGE``)
  gives the default;
* enumerations are compared whole, most with ``strcasecmp``: surrounding spaces make
  NCCL ignore the value (``AF_INET`` families and path levels are case-sensitive);
* ``NCCL_SOCKET_IFNAME`` of one character or less is ignored (``src/misc/socket.cc``,
  ``ncclFindInterfaces``: ``strlen(env) > 1``);
* list values follow :mod:`hpnet.nccl.lists`.

A :class:`Validation` is ``fail`` when NCCL does something other than what the value
seems to ask (misread number, list selecting nothing), ``warn`` when NCCL ignores the
value or it changes nothing (empty, a one-character interface list).
"""

from __future__ import annotations

import dataclasses
import re
from functools import cache
from typing import Literal

from hpnet.nccl.lists import MAX_HCA_ENTRIES, MAX_IF_ENTRIES, parse_list
from hpnet.nccl.model import Kind, NcclVar

__all__ = [
    "FOREIGN",
    "Validation",
    "catalog",
    "foreign",
    "lookup",
    "nccl_int",
    "strtoll",
    "suggest",
    "validate",
    "validate_value",
]

# topoPathTypeStr (src/graph/topo.cc) up to PATH_SYS, matched case-sensitively by
# ncclGetLevel (src/graph/paths.cc); a leading ASCII digit is the old numbering, clamped.
_LEVELS = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
#: C's isspace() in the C locale: what strtoll skips before a number
_C_SPACE = " \t\n\v\f\r"
_STRTOLL = re.compile(r"^[ \t\n\v\f\r]*[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_INTEGER = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)")
_INT64 = (-(1 << 63), (1 << 63) - 1)

#: ``NCCL_*`` names that NCCL does not read but images, build systems and frameworks
#: set. Setting them is harmless; they are not NCCL settings, so hpnet neither calls
#: them unknown nor copies them into a job's NCCL environment.
FOREIGN: dict[str, str] = {
    # nvidia/cuda runtime and devel Dockerfiles: `ENV NCCL_VERSION 2.17.1-1`
    "NCCL_VERSION": "set by NVIDIA's CUDA container images to the libnccl2 package they "
    "install; NCCL never reads it, and the NCCL a framework loads may differ, since torch "
    "wheels bundle their own",
    "NCCL_HOME": "an install path for build systems such as nccl-tests' Makefile; NCCL "
    "never reads it",
    "NCCL_ROOT": "an install path for CMake's FindNCCL; NCCL never reads it",
    "NCCL_ROOT_DIR": "an install path for PyTorch's build (FindNCCL.cmake); NCCL never reads it",
    "NCCL_LIB_DIR": "a library path for PyTorch's build (FindNCCL.cmake); NCCL never reads it",
    "NCCL_INCLUDE_DIR": "a header path for PyTorch's build (FindNCCL.cmake); NCCL never reads it",
    "NCCL_USE_CMAKE": "read by NCCL's own build (src/device/generate.py), not by the library",
    # torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp: each TORCH_NCCL_* setting lists
    # its deprecated NCCL_* name, e.g. {"TORCH_NCCL_ASYNC_ERROR_HANDLING",
    # "NCCL_ASYNC_ERROR_HANDLING"}
    "NCCL_ASYNC_ERROR_HANDLING": "PyTorch's deprecated name for "
    "TORCH_NCCL_ASYNC_ERROR_HANDLING; NCCL never reads it",
    "NCCL_BLOCKING_WAIT": "PyTorch's deprecated name for TORCH_NCCL_BLOCKING_WAIT; NCCL never "
    "reads it",
    "NCCL_DESYNC_DEBUG": "PyTorch's deprecated name for TORCH_NCCL_DESYNC_DEBUG; NCCL never "
    "reads it",
    "NCCL_ENABLE_TIMING": "PyTorch's deprecated name for TORCH_NCCL_ENABLE_TIMING; NCCL never "
    "reads it",
    "NCCL_TESTS_MIN_BW": "read by nccl-tests (its bus-bandwidth gate), not by NCCL",
}

#: how close an unknown name must be to a known one for a did-you-mean, and how
#: clearly it must beat the next candidate (an ambiguous guess is no guess)
_SUGGEST_CUTOFF = 0.9
_SUGGEST_MARGIN = 0.03

Severity = Literal["fail", "warn"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Validation:
    """The judgement of one value: ``ok``; else what is wrong and what NCCL does with
    it. ``severity``: ``fail`` when NCCL does something the value does not seem to
    ask, ``warn`` when NCCL ignores it or it changes nothing."""

    ok: bool
    message: str = ""
    severity: Severity = "fail"


OK = Validation(ok=True)


def _bad(message: str, severity: Severity = "fail") -> Validation:
    return Validation(ok=False, message=message, severity=severity)


@cache
def catalog() -> dict[str, NcclVar]:
    """Every known variable by name (built once, on first use)."""
    from hpnet.nccl.catalog_data import VARIABLES  # noqa: PLC0415 - a large table, load late

    return {var.name: var for var in VARIABLES}


def lookup(name: str) -> NcclVar | None:
    return catalog().get(name)


def foreign(name: str) -> str | None:
    """Who sets ``name`` when it is an ``NCCL_*`` name NCCL does not read (see :data:`FOREIGN`).

    >>> foreign("NCCL_VERSION") is not None, foreign("NCCL_IB_HCA")
    (True, None)
    """
    return FOREIGN.get(name)


def suggest(name: str) -> str | None:
    """The known name an *unknown* name is most likely a typo of, or None.

    Never for a name NCCL reads or one in :data:`FOREIGN` (renaming a real variable
    into another would change what the job does), and only when one candidate is
    clearly the closest.

    >>> suggest("NCCL_IB_TIMEOUTS")
    'NCCL_IB_TIMEOUT'
    >>> suggest("NCCL_NVTX_DISABLE") is None  # a real variable: no rename
    True
    """
    if lookup(name) is not None or name in FOREIGN:
        return None
    import difflib  # noqa: PLC0415 - only for a name NCCL does not know

    scored = sorted(
        ((difflib.SequenceMatcher(None, name, known).ratio(), known) for known in catalog()),
        reverse=True,
    )
    best, known = scored[0]
    runner_up = scored[1][0] if len(scored) > 1 else 0.0
    if best < _SUGGEST_CUTOFF or best - runner_up < _SUGGEST_MARGIN:
        return None
    return known


def strtoll(value: str) -> int:
    """What C's ``strtoll(value, NULL, 0)`` returns (0 when no number leads; clamped
    to the 64-bit range, as C does on ``ERANGE``)."""
    number, _ = _strtoll(value)
    return number


def _strtoll(value: str) -> tuple[int, bool]:
    """``(number, erange)``."""
    match = _STRTOLL.match(value)
    if not match:
        return 0, False
    text = match.group(0).lstrip(_C_SPACE)
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits[:2].lower() == "0x":
        number = sign * int(digits[2:], 16)
    elif digits.startswith("0") and len(digits) > 1:
        number = sign * int(digits, 8)
    else:
        number = sign * int(digits)
    low, high = _INT64
    if number < low or number > high:
        return (low if number < 0 else high), True
    return number, False


def nccl_int(value: str | None, default: int) -> int:
    """The integer NCCL's ``ncclLoadParam`` gets: ``default`` when unset, empty or out of
    range (``ERANGE``), else ``strtoll(value, NULL, 0)``.

    >>> nccl_int("0x3", -1), nccl_int("", -1), nccl_int("abc", 2), nccl_int("²", 2)
    (3, -1, 0, 0)
    """
    if not value:
        return default
    number, erange = _strtoll(value)
    return default if erange else number


def validate(name: str, value: str) -> Validation:
    """Judge ``value`` for the variable ``name``; unknown names are not judged here."""
    var = lookup(name)
    return validate_value(var, value) if var else OK


def validate_value(var: NcclVar, value: str) -> Validation:
    """Judge ``value`` against ``var``'s syntax and range.

    >>> validate("NCCL_IB_TIMEOUT", "abc").message
    "not an integer: NCCL reads 'abc' as 0"
    """
    checks = {
        Kind.INT: _integer,
        Kind.BOOL: _boolean,
        Kind.SIZE: _integer,
        Kind.ENUM: _enum,
        Kind.ENUM_LIST: _enum_list,
        Kind.IFACE_LIST: _iface_list,
        Kind.HCA_LIST: _hca_list,
        Kind.PATH_LEVEL: _path_level,
        Kind.ADDR_FAMILY: _family,
        Kind.PATH: _text,
        Kind.STRING: _text,
    }
    return checks[var.kind](var, value)


def _integer(var: NcclVar, value: str) -> Validation:
    if not value:
        default = f" ({var.default})" if var.default is not None else ""
        return _bad(f"empty: NCCL ignores it and uses its default{default}", "warn")
    text = value.strip(_C_SPACE)
    number, erange = _strtoll(value)
    if not _INTEGER.fullmatch(text):
        return _bad(f"not an integer: NCCL reads {value!r} as {number}")
    if erange:
        return _bad(
            f"{text} is out of the 64-bit range: strtoll fails (ERANGE) and NCCL uses its default"
        )
    digits = text.lstrip("+-")
    written = int(digits[2:], 16) if digits[:2].lower() == "0x" else int(digits, 10)
    if number != (-written if text.startswith("-") else written):
        # base 0: a leading zero is octal, and reading stops at an 8 or 9 ('08' is 0)
        return _bad(f"a leading zero makes NCCL read {value!r} as octal, {number}")
    if var.allowed and number not in var.allowed:
        return _bad(f"{number} is not one of {', '.join(map(str, var.allowed))}")
    if var.minimum is not None and number < var.minimum:
        return _bad(f"{number} is below the minimum {var.minimum}")
    if var.maximum is not None and number > var.maximum:
        return _bad(f"{number} is above the maximum {var.maximum}")
    if var.kind is Kind.SIZE and number <= 0:
        return _bad(f"a size must be positive, not {number}")
    return OK


def _boolean(var: NcclVar, value: str) -> Validation:
    result = _integer(var, value)
    if result.ok and strtoll(value) not in (0, 1):
        return _bad("expects 0 or 1 (NCCL treats any non-zero as 1)", "warn")
    return result


def _spaces(value: str) -> Validation | None:
    if value != value.strip():
        return _bad(
            f"{value!r} has leading or trailing white space: NCCL compares the whole "
            "string and ignores the value"
        )
    return None


def _enum(var: NcclVar, value: str) -> Validation:
    if not value:
        return _bad("empty: NCCL ignores it and uses its default", "warn")
    if var.name == "NCCL_DEBUG" and value.strip() and value != value.strip():
        # 2.30.7 reads NCCL_DEBUG through its parameter parser, which trims (src/debug.cc)
        choice = value.strip().upper() in {c.upper() for c in var.choices}
        if choice:
            return _bad(
                f"{value!r} has white space around it: NCCL before 2.30.7 ignores the value",
                "warn",
            )
    if spaced := _spaces(value):
        return spaced
    if var.exact_case:
        if value in var.choices:
            return OK
        if value.upper() in var.choices:
            return _bad(f"NCCL matches {var.name} case-sensitively: write {value.upper()!r}")
    elif value.upper() in {c.upper() for c in var.choices}:
        return OK
    return _bad(f"{value!r} is not one of {', '.join(var.choices)}")


def _enum_list(var: NcclVar, value: str) -> Validation:
    choices = {c.upper() for c in var.choices}
    # NCCL_ALGO / NCCL_PROTO also take per-collective groups: "allreduce:tree;^ll128"
    for group in value.split(";"):
        items = group.split(":", 1)[-1].lstrip("^")
        for item in (i.strip() for i in items.split(",")):
            if item and item.upper() not in choices:
                return _bad(f"{item!r} is not one of {', '.join(var.choices)}")
    return OK


def _iface_list(var: NcclVar, value: str) -> Validation:
    if len(value) <= 1:
        shown = "empty" if not value else f"{value!r} is one character"
        return _bad(
            f"{shown}: NCCL ignores a value of one character or less and picks the "
            "interface itself",
            "warn",
        )
    parsed = parse_list(value, max_entries=MAX_IF_ENTRIES)
    if parsed.selects_none:
        return _bad(
            f"{value!r} excludes everything ('^' before an empty list): NCCL finds no "
            "interface ('Bootstrap : no socket interface found')"
        )
    if parsed.selects_all:
        return _bad(
            f"{value!r} names no interface: NCCL takes every interface that is up, "
            "loopback and docker included"
        )
    if parsed.problems:
        return _bad(parsed.problems[0])
    return OK


def _hca_list(var: NcclVar, value: str) -> Validation:
    parsed = parse_list(value, max_entries=MAX_HCA_ENTRIES)
    if parsed.selects_none:
        return _bad(
            f"{value!r} excludes everything ('^' before an empty list): NCCL finds no "
            "IB device and falls back to its Socket transport"
        )
    if parsed.selects_all:
        shown = "empty" if not value else f"{value!r} names no device"
        return _bad(f"{shown}: NCCL takes every ACTIVE port, as if it were unset", "warn")
    if parsed.problems:
        return _bad(parsed.problems[0])
    return OK


def _path_level(var: NcclVar, value: str) -> Validation:
    if value in _LEVELS or (value[:1] and value[:1] in "0123456789"):
        return OK
    if spaced := _spaces(value):
        return spaced
    if value.upper() in _LEVELS:
        return _bad(f"NCCL matches levels case-sensitively: write {value.upper()!r}")
    return _bad(f"{value!r} is not one of {', '.join(_LEVELS)}")


def _family(var: NcclVar, value: str) -> Validation:
    # strcmp, no trimming (src/misc/socket.cc ncclEnvSocketFamily,
    # src/transport/net_ib/connect.cc envIbAddrFamily)
    if value in ("AF_INET", "AF_INET6"):
        return OK
    if var.name == "NCCL_IB_ADDR_FAMILY":
        effect = "NCCL uses AF_INET"
    else:
        effect = "NCCL does not force a family"
    if not value:
        return _bad(f"empty: {effect}", "warn")
    if spaced := _spaces(value):
        return _bad(f"{spaced.message}: {effect}")
    return _bad(f"{value!r} is not AF_INET or AF_INET6 (NCCL compares exactly): {effect}")


def _text(var: NcclVar, value: str) -> Validation:
    if not value.strip():
        return _bad("is empty: NCCL ignores it", "warn")
    if var.name == "NCCL_IB_ADDR_RANGE":
        from hpnet.nccl.gid_select import parse_addr_range  # noqa: PLC0415

        if all(parse_addr_range(value, family) is None for family in ("AF_INET", "AF_INET6")):
            return _bad(
                f"{value!r} is not ADDRESS/BITS with a mask in range: NCCL ignores it "
                "(no range restriction)"
            )
    return OK
