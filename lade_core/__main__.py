"""Entry point of `python -m lade_core`."""

import sys

from .cli import main

sys.exit(main())
