"""Versions of what NCCL stands on: driver, CUDA, NCCL, torch, rdma-core.

Cheap by design (``hpnet detect`` must start in tens of milliseconds): library
versions come from file names and package metadata, torch is never imported,
and only NCCL is loaded (``ncclGetVersion``), because its version is not in its
file name when installed from a wheel.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from hpnet.node.gpudirect import GpuDirect
from hpnet.node.gpus import GpuReport
from hpnet.node.sysfs import FsRoot
from hpnet.result import Problem
from hpnet.runner import Runner

__all__ = [
    "TORCH_PROBE",
    "LibraryInfo",
    "NcclInfo",
    "TorchInfo",
    "Versions",
    "decode_nccl_version",
    "find_library",
    "find_provider",
    "library_dirs",
    "nccl_from_dlopen",
    "nccl_from_wheels",
    "parse_torch_probe",
    "parse_torch_version_py",
    "rdma_core_from_libibverbs",
    "read_torch",
    "read_versions",
    "soname_version",
]

# Where distributions put shared libraries (Debian multiarch, RHEL lib64, /usr/local).
DEFAULT_LIB_DIRS = (
    "usr/lib/x86_64-linux-gnu",
    "usr/lib/aarch64-linux-gnu",
    "usr/lib64",
    "usr/lib",
    "lib/x86_64-linux-gnu",
    "lib/aarch64-linux-gnu",
    "lib64",
    "lib",
    "usr/local/lib",
    "usr/local/lib64",
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LibraryInfo:
    name: str  # libibverbs, librdmacm, or a provider such as mlx5
    path: str | None  # None when not found
    version: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NcclInfo:
    version: str
    path: str | None
    source: str  # "libnccl.so.2 via the dynamic loader" or "wheel nvidia-nccl-cu12"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class TorchInfo:
    version: str
    cuda: str | None  # None for CPU builds
    nccl: str | None  # the NCCL torch uses, if known
    #: where ``nccl`` comes from: "wheel pin" (torch's METADATA, torch not imported)
    #: or "torch.cuda.nccl.version()" (``--torch``: torch imported in a child process)
    nccl_source: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Versions:
    nvidia_driver: str | None
    cuda_driver: str | None
    nccl: tuple[NcclInfo, ...]
    torch: TorchInfo | None
    rdma_core: str | None
    libibverbs: LibraryInfo
    librdmacm: LibraryInfo
    providers: tuple[LibraryInfo, ...]
    kernel: str | None


def decode_nccl_version(code: int) -> str:
    """Decode ``ncclGetVersion``'s integer.

    ``NCCL_VERSION(X,Y,Z)`` is ``X*1000+Y*100+Z`` up to 2.8 and ``X*10000+Y*100+Z``
    from 2.9 on (``src/nccl.h.in``).

    >>> decode_nccl_version(21805), decode_nccl_version(2804)
    ('2.18.5', '2.8.4')
    """
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def nccl_from_dlopen(soname: str = "libnccl.so.2") -> NcclInfo | None:
    """Load NCCL the way a process would and ask it its version; None if absent."""
    import ctypes  # noqa: PLC0415 - start-up cost paid only on a live node

    try:
        lib = ctypes.CDLL(soname)
    except OSError:
        return None
    code = ctypes.c_int(0)
    try:
        status = lib.ncclGetVersion(ctypes.byref(code))
    except AttributeError:
        return None
    if status != 0 or code.value <= 0:
        return None
    return NcclInfo(
        version=decode_nccl_version(code.value),
        path=_loaded_path(soname),
        source=f"{soname} via the dynamic loader",
    )


def _loaded_path(soname: str) -> str | None:
    """Where the dynamic loader found ``soname``, from /proc/self/maps."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    stem = soname.split(".so", 1)[0] + ".so"
    for line in maps.splitlines():
        path = line.rsplit(" ", 1)[-1]
        if "/" in path and Path(path).name.startswith(stem):
            return path
    return None


def _dist_infos(site_dirs: Iterable[str], prefix: str) -> list[tuple[Path, str, str]]:
    """``(site_dir, name, version)`` of installed distributions whose normalized
    name starts with ``prefix``, from ``<name>-<version>.dist-info`` directory
    names (PEP 427/491 spelling). Reading names is ~100x cheaper than importing
    ``importlib.metadata``, which matters for a command that must start fast.
    """
    found = []
    for site in site_dirs:
        try:
            names = os.listdir(site)
        except OSError:
            continue
        for entry in names:
            if entry.startswith(prefix) and entry.endswith(".dist-info"):
                name, _, version = entry[: -len(".dist-info")].partition("-")
                found.append((Path(site), name, version))
    return found


