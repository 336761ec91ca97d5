"""Reading saved listings from files: the edge in front of the pure parsers."""

from __future__ import annotations

from hpnet.errors import InputError
from hpnet.inputfile import FileRole, open_regular_file, read_bounded

__all__ = ["MAX_LISTING_BYTES", "decode_listing", "read_listing_file"]

#: Largest listing ``--from`` reads; real listings are kilobytes.
MAX_LISTING_BYTES = 16 * 1024 * 1024


def read_listing_file(path: str) -> tuple[str, str]:
    """Read a saved listing for :func:`inventory_from_listings`.

    Only regular files, at most :data:`MAX_LISTING_BYTES`: ``/dev/zero``, a FIFO or
    ``/proc/self/mem`` given by mistake gives an error, not a hang, an exhausted memory
    or a traceback (:mod:`hpnet.inputfile`).
    """
    role = FileRole(
        what="a saved listing",
        code="listing-not-a-file",
        too_large_code="listing-too-large",
        missing_code="listing-not-found",
        unreadable_code="listing-unreadable",
        fix="pass the file holding ibv_devinfo / ibstat / show_gids / ibdev2netdev output",
    )
    with open_regular_file(path, role) as handle:
        data = read_bounded(handle, path, role, max_bytes=MAX_LISTING_BYTES)
    return path, decode_listing(data, path)


def decode_listing(data: bytes, source: str) -> str:
    """Check the size and the content of listing bytes and decode them."""
    if len(data) > MAX_LISTING_BYTES:
        raise InputError(
            f"is larger than {MAX_LISTING_BYTES >> 20} MiB: too large to be a saved listing",
            code="listing-too-large",
            where=source,
            fix="pass the output of one ibv_devinfo / ibstat / show_gids / ibdev2netdev run",
        )
    if b"\x00" in data[:4096]:
        raise InputError(
            "is a binary file, not a saved listing",
            code="listing-binary",
            where=source,
            fix="pass the text output of ibv_devinfo / ibstat / show_gids / ibdev2netdev",
        )
    return data.decode("utf-8", errors="replace")
