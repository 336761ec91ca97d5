"""Rendering of results for people: plain-text tables, nothing else."""
