"""NCCL knowledge: the variable catalog and its validators, environment resolution."""
