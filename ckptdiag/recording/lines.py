"""A recording's text as whole lines, none held longer than :data:`MAX_LINE`.

The recorder writes lines of a few KB (a sample ~2 KB, the header a little more). A longer line
is not one it wrote (a file pasted into, a disk's garbage, a crafted file: 200 MB of one line
gzip to 200 KB): holding it whole to parse it would cost memory the host may not have. Such a
line is replaced by :data:`TOO_LONG`, which no reader takes for JSON: it is counted as a damaged
line at its own line number, as any other damaged line is, and the lines after it are read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

MAX_LINE = 1 << 20  # bytes: ~500 times the longest line the recorder writes
TOO_LONG = b"!line over 1 MiB, not read\n"  # not JSON: counted as a damaged line


def line_blocks(pieces: Iterable[bytes], size: int) -> Iterator[bytes]:
    """The text of ``pieces`` in blocks of whole lines of about ``size`` bytes, every line over
    :data:`MAX_LINE` replaced by :data:`TOO_LONG` without being held (what is held is at most
    ``size`` + :data:`MAX_LINE` + a piece). The last block may end in a torn line (no newline)."""
    pending = b""
    skipping = False  # inside a line already found too long: its rest is dropped as it comes
    for piece in pieces:
        if skipping:
            newline = piece.find(b"\n")
            if newline < 0:
                continue
            piece, skipping = piece[newline + 1 :], False
        pending = pending + piece if pending else piece
        start = pending.rfind(b"\n") + 1  # where the line still open begins
        if len(pending) - start > MAX_LINE:
            pending, skipping = pending[:start] + TOO_LONG, True
            start = len(pending)
        if len(pending) >= size and start:
            yield bounded(pending[:start])  # a line completed in one piece is checked here
            pending = pending[start:]
    if pending:
        yield bounded(pending)


def bounded(text: bytes) -> bytes:
    """``text`` with every line over :data:`MAX_LINE` replaced by :data:`TOO_LONG` (``text``
    itself, not a copy, when none is: the usual case, found in a few hundred steps a GB)."""
    spans: list[tuple[int, int]] = []
    at = 0
    while len(text) - at > MAX_LINE:
        newline = text.rfind(b"\n", at, at + MAX_LINE + 1)
        if newline >= 0:  # every line begun before it is short enough
            at = newline + 1
            continue
        stop = text.find(b"\n", at)
        spans.append((at, len(text) if stop < 0 else stop + 1))
        at = len(text) if stop < 0 else stop + 1
    if not spans:
        return text
    parts: list[bytes] = []
    done = 0
    for start, stop in spans:
        parts += [text[done:start], TOO_LONG]
        done = stop
    parts.append(text[done:])
    return b"".join(parts)
