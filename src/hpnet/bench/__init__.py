"""``hpnet bench``: collective benchmarks with nccl-tests' semantics, nccl-tests import,
and an end-to-end training benchmark. Only the worker modules import torch."""
