"""`python -m moot.cli`: the `moot` command without its console script."""

from moot.cli import main

main()
