"""Analysis: pure functions from samples to figures (no I/O, no printing)."""
