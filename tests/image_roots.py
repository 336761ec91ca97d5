"""Image roots for the `hpnet image` tests, laid out from real listings: the files
Debian 12's rdma-core packages install, and the lent GPU machine's CUDA image."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import DATA

__all__ = ["debian_rdma_core", "device_image", "image_root", "os_release"]


def image_root(tmp_path: Path, files: list[str], name: str = "image") -> Path:
    """A root holding ``files`` (empty; a name ending in ``/`` is a directory). A
    library name that another listed name extends (``libnccl.so.2`` and
    ``libnccl.so.2.28.3``) is made a link to it, as ldconfig and the packages lay them."""
    root = tmp_path / name
    (root / "sys").mkdir(parents=True)  # `docker export` keeps the empty mount points
    listed = sorted(f for f in files if not f.endswith("/"))
    for entry in files:
        path = root / entry.lstrip("/")
        if entry.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        longer = [f for f in listed if f.startswith(entry + ".") and ".so." in entry + "."]
        if longer and ".so" in entry:
            path.symlink_to(Path(longer[-1]).name)
        else:
            path.touch()
    return root


def debian_rdma_core(skip: tuple[str, ...] = ()) -> list[str]:
    """The files Debian 12's libibverbs1, ibverbs-providers and librdmacm1 install."""
    listing = (DATA / "packages" / "dpkg-L-rdma-core-44.0-debian12.txt").read_text()
    paths = [line for line in listing.splitlines() if line.startswith("/") and line != "/."]
    folders = {p.rsplit("/", 1)[0] for p in paths}  # dpkg -L lists directories too
    return [p for p in paths if p not in folders and not p.endswith(skip)]


def device_image() -> list[str]:
    """The lent GPU machine's CUDA 13 / PyTorch image, as its recorded listing shows it."""
    text = (DATA / "images" / "cuda13-torch-ubuntu24.04.facts.txt").read_text()
    sections: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line
            sections[current] = []
        else:
            sections[current].append(line)
    libs = next(v for k, v in sections.items() if k.startswith("## ls libraries"))
    drivers = next(v for k, v in sections.items() if k.startswith("## ls /etc/libibverbs.d"))
    files = [f"/usr/lib/x86_64-linux-gnu/{n}" for n in libs if "." in n]
    files += [f"/etc/libibverbs.d/{n}" for n in drivers]
    files += [f"/usr/lib/x86_64-linux-gnu/libibverbs/lib{n[:-7]}-rdmav34.so" for n in drivers]
    site = next(k for k in sections if k.startswith("## site-packages")).split(": ")[1].split()[0]
    files += [line + "/" for line in text.splitlines() if line.startswith(site + "/nvidia_nccl")]
    return files


def os_release(root: Path, distro_id: str, version: str) -> None:
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc" / "os-release").write_text(f'ID={distro_id}\nVERSION_ID="{version}"\n')
