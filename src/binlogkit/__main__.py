"""``python -m binlogkit``: the ``binlogkit`` command."""

from binlogkit.cli.main import main

main()
