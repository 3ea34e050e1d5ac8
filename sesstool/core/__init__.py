"""Core ring: pure model, decoding, scanning, folding and planning. No file I/O, no click, no rich."""
