"""`python -m analyzer` and the `dgtrace` command: the command line, with Ctrl-C during start-up
(the imports take a moment) ending in one line and exit code 130 as it does later."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    try:
        from analyzer.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("dgtrace: interrupted\n")
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    main()
