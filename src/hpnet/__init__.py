"""hpnet: make the high-performance network of a GPU cluster work for NCCL, and prove it.

Importing this package does no work and imports nothing heavy; the command line
lives in :mod:`hpnet.cli.main` and the node inventory in :mod:`hpnet.detect`.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
