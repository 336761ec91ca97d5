"""The options every node-reading command shares: which node, and how to read it."""

from __future__ import annotations

import argparse
import sys

from hpnet.errors import UsageError

__all__ = ["add_node_arguments", "read_listings"]


def add_node_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sysfs-root DIR`` (a recorded tree) and ``--from FILE`` (saved tool output)."""
    parser.add_argument(
        "--sysfs-root",
        default="/",
        metavar="DIR",
        help="read sysfs and /dev under DIR instead of / (default: /)",
    )
    parser.add_argument(
        "--from",
        dest="listings",
        action="append",
        default=[],
        metavar="FILE",
        help="read saved ibv_devinfo / ibstat / show_gids / ibdev2netdev / rdma link output "
        "(repeatable; - is standard input)",
    )


def read_listings(paths: tuple[str, ...], sysfs_root: str, command: str) -> list[tuple[str, str]]:
    """``(source, text)`` for each ``--from`` (``-`` is standard input)."""
    if sysfs_root != "/":
        raise UsageError(
            "--from and --sysfs-root describe different nodes",
            code="usage",
            where=command,
            fix="give one of them",
        )
    from hpnet.inputfile import FileRole, read_bounded  # noqa: PLC0415
    from hpnet.rdma.listings.files import (  # noqa: PLC0415
        MAX_LISTING_BYTES,
        decode_listing,
        read_listing_file,
    )

    stdin = FileRole(
        what="a saved listing",
        code="listing-unreadable",
        too_large_code="listing-too-large",
        fix="pipe in the output of one ibv_devinfo / ibstat / show_gids / ibdev2netdev run",
    )
    return [
        (
            "<stdin>",
            decode_listing(
                read_bounded(sys.stdin.buffer, "<stdin>", stdin, max_bytes=MAX_LISTING_BYTES),
                "<stdin>",
            ),
        )
        if path == "-"
        else read_listing_file(path)
        for path in paths
    ]
