"""``python -m conformance`` is the ``conformance`` command."""

import sys

from .cli import main

sys.exit(main())
