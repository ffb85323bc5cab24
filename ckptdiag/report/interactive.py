"""The HTML report's interactive timeline: ops/s, dirty % and disk MB/s over the window, the
checkpoints as bands, zoomable from the whole window down to the timeline's buckets (drag across a
chart; double-click to return), the three charts moving together.

The charts are uPlot (``vendor/``, MIT), inlined into the page with its data: one file that works
offline, no CDN. Without JavaScript, and on paper, the static charts show instead.
"""

from __future__ import annotations

import base64
import bisect
import datetime as dt
import json
import math
from collections.abc import Callable, Sequence
from importlib import resources

import numpy as np

from ckptdiag.analysis.results import CloseUp, Diagnosis
from ckptdiag.analysis.timeline import ops_line

_SERIES = (  # (label, timeline column, colour)
    ("dirty %", "dirty_pct", "#ff7f0e"),
    ("disk MB/s", "disk_mb_s", "#9467bd"),
)

# The page's script: three synced charts, the checkpoint bands drawn under each (red: stalled).
_SCRIPT = """
(function () {
  var d = JSON.parse(document.getElementById("ckptdiag-timeline-data").textContent);
  document.documentElement.classList.add("js");
  var box = document.getElementById("ckptdiag-timeline");
  var charts = [], zooming = false;
  function bands(u) {
    var c = u.ctx, top = u.bbox.top, h = u.bbox.height;
    d.spans.forEach(function (s) {
      var a = u.valToPos(s[0], "x", true), b = u.valToPos(s[1], "x", true);
      if (b < u.bbox.left || a > u.bbox.left + u.bbox.width) return;
      c.fillStyle = s[2] ? "rgba(214,39,40,0.35)" : "rgba(31,119,180,0.25)";
      c.fillRect(a, top, Math.max(b - a, 1), h);
    });
  }
  function follow(u, key) {
    if (key !== "x" || zooming) return;
    zooming = true;
    charts.forEach(function (o) { if (o !== u) o.setScale("x", {min: u.scales.x.min, max: u.scales.x.max}); });
    zooming = false;
  }
  function utc(u, splits) {  // 24-hour UTC, with the date where the view spans days
    var wide = u.scales.x.max - u.scales.x.min > 172800;
    return splits.map(function (v) {
      var iso = new Date(v * 1e3).toISOString();
      return wide ? iso.slice(5, 10) + " " + iso.slice(11, 16) : iso.slice(11, 19);
    });
  }
  d.series.forEach(function (s) {
    var el = document.createElement("div");
    box.appendChild(el);
    charts.push(new uPlot({
      width: Math.max(box.clientWidth, 600), height: 170,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },
      cursor: {sync: {key: "ckptdiag"}},
      scales: {x: {time: true}},
      series: [{label: "UTC"}, {label: s.label, stroke: s.color, width: 1, spanGaps: false}],
      axes: [{values: utc}, {label: s.label, size: 60}],
      hooks: {drawClear: [bands], setScale: [follow]}
    }, [d.t, s.values], el));
  });
  function zoom(lo, hi) { charts.forEach(function (o) { o.setScale("x", {min: lo, max: hi}); }); }
  // a button for each close-up (its every sample is in the data); #closeup-N opens zoomed to one
  var closer = document.getElementById("ckptdiag-closeups");
  (d.closeups || []).forEach(function (c, i) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = c[2];
    b.onclick = function () { zoom(c[0], c[1]); };
    closer.appendChild(b);
    if (location.hash === "#closeup-" + i) zoom(c[0], c[1]);
  });
})();
"""

_CSS = (
    "#ckptdiag-timeline{margin:1em 0}.js .static-charts{display:none}"
    "#ckptdiag-closeups button{margin:0 .4em .4em 0;font:inherit;font-size:.85em}"
    "@media print{#ckptdiag-timeline,#ckptdiag-closeups,.timeline-hint{display:none}.js .static-charts{display:block}}"
)


def _vendor(name: str) -> str:
    return resources.files("ckptdiag.report").joinpath("vendor").joinpath(name).read_text(encoding="utf-8")


def _script(code: str) -> str:
    """A script as a data: URL. Every string the page holds passes the redactor, which rightly
    takes ``key:l`` in minified JavaScript for a secret and would break the code; the code is
    this package's own, not the server's, and in base64 nothing in it reads as a secret."""
    return f'<script src="data:text/javascript;base64,{base64.b64encode(code.encode()).decode()}"></script>'


def _clean(values: list[float]) -> list[float | None]:
    """JSON has no NaN: a gap is null (uPlot leaves it a gap)."""
    return [v if math.isfinite(v) else None for v in values]


