"""``python -m helpers``: the project's command line (see helpers.cli)."""
from .cli import main

raise SystemExit(main())
