"""Batch over archives: any number of archived traces into an incremental, crash-safe Parquet dataset.

`run_batch(paths, out)` brings the dataset at `out` up to date (see `analyzer.batch.run`); the
unit of work is one Data Guard configuration's inputs for one day (`analyzer.batch.plan`), run on
a local process pool or a Dask cluster (`analyzer.batch.engine`); `read_table` and `trend` read
the dataset back (`analyzer.batch.read`).
"""
