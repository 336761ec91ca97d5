"""``hpnet env``: flags -> :class:`EnvArgs` -> :func:`hpnet.api.resolve_env` -> a format."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from hpnet.cli._node import add_node_arguments, read_listings

DESCRIPTION = """\
The NCCL environment for this node: NCCL defaults < platform profile < what the node
calls for < your overrides (--set, --config) < variables already in the environment
(kept, and reported when they disagree; --override-env replaces them). The node
decides the HCAs, the RoCE GID index and the socket interface, and says so when a
profile's value does not fit it. A secret-looking variable (a TOKEN, SECRET, KEY...
name, or a value with a credential) is never printed, as hpnet launch never forwards
it unless named: left out of the exported formats, <redacted> in JSON and --explain.

  hpnet env --profile pai-dlc-erdma                  export lines for this node
  hpnet env --profile pai-lingjun --explain          every value with origin and reason
  hpnet env --profile auto --format mpirun           -x K=V arguments
  hpnet env --sysfs-root DIR --profile roce --json   a recorded node

formats: shell (default), dotenv, json, mpirun, deepspeed, k8s, slurm
"""

FORMATS = ("shell", "dotenv", "json", "mpirun", "deepspeed", "k8s", "slurm")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class EnvArgs:
    profile: str | None
    sysfs_root: str
    listings: tuple[str, ...]
    sets: tuple[str, ...]
    config: str | None
    override_env: bool
    fmt: str
    explain: bool
    nccl_version: str | None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="a platform profile (see `hpnet profiles`); default auto")
    add_node_arguments(parser)
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="K=V",
        help="override a variable (repeatable)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE.toml",
        help='overrides from a file: profile = "NAME" and an [env] table',
    )
    parser.add_argument(
        "--override-env",
        action="store_true",
        help="let the resolution replace variables already set in the environment",
    )
    parser.add_argument("--format", dest="fmt", choices=FORMATS, default="shell")
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument(
        "--explain", action="store_true", help="print every value with its origin and reason"
    )
    parser.add_argument(
        "--nccl-version",
        metavar="X.Y.Z",
        help="the NCCL the job will run (default: what the node has)",
    )


def run(namespace: argparse.Namespace) -> int:
    args = EnvArgs(
        profile=namespace.profile,
        sysfs_root=namespace.sysfs_root,
        listings=tuple(namespace.listings),
        sets=tuple(namespace.sets),
        config=namespace.config,
        override_env=namespace.override_env,
        fmt="json" if namespace.json else namespace.fmt,
        explain=namespace.explain,
        nccl_version=_nccl_version(namespace.nccl_version),
    )
    from hpnet.api import resolve_env  # noqa: PLC0415 - `hpnet env --help` needs none of it
    from hpnet.nccl.config import parse_sets  # noqa: PLC0415
    from hpnet.nccl.env import for_display  # noqa: PLC0415
    from hpnet.nccl.formats import explain, render  # noqa: PLC0415

    if args.profile is not None and not args.profile.strip():
        from hpnet.errors import UsageError  # noqa: PLC0415

        raise UsageError(
            "--profile is empty", code="usage", where="--profile", fix="see `hpnet profiles`"
        )
    profile, user = _config(args.config)
    if args.profile is None and profile is not None:
        from hpnet.profiles import get_profile  # noqa: PLC0415

        get_profile(profile, where=f"{args.config}: profile")  # a misspelling names the file
    user.update(parse_sets(args.sets))
    listings = read_listings(args.listings, args.sysfs_root, "hpnet env") if args.listings else ()
    resolution = resolve_env(
        args.profile or profile or "auto",
        sysfs_root=args.sysfs_root,
        listings=listings,
        user=user,
        environment=dict(os.environ),
        override_env=args.override_env,
        nccl_version=args.nccl_version,
    )
    # what launch withholds is not printed here either: left out of a format meant to be
    # sourced or passed on, <redacted> in JSON and --explain, with a finding saying so
    shown = for_display(resolution, exported=not args.explain and args.fmt != "json")
    if args.explain:
        print(explain(shown), end="")
        return 0
    output = render(shown, args.fmt)
    if args.fmt != "json":
        from hpnet.render.text import escape_controls  # noqa: PLC0415

        for finding in shown.findings:  # a title may name a device from a listing
            line = f"hpnet env: {finding.severity}: {finding.title}"
            print(escape_controls(line), file=sys.stderr)
    print(output, end="")
    return 0


def _config(path: str | None) -> tuple[str | None, dict[str, str]]:
    if path is None:
        return None, {}
    from hpnet.errors import InputError  # noqa: PLC0415
    from hpnet.inputfile import FileRole, read_regular_file  # noqa: PLC0415
    from hpnet.nccl.config import load_config  # noqa: PLC0415

    # a FIFO, a device or /proc/self/mem named by mistake is an error, not a hang
    role = FileRole(
        what="an hpnet config",
        code="config-unreadable",
        too_large_code="config-too-large",
        fix='pass the TOML file with `profile = "NAME"` and an [env] table to --config',
    )
    data = read_regular_file(path, role, max_bytes=1 << 20)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
            code="config-syntax",
            where=path,
            fix="save the config as UTF-8 TOML",
        ) from None
    return load_config(text, source=path)


def _nccl_version(text: str | None) -> str | None:
    from hpnet.nccl.config import check_nccl_version  # noqa: PLC0415

    return check_nccl_version(text)
