"""The shared base, below every stage: errors and exit codes, the shared words, units, the frames that
cross stages (schemas), time zones, and the spill directory with its stop signals."""
