"""The compiled FTDC kernel (``ckptdiag/_ftdc_kernel.c``), or None where it was not built: every
caller then takes its numpy path, which does the same work, slower."""

from __future__ import annotations

from types import ModuleType

compiled: ModuleType | None
try:
    from ckptdiag import _ftdc_kernel as compiled
except ImportError:  # built without a C compiler
    compiled = None

__all__ = ["compiled"]
