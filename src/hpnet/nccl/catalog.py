"""The NCCL variable catalog: lookup, did-you-mean, and value validation.

Entries live in :mod:`hpnet.nccl.catalog_data` (facts from NCCL's documentation and
source, cited there); this module judges values against them. Validation follows
how NCCL itself reads a value, so that the messages say what NCCL will *do*:

* integer variables go through ``strtoll(value, NULL, 0)`` with no check of what
  follows the number (NVIDIA/nccl ``src/misc/param.cc``, ``ncclLoadParam``): ``abc``
  silently becomes 0, ``22s`` becomes 22, and a leading zero means octal
  (``0136`` is 94);
* ``NCCL_SOCKET_IFNAME`` of one character is ignored (``src/misc/socket.cc``);
* list values follow :mod:`hpnet.nccl.lists`.
"""

from __future__ import annotations

import dataclasses
import re
from functools import cache

from hpnet.nccl.lists import parse_list
from hpnet.nccl.model import Kind, NcclVar

__all__ = ["Validation", "catalog", "lookup", "suggest", "validate", "validate_value"]

# topoPathTypeStr (src/graph/topo.cc) up to PATH_SYS, matched case-sensitively by
# ncclGetLevel (src/graph/paths.cc); a leading digit is the old numbering, clamped.
_LEVELS = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
_STRTOLL = re.compile(r"^\s*[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Validation:
    """The judgement of one value: ``ok``; else what is wrong and what NCCL does with it."""

    ok: bool
    message: str = ""


OK = Validation(ok=True)


@cache
def catalog() -> dict[str, NcclVar]:
    """Every known variable by name (built once, on first use)."""
    from hpnet.nccl.catalog_data import VARIABLES  # noqa: PLC0415 - a large table, load late

    return {var.name: var for var in VARIABLES}


def lookup(name: str) -> NcclVar | None:
    return catalog().get(name)


def suggest(name: str) -> str | None:
    """The closest known name, for a variable NCCL would silently ignore.

    >>> suggest("NCCL_IB_TIMEOUTS")
    'NCCL_IB_TIMEOUT'
    """
    import difflib  # noqa: PLC0415 - only for a name NCCL does not know

    close = difflib.get_close_matches(name, list(catalog()), n=1, cutoff=0.75)
    return close[0] if close else None


def strtoll(value: str) -> int:
    """What C's ``strtoll(value, NULL, 0)`` returns (0 when no number leads)."""
    match = _STRTOLL.match(value)
    if not match:
        return 0
    text = match.group(0).strip()
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits[:2].lower() == "0x":
        return sign * int(digits[2:], 16)
    if digits.startswith("0") and len(digits) > 1:
        return sign * int(digits, 8)
    return sign * int(digits)


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
    text = value.strip()
    if not value:
        return Validation(ok=False, message="empty: NCCL ignores it and uses its default")
    if not re.fullmatch(r"[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)", text):
        read = strtoll(value)
        return Validation(ok=False, message=f"not an integer: NCCL reads {value!r} as {read}")
    number = strtoll(text)
    if re.fullmatch(r"[+-]?0[0-7]+", text):
        return Validation(
            ok=False,
            message=f"a leading zero makes NCCL read {value!r} as octal, {number}",
        )
    if var.minimum is not None and number < var.minimum:
        return Validation(ok=False, message=f"{number} is below the minimum {var.minimum}")
    if var.maximum is not None and number > var.maximum:
        return Validation(ok=False, message=f"{number} is above the maximum {var.maximum}")
    if var.kind is Kind.SIZE and number <= 0:
        return Validation(ok=False, message=f"a size must be positive, not {number}")
    return OK


def _boolean(var: NcclVar, value: str) -> Validation:
    result = _integer(var, value)
    if result.ok and strtoll(value) not in (0, 1):
        return Validation(ok=False, message="expects 0 or 1 (NCCL treats any non-zero as 1)")
    return result


def _enum(var: NcclVar, value: str) -> Validation:
    if value.strip().upper() in {c.upper() for c in var.choices}:
        return OK
    return Validation(ok=False, message=f"{value!r} is not one of {', '.join(var.choices)}")


def _enum_list(var: NcclVar, value: str) -> Validation:
    choices = {c.upper() for c in var.choices}
    # NCCL_ALGO / NCCL_PROTO also take per-collective groups: "allreduce:tree;^ll128"
    for group in value.split(";"):
        items = group.split(":", 1)[-1].lstrip("^")
        for item in (i.strip() for i in items.split(",")):
            if item and item.upper() not in choices:
                return Validation(
                    ok=False, message=f"{item!r} is not one of {', '.join(var.choices)}"
                )
    return OK


def _iface_list(var: NcclVar, value: str) -> Validation:
    if var.name == "NCCL_SOCKET_IFNAME" and len(value) <= 1:
        return Validation(ok=False, message="NCCL ignores a value of one character or less")
    return _list(value)


def _hca_list(var: NcclVar, value: str) -> Validation:
    return _list(value)


def _list(value: str) -> Validation:
    try:
        parsed = parse_list(value)
    except ValueError as exc:
        return Validation(ok=False, message=str(exc))
    if not parsed.entries:
        return Validation(ok=False, message="names no interface or device: NCCL selects all")
    return OK


def _path_level(var: NcclVar, value: str) -> Validation:
    if value in _LEVELS or value[:1].isdigit():
        return OK
    if value.upper() in _LEVELS:
        return Validation(
            ok=False, message=f"NCCL matches levels case-sensitively: write {value.upper()!r}"
        )
    return Validation(ok=False, message=f"{value!r} is not one of {', '.join(_LEVELS)}")


def _family(var: NcclVar, value: str) -> Validation:
    if value.strip() in ("AF_INET", "AF_INET6"):
        return OK
    return Validation(ok=False, message=f"{value!r} is not AF_INET or AF_INET6")


def _text(var: NcclVar, value: str) -> Validation:
    return OK if value.strip() else Validation(ok=False, message="is empty")
