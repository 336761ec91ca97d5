"""Capture the sysfs subset hpnet reads into a text snapshot, and rebuild it.

The format is documented in ``tests/data/sysfs/FORMAT.md``. A snapshot lets a
node be diagnosed elsewhere (``python -m hpnet.node.snapshot capture / > node.tree``,
then ``materialize`` and ``hpnet detect --sysfs-root``), and is how the test
fixtures are stored.

    python -m hpnet.node.snapshot capture [ROOT]          # print a snapshot of ROOT (/)
    python -m hpnet.node.snapshot materialize FILE DIR    # rebuild it under DIR
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from hpnet.errors import HpnetError, ParseError
from hpnet.node.sysfs import BDF_RE, natural_key

__all__ = ["capture", "given_path", "materialize", "sysfs_root_from"]

HEADER = "# hpnet-sysfs-snapshot 1"

# Attributes worth keeping, by file name (see rdma/sysfs.py, node/netdevs.py, node/gpus.py).
_FILES = frozenset(
    {
        "node_guid", "sys_image_guid", "fw_ver", "hca_type", "board_id", "node_type",
        "node_desc", "state", "phys_state", "link_layer", "rate", "lid", "sm_lid",
        "lid_mask_count", "ibdev", "abi_version", "vendor", "device", "class", "numa_node",
        "operstate", "mtu", "speed", "type", "address", "ifindex", "iflink", "uevent",
        "dev_port", "slaves", "version", "parent",
    }
)  # fmt: skip
_DIRS = frozenset(
    {"ports", "gids", "gid_attrs", "types", "ndevs", "bonding", "bridge", "brif", "net",
     "infiniband_verbs"}
)  # fmt: skip
_LINKS = frozenset({"device", "driver", "master"})
_MODULES = (
    "nvidia", "nvidia_peermem", "nv_peer_mem", "ib_core", "ib_uverbs", "rdma_ucm", "mlx5_core",
    "mlx5_ib", "mlx4_core", "erdma", "irdma", "efa", "bnxt_re", "rdma_rxe", "siw",
)  # fmt: skip
# PCI class prefixes to keep from sys/bus/pci/devices: network (02), display (03), bridges (0604).
_PCI_CLASSES = ("0x02", "0x03", "0x0604")


def capture(root: Path) -> str:
    """A snapshot of what hpnet reads under ``root`` (read-only, never raises)."""
    walk = _Capture(root)
    walk.visit_class("sys/class/infiniband")
    walk.visit_class("sys/class/infiniband_verbs")
    walk.visit_class("sys/class/net")
    walk.visit_class("sys/bus/pci/devices", _kept_pci_devices(root))
    walk.follow_pending()
    walk.modules_and_device_nodes()
    return _render(walk.out, root)


class _Capture:
    """What a capture has read: path (relative to the root) -> value; a directory ends
    in ``/`` with an empty value, a link's value is `` -> target``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.out: dict[str, str] = {}
        #: link targets whose driver and PCI chain are still to be read
        self.pending: list[str] = []

    def rel(self, path: str) -> str:
        return os.path.relpath(path, self.root)

    def visit_dir(self, directory: str, depth: int) -> None:
        out, rel = self.out, self.rel
        try:
            names = sorted(os.listdir(directory), key=natural_key)
        except OSError:
            return
        out.setdefault(rel(directory) + "/", "")
        for name in names:
            full = os.path.join(directory, name)
            if os.path.islink(full):
                if name in _LINKS or directory.endswith("brif"):
                    out[rel(full)] = " -> " + os.readlink(full)
                    self.pending.append(os.path.realpath(full))
            elif os.path.isdir(full) and _in_table(directory):
                out[rel(full)] = "\0unreadable"  # how materialize stores `PATH ?`
            elif os.path.isdir(full):
                if (name in _DIRS or name.isdigit()) and depth < 6:
                    self.visit_dir(full, depth + 1)
            elif name in _FILES or _in_table(directory) or directory.endswith("bonding"):
                out[rel(full)] = _read(full)

    def visit_class(self, cls: str, keep: Iterable[str] | None = None) -> None:
        base = self.root / cls
        for name in sorted(os.listdir(base), key=natural_key) if base.is_dir() else []:
            full = str(base / name)
            if keep is not None and name not in keep:
                continue
            if os.path.islink(full):
                self.out[self.rel(full)] = " -> " + os.readlink(full)
                real = os.path.realpath(full)
                self.visit_dir(real, 0)
                self.add_pci_chain(real)
            elif os.path.isfile(full):
                self.out[self.rel(full)] = _read(full)

    def add_pci_chain(self, real: str) -> None:
        """The PCI devices above ``real``: their ids, NUMA node and driver."""
        out, rel = self.out, self.rel
        parts = Path(real).parts
        for i, part in enumerate(parts):
            if BDF_RE.match(part):
                chain_dir = str(Path(*parts[: i + 1]))
                for attr in ("vendor", "device", "class", "numa_node"):
                    attr_path = os.path.join(chain_dir, attr)
                    if os.path.isfile(attr_path):
                        out[rel(attr_path)] = _read(attr_path)
                driver = os.path.join(chain_dir, "driver")
                if os.path.islink(driver):
                    out[rel(driver)] = " -> " + os.readlink(driver)

    def follow_pending(self) -> None:
        while self.pending:
            target = self.pending.pop()
            driver = os.path.join(target, "driver")
            if os.path.islink(driver):  # e.g. a netdev's virtio parent -> virtio_net
                self.out[self.rel(driver)] = " -> " + os.readlink(driver)
            self.add_pci_chain(target)

    def modules_and_device_nodes(self) -> None:
        """The kernel modules hpnet asks about (and their versions), /dev/infiniband."""
        out, rel, root = self.out, self.rel, self.root
        for module in _MODULES:
            mod = root / "sys/module" / module
            if mod.is_dir():
                out.setdefault(rel(str(mod)) + "/", "")
                if (mod / "version").is_file():
                    out[rel(str(mod / "version"))] = _read(str(mod / "version"))
        dev_ib = root / "dev/infiniband"
        for name in sorted(os.listdir(dev_ib), key=natural_key) if dev_ib.is_dir() else []:
            out[rel(str(dev_ib / name))] = ""


