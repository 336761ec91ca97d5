"""``python -m hpnet`` runs the command line."""

from hpnet.cli.main import main

raise SystemExit(main())
