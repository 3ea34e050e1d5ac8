"""Store ring: the only code that touches the file system (readers, publisher, liveness)."""
