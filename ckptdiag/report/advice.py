"""The recommendations section of the terminal, Markdown and HTML reports."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

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
    """Rich renderables: one panel per recommendation, then the combined commands."""
    if not advice.recommendations:
        return [Text(f"Recommendations: {advice.summary}", style="bold green")]
    out: list[RenderableType] = [Text(f"Recommendations: {advice.summary}", style="bold")]
    for cause in advice.causes:
        body = Text(f"cause: {cause.title}\n", style="bold")
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
        if r.apply_runtime:
            parts.append(Text("apply now (lost at restart):", style="bold"))
            parts.append(Syntax(r.apply_runtime, "javascript", background_color="default", word_wrap=True))
        if r.apply_config:
            parts.append(Text("mongod.conf (persistent):", style="bold"))
            parts.append(Syntax(r.apply_config, "yaml", background_color="default", word_wrap=True))
        if r.revert_runtime or r.revert_config:
            parts.append(
                Text("revert: " + " ; ".join(x for x in (r.revert_runtime, r.revert_config) if x), style="dim")
            )
        label = "check" if r.kind == "note" else "change"
        out.append(Panel(Group(*parts), title=f"{i}. {label}: {r.title}", title_align="left"))
    if advice.combined.apply_runtime or advice.combined.apply_config:
        # unwrapped and uncut, so that a terminal's own wrapping copies back as one line
        out.append(Text("All together (copy from here):", style="bold"))
        for block in (*advice.combined.apply_runtime, advice.combined.apply_config):
            if block:
                out.append(Text(block, style="cyan", no_wrap=True, overflow="ignore"))
    for note in advice.settings.notes:
        out.append(Text(f"note: {note}", style="dim"))
    return out


def advice_markdown(advice: Advice) -> list[str]:
    """Markdown lines: a section per recommendation with its commands in code blocks."""
    out = ["## Recommendations", "", f"**{advice.summary}**", ""]
    for cause in advice.causes:
        out += [f"### Cause: {cause.title}", "", *(f"- {line}" for line in cause.evidence), ""]
    for i, r in enumerate(advice.recommendations, 1):
        out += [f"### {i}. {'check' if r.kind == 'note' else 'change'}: {r.title}", ""]
        if r.kind == "setting":
            out += [f"- now: {_current(r)}", f"- recommended: {_value(r.recommended)}"]
        out += [f"- evidence: {line}" for line in r.evidence]
        out += [f"- effect: {r.predicted_text}"]
        out += [f"- trade-off: {line}" for line in r.tradeoffs]
        out += [f"- confidence: {r.confidence} ({r.confidence_why})", ""]
        if r.apply_runtime:
            out += ["Apply now (lost at restart):", "", "```js", r.apply_runtime, "```", ""]
        if r.apply_config:
            out += ["mongod.conf (persistent):", "", "```yaml", r.apply_config, "```", ""]
        if r.revert_runtime or r.revert_config:
            out += ["Revert:", "", "```", *(x for x in (r.revert_runtime, r.revert_config) if x), "```", ""]
    if advice.combined.apply_runtime or advice.combined.apply_config:
        out += ["### All together", ""]
        if advice.combined.apply_runtime:
            out += ["```js", *advice.combined.apply_runtime, "```", ""]
        if advice.combined.apply_config:
            out += ["```yaml", advice.combined.apply_config, "```", ""]
        out += [
            "Revert all:",
            "",
            "```",
            *advice.combined.revert_runtime,
            advice.combined.revert_config or "",
            "```",
            "",
        ]
    out += [f"- note: {n}" for n in advice.settings.notes]
    return out
