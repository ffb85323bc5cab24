from collections.abc import Callable
from typing import Any

def pick(raw: bytes, tree: tuple[tuple[bytes, Any], ...], whole: Callable[[bytes], Any], /) -> dict[str, Any]: ...
