"""User overrides for ``hpnet env``: ``--set K=V`` and ``--config FILE.toml``.

Validated strictly: a mistyped ``NCCL_*`` name would be ignored by NCCL without a
word, so here it is an error with the closest known name. The config file::

    profile = "pai-lingjun"     # optional: the profile when --profile is not given

    [env]
    NCCL_IB_TIMEOUT = 23
    NCCL_SOCKET_IFNAME = "=eth0"
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping

from hpnet.errors import InputError, UsageError
from hpnet.nccl.catalog import foreign, lookup, suggest, validate
from hpnet.nccl.model import Kind
from hpnet.nccl.rules import is_variable_name

__all__ = ["Overrides", "check_nccl_version", "load_config", "parse_sets"]

#: an NCCL release as users write it: 2.21, 2.21.5, 2.21.5-1, 2.21.5+cuda12.4
_VERSION = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}(\.[0-9]{1,3})?([-+][A-Za-z0-9._+-]*)?")
_TOP_KEYS = frozenset({"profile", "env"})

Overrides = dict[str, str]


def check_name(name: str, where: str) -> None:
    """Refuse names that are not environment names, and unknown ``NCCL_*`` names."""
    # a shell name (the one definition, rules.VARIABLE_NAME) in upper case: NCCL's and
    # the tools' variables are upper case, and a lower-case one is a typo
    if not (is_variable_name(name) and name == name.upper()):
        raise InputError(
            f"{name!r} is not an environment variable name",
            code="bad-variable-name",
            where=where,
            fix="use upper-case letters, digits and underscores",
        )
    who = foreign(name)
    if who is not None:
        raise InputError(
            f"{name} is not an NCCL setting: {who}",
            code="not-an-nccl-variable",
            where=where,
            fix="set it outside hpnet, where the tool that reads it expects it",
        )
    if name.startswith("NCCL_") and lookup(name) is None:
        close = suggest(name)
        raise InputError(
            f"{name} is not an NCCL variable: NCCL would silently ignore it",
            code="unknown-variable",
            where=where,
            fix=f"did you mean {close}? If so, write {close}"
            if close
            else "see NCCL's environment variable list",
        )


def check_value(name: str, value: str, where: str) -> None:
    """Refuse a value NCCL would misread: overrides are validated strictly."""
    judged = validate(name, value)
    if not judged.ok:
        var = lookup(name)
        raise InputError(
            f"{name}={value!r}: {judged.message}",
            code="invalid-value",
            where=where,
            fix=f"see {var.doc}" if var else "fix the value",
        )


def check_nccl_version(text: str | None, where: str = "--nccl-version") -> str | None:
    """``text`` when it names an NCCL release (``2.21.5``), else a usage error: a
    version hpnet cannot read would silently turn every version-dependent check off.

    >>> check_nccl_version("2.21.5+cuda12.4")
    '2.21.5+cuda12.4'
    """
    if text is None:
        return None
    if not _VERSION.fullmatch(text):
        raise UsageError(
            f"{text!r} is not an NCCL version",
            code="usage",
            where=where,
            fix="write X.Y or X.Y.Z, e.g. --nccl-version 2.21.5",
        )
    return text


def parse_sets(items: Iterable[str]) -> Overrides:
    """``["NCCL_IB_TIMEOUT=23", ...]`` -> a mapping, names checked.

    >>> parse_sets(["NCCL_IB_TIMEOUT=23"])
    {'NCCL_IB_TIMEOUT': '23'}
    """
    result: Overrides = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(
                f"--set {item!r} has no '='",
                code="usage",
                where="--set",
                fix="write --set NAME=VALUE",
            )
        check_name(name, f"--set {item}")
        check_value(name, value, f"--set {item}")
        result[name] = value
    return result


def load_config(text: str, *, source: str) -> tuple[str | None, Overrides]:
    """``(profile, overrides)`` from a config file's text; every key is checked."""
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib  # noqa: PLC0415

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(
            f"not valid TOML: {exc}", code="config-syntax", where=source, fix="fix the TOML syntax"
        ) from None
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise InputError(
            f"unknown key {unknown[0]!r}",
            code="config-unknown-key",
            where=source,
            fix='the config takes `profile = "NAME"` and an [env] table',
        )
    profile = data.get("profile")
    if profile is not None and not isinstance(profile, str):
        raise InputError(
            "`profile` must be a string",
            code="config-bad-value",
            where=source,
            fix='profile = "ib"',
        )
    env = data.get("env", {})
    if not isinstance(env, Mapping):
        raise InputError(
            "`env` must be a table", code="config-bad-value", where=source, fix="write [env]"
        )
    overrides: Overrides = {}
    for name, raw in env.items():
        where = f"{source} [env] {name}"
        check_name(name, where)
        var = lookup(name)
        if isinstance(raw, bool) and (var is None or var.kind is not Kind.BOOL):
            raise InputError(
                f"{name} takes a value, not true/false",
                code="config-bad-value",
                where=where,
                fix=f'{name} = "..."',
            )
        value = int(raw) if isinstance(raw, bool) else raw
        if not isinstance(value, (str, int)):
            raise InputError(
                f"{name} must be a string or an integer",
                code="config-bad-value",
                where=f"{source} [env]",
                fix=f'{name} = "..."',
            )
        check_value(name, str(value), where)
        overrides[name] = str(value)
    return profile, overrides
