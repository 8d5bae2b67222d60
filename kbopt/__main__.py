"""`python -m kbopt` is the `kbopt` command."""

import sys

from kbopt.cli import main

if __name__ == "__main__":  # not when a spawned worker process imports it
    sys.exit(main())
