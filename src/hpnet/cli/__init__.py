"""The ``hpnet`` command line: :mod:`hpnet.cli.main` plus one module per command."""
