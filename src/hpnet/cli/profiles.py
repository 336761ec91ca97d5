"""``hpnet profiles [show NAME]``: the platform profiles and their sources."""

from __future__ import annotations

import argparse

#: of `hpnet profiles --json` and `hpnet profiles show NAME --json` (docs/profiles-schema.md)
SCHEMA_VERSION = 1

DESCRIPTION = """\
List the platform profiles, or show one: its NCCL variables with the guide each
comes from, image requirements, packages, container flags, launch and instance facts.

  hpnet profiles
  hpnet profiles show pai-dlc-erdma [--json]
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["list", "show"], default="list")
    parser.add_argument("name", nargs="?", help="the profile to show")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(namespace: argparse.Namespace) -> int:
    from hpnet.errors import UsageError  # noqa: PLC0415
    from hpnet.profiles import get_profile, list_profiles  # noqa: PLC0415

    if namespace.action == "show":
        if not namespace.name:
            raise UsageError(
                "which profile?",
                code="usage",
                where="hpnet profiles show",
                fix="see `hpnet profiles`",
            )
        profiles = [get_profile(namespace.name, where="hpnet profiles show")]
    elif namespace.name:
        raise UsageError(
            f"unexpected {namespace.name!r}",
            code="usage",
            where="hpnet profiles",
            fix=f"did you mean `hpnet profiles show {namespace.name}`?",
        )
    else:
        profiles = list_profiles()
    if namespace.json:
        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        # docs/profiles-schema.md; the version changes when a key changes meaning
        body = profiles[0] if namespace.action == "show" else {"profiles": profiles}
        print(dumps(envelope(body, schema_version=SCHEMA_VERSION)))
        return 0
    from hpnet.render.profiles import render_list, render_profile  # noqa: PLC0415

    if namespace.action == "show":
        print(render_profile(profiles[0]), end="")
    else:
        print(render_list(profiles), end="")
    return 0
