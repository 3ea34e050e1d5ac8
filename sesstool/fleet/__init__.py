"""The fleet: the single-file commands over many logs (local or behind fsspec URLs) on Dask.

Ring: between engine and the outer ring (docs/architecture.md). It calls the engine's
entry points per file and the store for every byte it reads or writes; it never prints.
"""
