# SPDX-License-Identifier: MIT
"""python3 -m vmsampler: see vmsampler.cli."""
import sys

from .cli import main

sys.exit(main())
