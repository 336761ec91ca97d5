"""Builds hpnet's one compiled module, ``hpnet.ncclog._fastscan``, where a C compiler is.

The module makes ``hpnet verify`` read large logs faster (src/hpnet/ncclog/passes.py);
everything works without it. So a build without a compiler, or one that fails, says so
and goes on as pure Python. An editable install (``pip install -e .``) builds it beside
its source; a wheel carries it and is tagged for this interpreter and platform.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: the module's C files: the module and its counting pass, the erasers, the readers of a
#: large job's commonest new lines and the set of dead lines (each with its header, and
#: the byte tests and hash they share in _fastbytes.h)
SOURCES = (
    Path("src/hpnet/ncclog/_fastscan.c"),
    Path("src/hpnet/ncclog/_fasterase.c"),
    Path("src/hpnet/ncclog/_fastread.c"),
    Path("src/hpnet/ncclog/_fastset.c"),
)
MODULE = "_fastscan"


def compile_module(root: Path, out_dir: Path) -> Path | None:
    """The module compiled into ``out_dir``, or None (with the reason on stderr)."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths().get("include")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    if compiler is None or include is None or not (Path(include) / "Python.h").exists():
        print(
            "hpnet: no C compiler or Python headers here: hpnet.ncclog._fastscan is not "
            "built; hpnet verify reads large logs more slowly (everything else is the same)",
            file=sys.stderr,
        )
        return None
    target = out_dir / f"{MODULE}{suffix}"
    argv = [compiler, "-O2", "-fPIC", "-shared", f"-I{include}",
            *(str(root / source) for source in SOURCES), "-o", str(target)]  # fmt: skip
    try:
        subprocess.run(argv, check=True, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or exc
        print(f"hpnet: building hpnet.ncclog._fastscan failed ({detail}); pure Python is used",
              file=sys.stderr)  # fmt: skip
        return None
    return target


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        if version == "editable":  # found beside the source, where the install points
            compile_module(root, (root / SOURCES[0]).parent)
            return
        built = compile_module(root, Path(tempfile.mkdtemp(prefix="hpnet-build-")))
        if built is not None:
            build_data["force_include"][str(built)] = f"hpnet/ncclog/{built.name}"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