def nccl_from_wheels(site_dirs: Iterable[str]) -> tuple[NcclInfo, ...]:
    """NCCL installed as a Python wheel (``nvidia-nccl-cu12`` and kin), which is
    what PyTorch's CUDA builds load: ``nvidia/nccl/lib/libnccl.so.2``."""
    found = []
    for site, name, version in _dist_infos(site_dirs, "nvidia_nccl"):
        lib = site / "nvidia" / "nccl" / "lib" / "libnccl.so.2"
        found.append(
            NcclInfo(
                version=version,
                path=str(lib) if lib.exists() else None,
                source=f"wheel {name.replace('_', '-')}",
            )
        )
    return tuple(found)


_TORCH_FIELD = re.compile(r"^(__version__|cuda)\s*(?::[^=]*)?=\s*(.+)$", re.MULTILINE)
_NCCL_PIN = re.compile(r"^Requires-Dist:\s*nvidia-nccl-cu\d+\s*==\s*([\w.]+)", re.MULTILINE)


def parse_torch_version_py(text: str) -> tuple[str | None, str | None]:
    """``(version, cuda)`` from torch's generated ``torch/version.py`` (pure).

    >>> parse_torch_version_py("__version__ = '2.5.1+cu124'\\ncuda: Optional[str] = '12.4'\\n")
    ('2.5.1+cu124', '12.4')
    """
    fields: dict[str, str | None] = {}
    for match in _TORCH_FIELD.finditer(text):
        value = match.group(2).strip()
        fields[match.group(1)] = None if value == "None" else value.strip("'\"")
    return fields.get("__version__"), fields.get("cuda")


def read_torch(site_dirs: Iterable[str]) -> TorchInfo | None:
    """torch's version, CUDA and the NCCL its wheel pins, without importing torch.

    The pin is the ``Requires-Dist: nvidia-nccl-cuXX==V`` line of torch's
    ``METADATA``: the NCCL that ``import torch`` will load.
    """
    sites = list(site_dirs)
    for site, _, _ in _dist_infos(sites, "torch-") or [(Path(s), "", "") for s in sites]:
        version_py = site / "torch" / "version.py"
        if not version_py.is_file():
            continue
        try:
            # a damaged or foreign file is no torch, not a crash
            version, cuda = parse_torch_version_py(version_py.read_text(errors="replace"))
        except OSError:
            continue
        nccl = None
        for info in site.glob("torch-*.dist-info/METADATA"):
            try:
                pin = _NCCL_PIN.search(info.read_text(errors="replace"))
            except OSError:
                continue
            nccl = pin.group(1) if pin else None
        if version:
            return TorchInfo(
                version=version, cuda=cuda, nccl=nccl, nccl_source="wheel pin" if nccl else None
            )
    return None


# Run in a child process by `hpnet detect --torch`: importing torch takes seconds and
# may fail in ways that must not take hpnet down. Prints one JSON line last.
TORCH_PROBE = """\
import json, torch
try:
    import torch.cuda.nccl as nccl
    raw = nccl.version()
except Exception:
    raw = None
print(json.dumps({"version": torch.__version__, "cuda": torch.version.cuda, "nccl": raw}))
"""


def parse_torch_probe(stdout: str) -> TorchInfo | None:
    """The :data:`TORCH_PROBE` child's answer (pure); None if there is none.

    ``torch.cuda.nccl.version()`` returns a tuple ``(2, 28, 9)`` in current torch
    and an integer code (``2708``) in old releases.

    >>> info = parse_torch_probe('{"version": "2.11.0+cu130", "cuda": "13.0", "nccl": [2, 28, 9]}')
    >>> info.nccl, info.nccl_source
    ('2.28.9', 'torch.cuda.nccl.version()')
    """
    import json  # noqa: PLC0415 - only with --torch

    for line in reversed(stdout.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("version"), str):
            continue
        raw = data.get("nccl")
        if isinstance(raw, list) and all(isinstance(part, int) for part in raw):
            nccl: str | None = ".".join(str(part) for part in raw)
        elif isinstance(raw, int):
            nccl = decode_nccl_version(raw)
        else:
            nccl = None
        cuda = data.get("cuda")
        return TorchInfo(
            version=data["version"],
            cuda=cuda if isinstance(cuda, str) else None,
            nccl=nccl,
            nccl_source="torch.cuda.nccl.version()" if nccl else None,
        )
    return None


