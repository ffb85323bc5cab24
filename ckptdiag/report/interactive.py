"""The HTML report's interactive timeline: ops/s, dirty % and disk MB/s over the window, the
checkpoints as bands, zoomable from the whole window down to the timeline's buckets (drag across a
chart; double-click to return), the three charts moving together.

The charts are uPlot (``vendor/``, MIT), inlined into the page with its data: one file that works
offline, no CDN. Without JavaScript, and on paper, the static charts show instead.
"""

from __future__ import annotations

import base64
import json
import math
from importlib import resources

from ckptdiag.analysis.results import Diagnosis
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
})();
"""

_CSS = (
    "#ckptdiag-timeline{margin:1em 0}.js .static-charts{display:none}"
    "@media print{#ckptdiag-timeline,.timeline-hint{display:none}.js .static-charts{display:block}}"
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
    None without a timeline."""
    tl = dx.timeline
    if tl is None or tl.empty:
        return None
    ops_label, ops_column = ops_line(tl)
    chosen = [(ops_label, ops_column, "#2ca02c"), *_SERIES]
    series = [
        {"label": label, "color": color, "values": _clean(tl[column].astype("float64").tolist())}
        for label, column, color in chosen
        if column in tl and tl[column].notna().any()
    ]
    if not series:
        return None
    times = tl["t"].astype("float64").round(3).tolist()
    data = {
        "t": times,
        "series": series,
        "spans": [[round(a, 3), round(b, 3), bool(stalled)] for a, b, stalled in spans],
    }
    # "</" cannot end the script element early: JSON escapes it
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return (
        f"<style>{_vendor('uPlot.min.css')}{_CSS}</style>"
        '<p class="timeline-hint hint">Drag across a chart to zoom into that span (down to the timeline\'s '
        f"{len(times)} buckets); double-click to see the whole window again. Bands: checkpoints, red where "
        "they stalled.</p>"
        '<div id="ckptdiag-timeline"></div>'
        f'<script type="application/json" id="ckptdiag-timeline-data">{payload}</script>'
        + _script(_vendor("uPlot.iife.min.js"))
        + _script(_SCRIPT)
    )
