"""Entry point of `python -m app`: the `lade` command line (the engine's commands and the app's)."""

from .cli import main_exit

main_exit()
