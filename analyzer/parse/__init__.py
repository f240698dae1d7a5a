"""Parse: a source's bytes -> numbered lines -> typed tables, one per line family (fast paths, then the
lark grammars, which are the specification); what a file is (identity, process streams, its tim clock)."""
