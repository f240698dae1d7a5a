"""Reduce: each parsed file, chunk by chunk -> its exchanges (stamps associated, messages paired, RFS waits
summed), spilled until matching; `ingest` reads, parses and reduces every source."""