def timeline_html(dx: Diagnosis, spans: list[tuple[float, float, bool]]) -> str | None:
    """The interactive timeline of ``dx`` with its checkpoint ``spans`` (start, end, stalled), or
    None without a timeline. Where its buckets are wider than the samples, every sample around the
    worst checkpoints (``dx.closeups``) takes their buckets' place, with a button to zoom to each."""
    tl = dx.timeline
    if tl is None or tl.empty:
        return None
    ops_label, ops_column = ops_line(tl)
    chosen = [(ops_label, ops_column, "#2ca02c"), *_SERIES]
    shown = [(label, column, color) for label, column, color in chosen if column in tl and tl[column].notna().any()]
    if not shown:
        return None
    t = tl["t"].to_numpy(dtype="float64")
    closeups = _finer(dx, t)
    ranges = [(float(c.t[0]), float(c.t[-1])) for c in closeups]
    outside = ~_inside(t, ranges)
    times = np.concatenate([t[outside], *(c.t for c in closeups)])
    times, order = np.unique(times, return_index=True)  # close-ups of neighbours share their samples
    series = []
    for label, column, color in shown:
        of = _CLOSE_UP_FIGURE[column]
        values = np.concatenate([tl[column].to_numpy(dtype="float64")[outside], *(of(c) for c in closeups)])
        series.append({"label": label, "color": color, "values": _clean(values[order].tolist())})
    data = {
        "t": times.round(3).tolist(),
        "series": series,
        "spans": [[round(a, 3), round(b, 3), bool(stalled)] for a, b, stalled in _exact_in(spans, closeups, dx)],
        "closeups": [[round(lo, 3), round(hi, 3), _label(c)] for c, (lo, hi) in zip(closeups, ranges, strict=True)],
    }
    # "</" cannot end the script element early: JSON escapes it
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    finer = (
        f", and to every sample around the {len(closeups)} worst checkpoints: a button below zooms to each"
        if closeups
        else ""
    )
    return (
        f"<style>{_vendor('uPlot.min.css')}{_CSS}</style>"
        '<p class="timeline-hint hint">Drag across a chart to zoom into that span, down to the timeline\'s '
        f"{len(t)} buckets{finer}. Double-click to see the whole window again. Bands: checkpoints, red where "
        "they stalled.</p>"
        '<div id="ckptdiag-closeups"></div>'
        '<div id="ckptdiag-timeline"></div>'
        f'<script type="application/json" id="ckptdiag-timeline-data">{payload}</script>'
        + _script(_vendor("uPlot.iife.min.js"))
        + _script(_SCRIPT)
    )


# a close-up's samples standing in for each timeline column (the lowest, mean and highest of one sample are itself)
_CLOSE_UP_FIGURE: dict[str, Callable[[CloseUp], np.ndarray]] = {
    "ops_s": lambda c: c.ops_s,
    "ops_s_mean": lambda c: c.ops_s,
    "dirty_pct": lambda c: c.dirty_pct,
    "disk_mb_s": lambda c: c.disk_mb_s,
}


def _finer(dx: Diagnosis, t: np.ndarray) -> tuple[CloseUp, ...]:
    """The close-ups worth drawing: where the buckets are at least twice the samples' period."""
    width = float(t[1] - t[0]) if t.size > 1 else 0.0
    if width < 2 * (dx.period_s or 1.0):
        return ()
    return tuple(c for c in dx.closeups if c.t.size)


def _inside(t: np.ndarray, ranges: Sequence[tuple[float, float]]) -> np.ndarray:
    out = np.zeros(t.size, dtype=bool)
    for lo, hi in ranges:
        out |= (t >= lo) & (t <= hi)
    return out


def _exact_in(
    spans: list[tuple[float, float, bool]], closeups: Sequence[CloseUp], dx: Diagnosis
) -> list[tuple[float, float, bool]]:
    """``spans`` with each close-up's range drawn from its checkpoints' own times: a band of
    buckets (a day's are 144 s wide) would cover the seconds it zooms into."""
    if not closeups:
        return spans
    out = list(spans)
    starts = dx.episodes.floats("start").tolist()
    for c in closeups:
        lo, hi = float(c.t[0]), float(c.t[-1])
        clipped: list[tuple[float, float, bool]] = []
        for a, b, stalled in out:
            if b <= lo or a >= hi:
                clipped.append((a, b, stalled))
                continue
            clipped += [(a, lo, stalled)] if a < lo else []
            clipped += [(hi, b, stalled)] if b > hi else []
        first = bisect.bisect_left(starts, lo - 86_400.0)  # one that began before the range may reach into it
        for e in dx.episodes[first : bisect.bisect_right(starts, hi)]:
            end = e.end if e.end is not None else dx.end
            if end >= lo:
                clipped.append((max(e.start, lo), min(max(end, e.start + 0.5), hi), e.stall))
        out = clipped
    return sorted(out)


def _label(c: CloseUp) -> str:
    day = dt.datetime.fromtimestamp(c.start, dt.timezone.utc).strftime("%m-%d %H:%M:%S")
    took = c.end - c.start
    said = f"{took:.1f} s" if took >= 0.1 else f"{took * 1000:.0f} ms"
    if c.ops_ratio is not None:
        said += f", ops/s at {100 * c.ops_ratio:.0f} % of the baseline"
    return f"{day}: {said}" + (", stalled" if c.stall else "")
