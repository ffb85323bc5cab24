"""The Markdown report, for tickets and mail (and the body of the HTML report)."""

from __future__ import annotations

from ckptdiag import __version__
from ckptdiag.analysis.stats import sampling_text
from ckptdiag.analysis.verdict import listed_count
from ckptdiag.report.advice import advice_markdown
from ckptdiag.report.document import Report, iso
from ckptdiag.report.fmt import fmt, fmt_ms, unplaced
from ckptdiag.report.history import history_rows
from ckptdiag.report.terminal import baseline_basis, dirty_settings_text, episode_rows

# said once on every report and kept everywhere: the units mongod (cacheSizeGB, WiredTiger's
# "MB"), the kernel and iostat -m use
UNITS = "sizes in binary units: 1 KB = 1,024 bytes, 1 MB = 2^20, 1 GB = 2^30 (as mongod and iostat -m count them)"
FILE_TOP = 50  # episodes a Markdown or HTML report lists by default (the worst, in time order)


def render_markdown(r: Report, top: int | None = None) -> str:
    """Markdown for tickets and mail, listing the ``top`` worst episodes (None: ``FILE_TOP``; 0: all)."""
    limit = listed_count(top, FILE_TOP, len(r.dx.episodes))
    dx, source, facts = r.dx, r.source, r.dx.facts
    b, ev = dx.baseline, dx.eviction
    cache = dx.settings.cache_bytes.value
    out = [
        f"# ckptdiag: {dx.severity.upper()}",
        "",
        f"**{dx.summary}**",
        "",
        f"- source: {source.kind} `{source.path}`",
        f"- server: {facts.version or '?'} {facts.host or ''}{f' ({dx.role})' if dx.role else ''}, cache "
        f"{fmt(cache and cache / 2**30, '.1f', ' GB')}, "
        f"RAM {fmt(facts.ram_bytes and facts.ram_bytes / 2**30, '.1f', ' GB')}, cores {fmt(facts.cores, 'd')}",
        f"- window: {iso(dx.start)} to {iso(dx.end)}, {dx.samples:,} samples {sampling_text(dx.spacings)}, "
        f"{dx.gaps} gaps, {dx.restarts} restarts",
        f"- checkpoints: {len(dx.episodes):,}, {dx.stalls:,} stalls"
        + unplaced(dx.unplaced_checkpoints)
        + (f", one every {dx.checkpoint_period_s:.0f} s" if dx.checkpoint_period_s else ""),
        "",
    ]
    if dx.findings:
        out += ["## Findings", ""] + [f"- {f}" for f in dx.findings] + [""]
    cols, rows = episode_rows(dx, limit, full_why=True)
    if rows:
        shown = f"the {limit:,} worst of {len(dx.episodes):,}, in time order (--top N; --episodes all lists every one)"
        out += ["## Checkpoints", ""] + ([shown, ""] if len(dx.episodes) > limit else [])
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        out.append("")
    if dx.history is not None:
        title, hcols, hrows = history_rows(dx.history)
        out += [f"## Checkpoints {title}", "", "| " + " | ".join(hcols) + " |", "|" + "---|" * len(hcols)]
        out += ["| " + " | ".join(row) + " |" for row in hrows] + [""]
    if r.log is not None:
        out += ["## mongod log: slow operations and checkpoints", ""] + [
            f"- {line}" for line in r.log.lines_for_report()
        ]
        out.append("")
    out += [
        "## Baseline and cache",
        "",
        f"- baseline ({baseline_basis(b)}): {fmt(b.ops_s, ',.0f')} ops/s, "
        f"write latency {fmt_ms(b.write_lat_ms)}, "
        f"disk {dx.disk or '-'} {fmt(b.disk_write_mb_s, ',.1f', ' MB/s')}",
        f"- dirty cache: p50 {fmt(ev.dirty_pct_p50, '.1f', ' %')}, max {fmt(ev.dirty_pct_max, '.1f', ' %')} "
        f"({dirty_settings_text(dx.settings)}); {ev.seconds_over_dirty_trigger:.0f} s at or over the trigger",
        f"- application threads evicted {ev.app_evicted_pages:,.0f} pages and waited {ev.app_wait_s:,.1f} s for cache",
        "",
    ]
    if r.advice is not None:
        out += advice_markdown(r.advice)
    if dx.evidence:
        out += ["## Notes", ""] + [f"- {n}" for n in dx.evidence] + [""]
    out.append(f"_ckptdiag {__version__}; {UNITS}_")
    return "\n".join(out) + "\n"
