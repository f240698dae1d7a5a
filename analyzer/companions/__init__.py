"""Companion inputs, read whole beside the traces: oratcptest output (`--baseline`) and AWR or Statspack
reports (`--awr`)."""
