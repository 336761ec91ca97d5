"""Reading saved listings from files: the edge in front of the pure parsers."""

from __future__ import annotations

import os
import stat

from hpnet.errors import InputError

__all__ = ["MAX_LISTING_BYTES", "decode_listing", "read_listing_file"]

#: Largest listing ``--from`` reads; real listings are kilobytes.
MAX_LISTING_BYTES = 16 * 1024 * 1024


def read_listing_file(path: str) -> tuple[str, str]:
    """Read a saved listing for :func:`inventory_from_listings`.

    Only regular files, at most :data:`MAX_LISTING_BYTES`: ``/dev/zero`` or a FIFO
    given by mistake gives an error, not a hang or an exhausted memory.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InputError(
            "no such file",
            code="listing-not-found",
            where=path,
            fix="check the path given to --from",
        ) from None
    except IsADirectoryError:
        raise _not_a_listing(path, "is a directory") from None
    except OSError as exc:
        raise InputError(
            f"cannot read the file ({exc.strerror})",
            code="listing-unreadable",
            where=path,
            fix="make it readable or copy it somewhere readable",
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise _not_a_listing(path, "is a directory")
        if not stat.S_ISREG(mode):
            raise _not_a_listing(path, "is not a regular file (a device, FIFO or socket)")
        data = os.read(fd, MAX_LISTING_BYTES + 1)
    finally:
        os.close(fd)
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


def _not_a_listing(path: str, what: str) -> InputError:
    return InputError(
        what,
        code="listing-not-a-file",
        where=path,
        fix="pass the file holding ibv_devinfo / ibstat / show_gids / ibdev2netdev output",
    )