def _kept_pci_devices(root: Path) -> list[str]:
    """The PCI devices of the classes hpnet reads (network, display, bridges)."""
    pci = root / "sys/bus/pci/devices"
    keep = []
    for name in sorted(os.listdir(pci), key=natural_key) if pci.is_dir() else []:
        cls = _read(str(pci / name / "class"))
        if cls.startswith(_PCI_CLASSES):
            keep.append(name)
    return keep


def _render(out: dict[str, str], root: Path) -> str:
    """The snapshot's text (tests/data/sysfs/FORMAT.md): an empty directory only where
    nothing under it was kept."""
    lines = [HEADER, f"# captured from {root} by hpnet.node.snapshot"]
    for path in sorted(out, key=natural_key):
        value = out[path]
        if path.endswith("/"):
            if not any(p.startswith(path) and p != path for p in out):
                lines.append(path)
        elif value.startswith(" -> "):
            lines.append(f"{path}{value}")
        elif value == "\0unreadable":
            lines.append(f"{path} ?")
        else:
            lines.append(f"{path} = {_escape(value)}")
    return "\n".join(lines) + "\n"


def _in_table(directory: str) -> bool:
    return directory.endswith(("/gids", "/types", "/ndevs"))


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().rstrip("\n")
    except OSError:
        return "\0unreadable"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append("\n" if text[i + 1] == "n" else text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def materialize(text: str, dest: Path, *, source: str = "<snapshot>") -> None:
    """Rebuild a snapshot under ``dest`` (which must exist).

    Raises :class:`~hpnet.errors.ParseError` for a malformed line or a path that
    would leave ``dest`` (also through a link an earlier line made).
    """
    real_dest = os.path.realpath(dest)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        if " -> " in line:
            path, target = line.split(" -> ", 1)
            kind = "link"
        elif " = " in line or line.endswith(" ="):
            path, _, target = line.partition(" =")
            target = target[1:] if target.startswith(" ") else target
            kind = "file"
        elif line.endswith(" ?"):
            path, target, kind = line[:-2], "", "unreadable"
        elif line.endswith("/"):
            path, target, kind = line, "", "dir"
        else:
            raise ParseError(
                f"not a snapshot entry: {line[:60]!r}",
                source=source,
                line_number=number,
                fix="each line is `PATH = TEXT`, `PATH -> TARGET`, `PATH/` or `PATH ?`",
            )
        path = path.strip()
        full = dest / path
        # Resolve what exists of the path (links made by earlier lines included):
        # `sys/esc -> ../../outside` then `sys/esc/x = …` must not write outside.
        if (
            path.startswith("/")
            or (kind == "link" and target.startswith("/"))
            or not _inside(os.path.realpath(full), real_dest)
        ):
            raise ParseError(
                f"path leaves the snapshot root: {line[:60]!r}",
                source=source,
                line_number=number,
                fix="paths and link targets must be relative and stay inside the root",
            )
        if kind in {"dir", "unreadable"}:
            full.mkdir(parents=True, exist_ok=True)
            continue
        full.parent.mkdir(parents=True, exist_ok=True)
        if kind == "link":
            if not os.path.lexists(full):
                full.symlink_to(target)
        else:
            full.write_text(_unescape(target) + ("\n" if target or kind == "file" else ""))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "capture":
        sys.stdout.write(capture(Path(argv[1] if len(argv) > 1 else "/")))
        return 0
    if len(argv) == 3 and argv[0] == "materialize":
        try:
            materialize(Path(argv[1]).read_text(), Path(argv[2]), source=argv[1])
        except HpnetError as exc:
            sys.stderr.write(exc.render() + "\n")
            return int(exc.exit_code)
        except OSError as exc:
            sys.stderr.write(
                f"error[snapshot-io]: {exc.strerror} — {exc.filename} — check the path\n"
            )
            return 2
        return 0
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))


