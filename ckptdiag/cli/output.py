"""How the command line speaks to its user on stderr."""

from __future__ import annotations

import click


def err(message: str) -> None:
    """One line on stderr, prefixed ``ckptdiag:``."""
    click.echo(f"ckptdiag: {message}", err=True)
