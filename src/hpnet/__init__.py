"""hpnet: make the high-performance network of a GPU cluster work for NCCL, and prove it.

Importing this package does no work and imports nothing heavy (it filters one torch
warning, below); the command line
lives in :mod:`hpnet.cli.main` and the node inventory in :mod:`hpnet.detect`.
"""

from __future__ import annotations

import warnings
from typing import Any

__version__ = "0.1.0"

# torch warns "Failed to initialize NumPy" as it imports where numpy is not installed;
# hpnet uses no numpy, and every rank of a job printed the line (issue 26): the one
# warning is filtered, in every process that imports hpnet before torch
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)

__all__ = ["__version__", "resolve_env"]


def __getattr__(name: str) -> Any:
    """``hpnet.resolve_env`` without importing it (and detection) with the package."""
    if name == "resolve_env":
        from hpnet.api import resolve_env  # noqa: PLC0415

        return resolve_env
    raise AttributeError(f"module 'hpnet' has no attribute {name!r}")
