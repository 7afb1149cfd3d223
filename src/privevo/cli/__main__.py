"""``python -m privevo.cli``."""

import sys

from . import main

sys.exit(main())
