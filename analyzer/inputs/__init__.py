"""Inputs: the paths given -> the sources to read and the inputs skipped with their reasons (folders and
globs walked, archives and compressed layers listed, devices and pipes handled, limits kept)."""
