"""The recommendations section of the terminal, Markdown and HTML reports."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from ckptdiag.advice.commands import Commands
from ckptdiag.advice.recommendation import Advice, Recommendation


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _current(r: Recommendation) -> str:
    return f"{_value(r.current)} ({r.current_source})" if r.current_source else _value(r.current)


def advice_renderables(advice: Advice) -> list[RenderableType]:
    """Rich renderables: one panel per recommendation, then the combined commands, each block one
    language (mongosh, mongod.conf YAML, a WiredTiger config string) to paste as it is."""
    if not advice.recommendations:
        return [Text(f"Recommendations: {advice.summary}", style="bold green")]
    out: list[RenderableType] = [Text(f"Recommendations: {advice.summary}", style="bold")]
    for cause in advice.causes:
        body = Text(f"cause: {cause.title}\n", style="bold")
        if (explains := cause.explains()) is not None:
            body.append(explains + "\n", style="italic")
        body.append("\n".join(f"• {line}" for line in cause.evidence))
        out.append(body)
    for i, r in enumerate(advice.recommendations, 1):
        body = Text()
        if r.kind == "setting":
            body.append("now: ", style="bold")
            body.append(_current(r) + "\n")
            body.append("recommended: ", style="bold")
            body.append(_value(r.recommended) + "\n")
        for line in r.evidence:
            body.append(f"• {line}\n")
        body.append("effect: ", style="bold")
        body.append(r.predicted_text + "\n")
        for line in r.tradeoffs:
            body.append(f"trade-off: {line}\n", style="dim")
        body.append(f"confidence: {r.confidence} ({r.confidence_why})", style="italic")
        parts: list[RenderableType] = [body]
        for label, code, language in _blocks(r.commands):
            parts.append(Text(label + ":", style="bold" if label.startswith("apply") else "dim"))
            parts.append(Syntax(code, language, background_color="default", word_wrap=True))
        label = "check" if r.kind == "note" else "change"
        out.append(Panel(Group(*parts), title=f"{i}. {label}: {r.title}", title_align="left"))
    if advice.combined.apply_runtime or advice.combined.apply_config:
        out.append(Text("All together, a block per place it goes (copy each as it is):", style="bold"))
        for label, code, _language in _blocks(advice.combined):
            out.append(Text(label + ":", style="bold" if label.startswith("apply") else "dim"))
            # unwrapped and uncut, so that a terminal's own wrapping copies back as one line
            out.append(Text(code, style="cyan", no_wrap=True, overflow="ignore"))
    for note in advice.settings.notes:
        out.append(Text(f"note: {note}", style="dim"))
    return out


def _blocks(c: Commands) -> list[tuple[str, str, str]]:
    """(label, code, language) of each block of ``c``: one language a block, as it is pasted."""
    blocks = [
        ("apply now, in mongosh (lost at restart)", "\n".join(c.apply_runtime), "javascript"),
        ("apply for good, in mongod.conf", c.apply_config or "", "yaml"),
        ("the same engine change as a WiredTiger config string", c.engine or "", "text"),
        ("revert now, in mongosh", "\n".join(c.revert_runtime), "javascript"),
        ("revert in mongod.conf", c.revert_config or "", "yaml"),
    ]
    return [b for b in blocks if b[1]]


_FENCE = {"javascript": "js", "yaml": "yaml", "text": "text"}


def _markdown_blocks(c: Commands) -> list[str]:
    out: list[str] = []
    for label, code, language in _blocks(c):
        out += [label[0].upper() + label[1:] + ":", "", f"```{_FENCE[language]}", code, "```", ""]
    return out


def advice_markdown(advice: Advice) -> list[str]:
    """Markdown lines: a section per recommendation with its commands in code blocks, one language
    a block."""
    out = ["## Recommendations", "", f"**{advice.summary}**", ""]
    for cause in advice.causes:
        explains = cause.explains()
        out += [f"### Cause: {cause.title}", "", *([f"_{explains}_", ""] if explains else [])]
        out += [*(f"- {line}" for line in cause.evidence), ""]
    for i, r in enumerate(advice.recommendations, 1):
        out += [f"### {i}. {'check' if r.kind == 'note' else 'change'}: {r.title}", ""]
        if r.kind == "setting":
            out += [f"- now: {_current(r)}", f"- recommended: {_value(r.recommended)}"]
        out += [f"- evidence: {line}" for line in r.evidence]
        out += [f"- effect: {r.predicted_text}"]
        out += [f"- trade-off: {line}" for line in r.tradeoffs]
        out += [f"- confidence: {r.confidence} ({r.confidence_why})", ""]
        out += _markdown_blocks(r.commands)
    if advice.combined.apply_runtime or advice.combined.apply_config:
        out += ["### All together", "", *_markdown_blocks(advice.combined)]
    out += [f"- note: {n}" for n in advice.settings.notes]
    return out
