"""Bar charts drawn on the server as SVG: no script, readable without styles, and each with a text
alternative (its <title> and <desc> say what the bars say, for screen readers; the page also
prints the numbers as a table). Every label passes through format_html, so a file path or a tag
cannot inject markup."""
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import slugify

WIDTH = 660
LABEL_WIDTH = 330
ROW = 26
BAR_HEIGHT = 16
MAX_LABEL = 45


def _short(label: str) -> str:
    # Paths are cut from the left: the file name is the part a reader recognises.
    return label if len(label) <= MAX_LABEL else "…" + label[-(MAX_LABEL - 1):]


def describe(bars, unit: str) -> str:
    """The chart as one sentence: `3 findings: src/a.py 2, src/b.py 1.`"""
    if not bars:
        return f"No {unit}."
    total = sum(bar.value for bar in bars)
    return f"{total} {unit}: " + ", ".join(f"{bar.label} {bar.value}" for bar in bars) + "."


def bar_chart(*, title: str, bars, unit: str) -> SafeString:
    """A horizontal bar chart of `bars` (each with label, value and optionally url)."""
    ident = "chart-" + slugify(title)
    height = ROW * max(len(bars), 1) + 8
    top = max((bar.value for bar in bars), default=0) or 1
    room = WIDTH - LABEL_WIDTH - 48
    rows = []
    for index, bar in enumerate(bars):
        y = 4 + index * ROW
        length = max(round(room * bar.value / top), 1 if bar.value else 0)
        label = format_html(
            '<text x="{}" y="{}" text-anchor="end" class="chart-label"><title>{}</title>{}</text>',
            LABEL_WIDTH - 8, y + BAR_HEIGHT - 3, bar.label, _short(bar.label),
        )
        if getattr(bar, "url", ""):
            label = format_html('<a href="{}">{}</a>', bar.url, label)
        rows.append(
            format_html(
                '<g>{}<rect x="{}" y="{}" width="{}" height="{}" rx="2" class="chart-bar"></rect>'
                '<text x="{}" y="{}" class="chart-value">{}</text></g>',
                label, LABEL_WIDTH, y, length, BAR_HEIGHT, LABEL_WIDTH + length + 6, y + BAR_HEIGHT - 3, bar.value,
            )
        )
    # With links among its bars the chart is a group, not an image: an image's parts are
    # presentational, and a link inside one could not be reached by a screen reader's user.
    role = "group" if any(getattr(bar, "url", "") for bar in bars) else "img"
    return format_html(
        '<svg class="chart" role="{6}" aria-labelledby="{0}-title {0}-desc" viewBox="0 0 {1} {2}" width="{1}" '
        'height="{2}" xmlns="http://www.w3.org/2000/svg"><title id="{0}-title">{3}</title>'
        '<desc id="{0}-desc">{4}</desc>{5}</svg>',
        ident, WIDTH, height, title, describe(bars, unit), format_html_join("", "{}", ((row,) for row in rows)), role,
    )


LINE_HEIGHT = 140
LINE_LEFT = 40


def line_chart(*, title: str, points, unit: str) -> SafeString:
    """A step line of `points` ((date, count), oldest first): how a count went over time, with the
    first and last day and the highest count marked."""
    ident = "chart-" + slugify(title)
    points = list(points)
    top = max((count for _, count in points), default=0) or 1
    room = WIDTH - LINE_LEFT - 16
    step = room / max(len(points) - 1, 1)

    def y(count):
        return 8 + round((LINE_HEIGHT - 32) * (1 - count / top))

    parts = []
    for index, (_, count) in enumerate(points):
        x = LINE_LEFT + round(index * step)
        parts.append(f"M{x} {y(count)}" if index == 0 else f"H{x} V{y(count)}")
    path = " ".join(parts)
    first, last = (points[0][0], points[-1][0]) if points else ("", "")
    now = points[-1][1] if points else 0
    highest = max((count for _, count in points), default=0)
    desc = f"{now} {unit} now; at most {highest} between {first} and {last}."
    return format_html(
        '<svg class="chart chart-line" role="img" aria-labelledby="{0}-title {0}-desc" viewBox="0 0 {1} {2}" '
        'width="{1}" height="{2}" xmlns="http://www.w3.org/2000/svg"><title id="{0}-title">{3}</title>'
        '<desc id="{0}-desc">{4}</desc>'
        '<text x="{5}" y="{6}" text-anchor="end" class="chart-value">{7}</text>'
        '<text x="{5}" y="{8}" text-anchor="end" class="chart-value">0</text>'
        '<path d="{9}" class="chart-step" fill="none" stroke="currentColor" stroke-width="2"></path>'
        '<text x="{10}" y="{11}" class="chart-label">{12}</text>'
        '<text x="{13}" y="{11}" text-anchor="end" class="chart-label">{14}</text></svg>',
        ident, WIDTH, LINE_HEIGHT, title, desc, LINE_LEFT - 6, y(top) + 4, top, y(0) + 4, path or "M0 0",
        LINE_LEFT, LINE_HEIGHT - 6, first, WIDTH - 16, last,
    )