def library_dirs(fs: FsRoot, env: Mapping[str, str]) -> tuple[str, ...]:
    """Directories (relative to the root) the dynamic loader searches.

    ``LD_LIBRARY_PATH`` first (live node only), then ``/etc/ld.so.conf`` and its
    includes, then the distributions' defaults.
    """
    dirs: list[str] = []
    if fs.is_live:
        dirs += [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
    dirs += _ld_so_conf_dirs(fs, "etc/ld.so.conf", depth=0)
    dirs += DEFAULT_LIB_DIRS
    seen: dict[str, None] = {}
    for entry in dirs:
        seen.setdefault(entry.strip("/"), None)
    return tuple(d for d in seen if d)


def _ld_so_conf_dirs(fs: FsRoot, rel: str, depth: int) -> list[str]:
    text = fs.read(rel)
    if text is None or depth > 3:
        return []
    dirs: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include "):
            pattern = line.split(None, 1)[1].strip().lstrip("/")
            for match in sorted(glob.glob(os.path.join(fs.root, pattern))):
                dirs += _ld_so_conf_dirs(fs, os.path.relpath(match, fs.root), depth + 1)
        else:
            dirs.append(line)
    return dirs


def find_library(fs: FsRoot, dirs: Iterable[str], stem: str) -> str | None:
    """The real file behind ``<stem>*`` in the first directory that has one."""
    for directory in dirs:
        names = fs.listdir(directory, prefix=stem)
        if names:
            # Prefer the fully versioned file (libibverbs.so.1.14.50.0) the links lead to.
            resolved = fs.resolve(f"{directory}/{names[0]}")
            return "/" + (resolved or f"{directory}/{names[0]}")
    return None


def soname_version(path: str) -> str | None:
    """The version in a shared library's file name (pure).

    >>> soname_version("/usr/lib/x86_64-linux-gnu/librdmacm.so.1.3.44.0")
    '1.3.44.0'
    """
    _, sep, version = path.rpartition(".so.")
    return version if sep and version else None


_VERBS_FILE = re.compile(r"libibverbs\.so\.1\.(\d+)\.(\d+)\.(\d+)$")


def rdma_core_from_libibverbs(path: str) -> str | None:
    """rdma-core's version from libibverbs' file name (pure).

    rdma-core installs ``libibverbs.so.1.<ABI>.<PACKAGE_VERSION>``
    (``buildlib/rdma_functions.cmake``), e.g. ``libibverbs.so.1.14.50.0`` for v50.0.

    >>> rdma_core_from_libibverbs("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0")
    '50.0'
    """
    match = _VERBS_FILE.search(path)
    return f"{match.group(2)}.{match.group(3)}" if match else None


def find_provider(fs: FsRoot, dirs: Iterable[str], provider: str) -> str | None:
    """The provider library ``<dir>/libibverbs/lib<provider>-rdmav<N>.so``, if installed."""
    for directory in dirs:
        for name in fs.listdir(f"{directory}/libibverbs", prefix=f"lib{provider}-rdmav"):
            if ".so" in name:
                return f"/{directory}/libibverbs/{name}"
    return None


def read_versions(
    fs: FsRoot,
    *,
    env: Mapping[str, str],
    python_path: Sequence[str],
    drivers: Sequence[str],
    gpu_report: GpuReport,
    gpudirect: GpuDirect,
    torch_python: str | None,
    torch_timeout_seconds: float,
    runner: Runner,
    problems: list[Problem],
) -> Versions:
    """Everything under :class:`Versions`, for the node under ``fs``.

    ``drivers`` are the provider families of the RDMA devices found (their
    provider libraries are looked for); ``torch_python`` runs :data:`TORCH_PROBE`
    when given. NCCL is loaded only on the live root (``ncclGetVersion``).
    """
    dirs = library_dirs(fs, env)
    verbs_path = find_library(fs, dirs, "libibverbs.so.1")
    rdmacm_path = find_library(fs, dirs, "librdmacm.so.1")
    loaded = nccl_from_dlopen() if fs.is_live else None
    site_dirs = [entry for entry in python_path if entry.endswith("-packages")]
    wheels = [w for w in nccl_from_wheels(site_dirs) if not loaded or w.path != loaded.path]
    return Versions(
        nvidia_driver=gpu_report.driver_version or gpudirect.nvidia_module_version,
        cuda_driver=gpu_report.cuda_driver_version,
        nccl=(loaded, *wheels) if loaded else tuple(wheels),
        torch=_torch(site_dirs, torch_python, torch_timeout_seconds, runner, problems),
        rdma_core=rdma_core_from_libibverbs(verbs_path) if verbs_path else None,
        libibverbs=_library("libibverbs", verbs_path),
        librdmacm=_library("librdmacm", rdmacm_path),
        providers=tuple(_library(d, find_provider(fs, dirs, d)) for d in drivers),
        kernel=gpudirect.kernel_release,
    )


def _library(name: str, path: str | None) -> LibraryInfo:
    return LibraryInfo(name=name, path=path, version=soname_version(path) if path else None)


def _torch(
    site_dirs: Sequence[str],
    torch_python: str | None,
    timeout_seconds: float,
    runner: Runner,
    problems: list[Problem],
) -> TorchInfo | None:
    """torch from its files; with ``torch_python``, as torch itself reports."""
    from_files = read_torch(site_dirs)
    if torch_python is None:
        return from_files
    result = runner((torch_python, "-c", TORCH_PROBE), timeout_seconds=timeout_seconds)
    probed = parse_torch_probe(result.stdout) if result.ok else None
    if probed is None:
        detail = (result.stderr or result.stdout).strip().splitlines()
        problems.append(
            Problem(
                code="torch-probe-failed",
                what=f"importing torch failed (exit {result.returncode}): "
                + (detail[-1][:200] if detail else "no output"),
                where=f"{torch_python} -c 'import torch'",
            )
        )
        return from_files
    return probed
