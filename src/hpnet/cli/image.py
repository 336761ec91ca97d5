"""``hpnet image``: Dockerfiles, container flags and an image check for a profile.

The work is in the subcommands (``SUBCOMMANDS``); ``hpnet image`` alone says which.
"""

from __future__ import annotations

import argparse

DESCRIPTION = """\
What an image and a container need for a platform's network.

  hpnet image dockerfile --profile P --base IMAGE [--distro D]   a Dockerfile (or --fragment)
  hpnet image run-flags --profile P [--sysfs-root DIR]          docker run flags, pod settings
  hpnet image check [--profile P] [--stage build|run]           validate an image or container
"""

SUBCOMMANDS = {
    "dockerfile": "hpnet.cli.image_dockerfile",
    "run-flags": "hpnet.cli.image_run_flags",
    "check": "hpnet.cli.image_check",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", help="dockerfile, run-flags or check")


def run(namespace: argparse.Namespace) -> int:
    from hpnet.errors import UsageError  # noqa: PLC0415

    if namespace.action:
        import difflib  # noqa: PLC0415

        close = difflib.get_close_matches(namespace.action, list(SUBCOMMANDS), n=1)
        raise UsageError(
            f"unknown subcommand {namespace.action!r}",
            code="usage",
            where="hpnet image",
            fix=(f"did you mean `hpnet image {close[0]}`? " if close else "")
            + "one of: "
            + ", ".join(SUBCOMMANDS),
        )
    raise UsageError(
        "which one?",
        code="usage",
        where="hpnet image",
        fix="hpnet image dockerfile | run-flags | check (see `hpnet image --help`)",
    )
