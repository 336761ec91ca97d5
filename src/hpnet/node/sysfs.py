"""Read files under a root directory the way sysfs must be read.

Every sysfs read in hpnet goes through :class:`FsRoot`, so a recorded tree
(``--sysfs-root DIR``, the fixtures under ``tests/data/sysfs``) and the live ``/``
are read by the same code. Reads never raise for a missing or unreadable file:
sysfs answers EINVAL for some attributes (an empty GID slot's type, the speed of
a down link), and callers decide whether that is a problem.

A recorded tree may come from someone else, so reads are defensive: only regular
files, at most :data:`MAX_ATTRIBUTE_BYTES` (sysfs attributes are at most a page),
opened without blocking (a FIFO cannot hang us), and never through a link that
leaves the root.
"""

from __future__ import annotations

import os
import re
import stat

__all__ = ["BDF_RE", "MAX_ATTRIBUTE_BYTES", "FsRoot", "natural_key", "pci_chain"]

#: sysfs attributes are at most one page; /proc/driver/nvidia/version is smaller.
MAX_ATTRIBUTE_BYTES = 65536

#: A PCI function address, ``domain:bus:device.function`` (``0000:3b:00.0``).
BDF_RE = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


class FsRoot:
    """A filesystem root; every path given to its methods is relative to it.

    >>> FsRoot("/").read("proc/sys/kernel/ostype")
    'Linux'

    Paths are plain strings joined with ``os.path``: this runs at every start of
    ``hpnet detect``, where ``pathlib``'s import and per-path cost show.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.fspath(root)
        self._real_root = os.path.realpath(self.root)
        self._prefix = self._real_root.rstrip("/") + "/"

    @property
    def is_live(self) -> bool:
        """True when this is the running system's ``/`` (not a recorded tree)."""
        return self._real_root == "/"

    def path(self, rel: str) -> str:
        """The full path of ``rel`` under the root."""
        return os.path.join(self.root, rel)

    def _opened_inside(self, fd: int) -> bool:
        """Whether an opened file lies under the root (always, for the live root).

        One ``readlink`` of ``/proc/self/fd/N`` names the file actually opened,
        links resolved; ``os.path.realpath`` costs an ``lstat`` per path component
        and made reading a recorded tree three times slower.
        """
        if self.is_live:
            return True
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return False
        return real.startswith(self._prefix)

    def display(self, rel: str) -> str:
        """How to name ``rel`` in messages: the absolute path a user can ``cat``."""
        return self.path(rel)

    def read(self, rel: str) -> str | None:
        """The file's text without surrounding white space; None if it is missing,
        unreadable, not a regular file, outside the root or not text."""
        try:
            fd = os.open(self.path(rel), os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode) or not self._opened_inside(fd):
                return None
            data = os.read(fd, MAX_ATTRIBUTE_BYTES)
        except OSError:
            return None
        finally:
            os.close(fd)
        if b"\x00" in data:
            return None  # not a text attribute (or a hostile tree): nothing we can use
        return data.decode("utf-8", errors="replace").strip()

    def read_bytes(self, rel: str, limit: int = 4096) -> bytes | None:
        """Up to ``limit`` bytes of a regular file (PCI config space), or None."""
        try:
            fd = os.open(self.path(rel), os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode) or not self._opened_inside(fd):
                return None
            return os.read(fd, limit)
        except OSError:
            return None
        finally:
            os.close(fd)

    def read_int(self, rel: str, *, base: int = 10) -> int | None:
        """An integer attribute (``numa_node``, ``mtu``; ``0x3`` with base 16)."""
        text = self.read(rel)
        if text is None:
            return None
        try:
            return int(text, base)
        except ValueError:
            return None

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` exists (a dangling link counts: it names something)."""
        return os.path.lexists(self.path(rel))

    def is_dir(self, rel: str) -> bool:
        """Whether ``rel`` is a directory (its entries are read through :meth:`read`,
        which refuses files outside the root)."""
        return os.path.isdir(self.path(rel))

    def listdir(self, rel: str, *, natural: bool = True, prefix: str = "") -> list[str]:
        """Entry names (those starting with ``prefix``), [] if absent.

        Sorted naturally (``mlx5_2`` before ``mlx5_10``), or plainly with
        ``natural=False``: PCI addresses are fixed-width hex, and plain order is
        bus order (``0000:07:00.0`` before ``0000:0f:00.0``).
        """
        try:
            names = os.listdir(self.path(rel))
        except OSError:
            return []
        if prefix:
            names = [n for n in names if n.startswith(prefix)]
        return sorted(names, key=natural_key) if natural else sorted(names)

    def resolve(self, rel: str) -> str | None:
        """The path ``rel`` leads to after following links, relative to the root.

        None when it does not exist or leads outside the root.
        """
        full = self.path(rel)
        if not os.path.exists(full):
            return None
        real = os.path.realpath(full)
        if self.is_live:
            return real.lstrip("/")
        if not real.startswith(self._prefix):
            return None
        return real[len(self._prefix) :]

    def link_name(self, rel: str) -> str | None:
        """The last component of what a symlink points to (``driver`` -> ``mlx5_core``)."""
        try:
            target = os.readlink(self.path(rel))
        except OSError:
            return None
        return target.rstrip("/").rsplit("/", 1)[-1] or None

    def can_open(self, rel: str) -> bool:
        """Whether this process may read and write the file (a device node)."""
        return os.access(self.path(rel), os.R_OK | os.W_OK)


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders embedded numbers numerically (``uverbs2`` < ``uverbs10``)."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part
    )


def pci_chain(device_path: str) -> tuple[str, ...]:
    """The PCI hierarchy of a device from its resolved sysfs path.

    ``sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0`` gives
    ``("pci0000:3a", "0000:3a:00.0", "0000:3b:00.0")``: the root bus (one per PCI
    host bridge) then every bridge and the function itself. Empty for non-PCI
    (virtual) devices.
    """
    parts = device_path.split("/")
    chain: list[str] = []
    for part in parts:
        if part.startswith("pci") and re.fullmatch(r"pci[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}", part):
            chain = [part.lower()]
        elif chain and BDF_RE.match(part):
            chain.append(part.lower())
        elif chain and len(chain) > 1:
            break
    return tuple(chain) if len(chain) > 1 else ()
