"""A small hand-written SVG chart writer for bench/compare (no matplotlib on these
machines): scatter/line charts with optional log axes, and grouped horizontal bars."""
import math
from xml.sax.saxutils import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"]
W, H, LEFT, RIGHT, TOP, BOTTOM = 720, 440, 80, 190, 40, 60


def _ticks(lo, hi, log):
    if log:
        decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        steps = (1, 2, 5) if math.log10(hi / lo) < 2.5 else (1,)  # 1-2-5 on short ranges
        return [m * 10.0 ** e for e in decades for m in steps]
    span = hi - lo or 1.0
    step = 10 ** math.floor(math.log10(span / 5))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    first = math.floor(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 2)]


def _fmt(v):
    if v == 0:
        return "0"
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:.3g}"


class _Axis:
    def __init__(self, values, log, pad=0.05):
        vals = [v for v in values if v is not None and (v > 0 or not log)]
        lo, hi = min(vals), max(vals)
        if log:
            lo, hi = lo / 1.5, hi * 1.5
        else:
            span = (hi - lo) or abs(hi) or 1.0
            lo, hi = lo - pad * span, hi + pad * span
        self.log = log
        self.ticks = [t for t in _ticks(lo, hi, log) if lo <= t <= hi] or [lo, hi]
        self.lo, self.hi = (min(lo, self.ticks[0]), max(hi, self.ticks[-1]))

    def frac(self, v):
        if self.log:
            return (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        return (v - self.lo) / ((self.hi - self.lo) or 1.0)


def _frame(title, xlabel, ylabel):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'font-family="sans-serif" font-size="12">',
            f'<rect width="{W}" height="{H}" fill="white"/>',
            f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
            f'<text x="{LEFT + (W - LEFT - RIGHT) / 2}" y="{H - 12}" text-anchor="middle">{escape(xlabel)}</text>',
            f'<text x="16" y="{TOP + (H - TOP - BOTTOM) / 2}" text-anchor="middle" '
            f'transform="rotate(-90 16 {TOP + (H - TOP - BOTTOM) / 2})">{escape(ylabel)}</text>']


def _legend(out, names):
    for i, name in enumerate(names):
        y = TOP + 10 + 20 * i
        out.append(f'<rect x="{W - RIGHT + 15}" y="{y - 9}" width="12" height="12" fill="{COLORS[i % len(COLORS)]}"/>')
        out.append(f'<text x="{W - RIGHT + 33}" y="{y + 1}">{escape(name)}</text>')


def write_xy(path, title, xlabel, ylabel, series, logx=False, logy=False, lines=True, notes=()):
    """series: [(name, [(x, y, label or None), ...])]. A point with y None is drawn as a
    cross on the x axis labelled with its label (e.g. 'out of memory')."""
    xs = [p[0] for _, pts in series for p in pts]
    ys = [p[1] for _, pts in series for p in pts if p[1] is not None]
    ax, ay = _Axis(xs, logx), _Axis(ys + ([0] if not logy else []), logy)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    px = lambda v: LEFT + ax.frac(v) * pw
    py = lambda v: TOP + ph - ay.frac(v) * ph
    out = _frame(title, xlabel, ylabel)
    for t in ay.ticks:
        out.append(f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    for t in ax.ticks:
        out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{TOP}" y2="{TOP + ph}" stroke="#eee"/>')
        out.append(f'<text x="{px(t):.1f}" y="{TOP + ph + 16}" text-anchor="middle">{_fmt(t)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    for i, (_, pts) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        drawn = [(px(x), py(y)) for x, y, _ in pts if y is not None]
        if lines and len(drawn) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
                c, " ".join(f"{x:.1f},{y:.1f}" for x, y in drawn)))
        for x, y, label in pts:
            if y is None:
                X, Y = px(x), TOP + ph - 8
                out.append(f'<path d="M{X - 6:.1f},{Y - 6:.1f}L{X + 6:.1f},{Y + 6:.1f}M{X - 6:.1f},{Y + 6:.1f}'
                           f'L{X + 6:.1f},{Y - 6:.1f}" stroke="{c}" stroke-width="3"/>')
                Y -= 14
            else:
                X, Y = px(x), py(y)
                out.append(f'<circle cx="{X:.1f}" cy="{Y:.1f}" r="4" fill="{c}"/>')
            if label:
                out.append(f'<text x="{X + 7:.1f}" y="{Y - 6:.1f}" fill="{c}" font-size="11">{escape(label)}</text>')
    _legend(out, [name for name, _ in series])
    for i, note in enumerate(notes):
        out.append(f'<text x="{W - RIGHT + 15}" y="{H - BOTTOM - 14 * (len(notes) - 1 - i)}" '
                   f'font-size="10" fill="#555">{escape(note)}</text>')
    out.append("</svg>")
    _write(path, out)


def write_bars(path, title, xlabel, groups, series, values, logx=True):
    """Horizontal grouped bars: values[(group, series)] = number (missing: no bar)."""
    nums = [v for v in values.values() if v]
    ax = _Axis(nums + ([min(nums) / 3] if logx else [0]), logx)
    pw = W - LEFT - RIGHT - 40
    left = LEFT + 40
    row = 16
    height = TOP + BOTTOM + len(groups) * (len(series) * row + 12)
    out = _frame(title, xlabel, "")
    out[0] = out[0].replace(f'height="{H}"', f'height="{height}"')
    out[1] = out[1].replace(f'height="{H}"', f'height="{height}"')
    out[3] = out[3].replace(f'y="{H - 12}"', f'y="{height - 12}"')
    px = lambda v: left + ax.frac(v) * pw
    bottom = height - BOTTOM
    for t in ax.ticks:
        out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{TOP}" y2="{bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{px(t):.1f}" y="{bottom + 16}" text-anchor="middle">{_fmt(t)}</text>')
    y = TOP
    for g in groups:
        out.append(f'<text x="{left - 6}" y="{y + len(series) * row / 2 + 4}" text-anchor="end">{escape(g)}</text>')
        for i, s in enumerate(series):
            v = values.get((g, s))
            if v:
                out.append(f'<rect x="{left}" y="{y}" width="{px(v) - left:.1f}" height="{row - 3}" '
                           f'fill="{COLORS[i % len(COLORS)]}"/>')
                out.append(f'<text x="{px(v) + 4:.1f}" y="{y + row - 5}" font-size="10">{_fmt(v)}</text>')
            y += row
        y += 12
    _legend(out, series)
    out.append("</svg>")
    _write(path, out)


def _write(path, parts):
    import os
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(parts) + "\n")
    os.replace(tmp, path)