#: the first line of every recorded tree (``tests/data/sysfs/*.tree``)
HEADER = "# hpnet-sysfs-snapshot"
#: the recorded tree file each temporary root was rebuilt from (what a report names)
TREE_FILES: dict[str, str] = {}
#: a recorded tree larger than this is not one (the largest shipped is under 1 MiB)
MAX_TREE_BYTES = 64 << 20


def sysfs_root_from(value: str) -> str:
    """``--sysfs-root``'s directory: ``value`` itself, or for a recorded tree file
    (``tests/data/sysfs/cx6-ib-dgx.tree``) a temporary directory it is rebuilt in,
    removed when the process exits."""
    if not os.path.isfile(value):
        return value  # a directory, or a missing path (detect says which)
    import atexit  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from hpnet.errors import InputError  # noqa: PLC0415
    from hpnet.inputfile import FileRole, read_regular_file  # noqa: PLC0415

    role = FileRole(
        what="a recorded tree",
        code="sysfs-root-unreadable",
        too_large_code="sysfs-root-too-large",
        fix="pass a directory that contains sys/, or a recorded .tree file",
    )
    text = read_regular_file(value, role, max_bytes=MAX_TREE_BYTES).decode("utf-8", "replace")
    if not text.startswith(HEADER):
        raise InputError(
            f"a file that is not a recorded tree (its first line is not {HEADER!r})",
            code="sysfs-root-not-a-tree",
            where=value,
            fix="pass the directory that contains sys/ (for a live node: /), or a .tree file "
            "`python -m hpnet.node.snapshot capture` wrote",
        )
    root = tempfile.mkdtemp(prefix="hpnet-tree-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    materialize(text, Path(root), source=value)
    TREE_FILES[root] = value
    return root


def given_path(root: str) -> str:
    """A ``--sysfs-root`` as the user gave it, to be shown: the recorded tree file a
    temporary root was rebuilt from (:func:`sysfs_root_from`; that root is gone when
    hpnet exits), else ``root`` itself.

    >>> given_path("/srv/node-a")
    '/srv/node-a'
    """
    return TREE_FILES.get(root, root)
