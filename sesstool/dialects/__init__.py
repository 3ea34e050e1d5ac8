"""Log dialects: one package per dialect, the contract in ``base``, the list in ``registry``."""
