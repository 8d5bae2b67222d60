"""`python -m kbopt` is the `kbopt` command."""

from kbopt.cli import run

if __name__ == "__main__":  # not when a spawned worker process imports it
    run()
