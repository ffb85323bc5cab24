"""Whether the compiled kernels are here: the FTDC delta decoder (``_ftdc_kernel``), the
recording line scanner (``_jsonl``) and the serverStatus reply reader (``_bsonpick``). Every
install path builds them (setup.py, where a C compiler exists); a source checkout run without
installing has none, and reads with the Python paths: the same results, slower. That is said
once, not left to be guessed from the time it takes."""

from __future__ import annotations

import importlib

KERNELS = ("ckptdiag._ftdc_kernel", "ckptdiag._jsonl", "ckptdiag._bsonpick")


def missing() -> tuple[str, ...]:
    """The compiled kernels that cannot be imported."""
    absent = []
    for name in KERNELS:
        try:
            importlib.import_module(name)
        except ImportError:
            absent.append(name)
    return tuple(absent)


def note() -> str | None:
    """The one line to say when a kernel is missing, or None."""
    absent = missing()
    if not absent:
        return None
    names = ", ".join(name.split(".")[-1] for name in absent)
    return (
        f"note: compiled kernels not built ({names}): FTDC, recordings and serverStatus replies are read "
        "by the Python paths, the same results, FTDC about 2x slower; 'pip install -e .' in the checkout "
        "builds them (needs a C compiler)"
    )
