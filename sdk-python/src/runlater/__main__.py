"""python -m runlater module:app  is the same as  runlater-worker module:app."""

import sys

from .cli import main

sys.exit(main())
