"""The commands' work, wired from the pipeline's parts; the CLI only parses and calls these.

One module a command family: :mod:`.record` (record, diagnose), :mod:`.report`, :mod:`.compare`,
:mod:`.lab` (demo, lab serve).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

Warn = Callable[[str], None]
StopSignals = Callable[[Callable[[str], None]], AbstractContextManager[None]]
