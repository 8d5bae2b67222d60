"""`python -m kbopt` is the `kbopt` command."""

import sys

from kbopt.cli import main

sys.exit(main())
