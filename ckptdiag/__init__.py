"""ckptdiag: find and fix MongoDB WiredTiger checkpoint stalls."""

__version__ = "0.1.0"
