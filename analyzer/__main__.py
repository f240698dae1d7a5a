"""`python -m analyzer` runs the dgtrace command line."""

from analyzer.cli import main

main()
