"""What a pull request changes, drawn on the server as an SVG bar chart: one row per directory, its
lines added (green) and removed (red) side by side. Drawn narrow, with each directory's name above
its bar, so it is read at its own size on a phone and beside the reviewer's prose on a desktop.
The picture holds no link (a `role="img"` is one image to a screen reader): the table under it
links each directory and file."""
from dataclasses import dataclass
from urllib.parse import quote

from django.utils.safestring import SafeString

from engine.git.diffstat import DirectoryStat
from findings.selectors.changes import ChangesUnavailable, pull_request_changes
from presentation.rendering.svg import Svg

WIDTH = 360
ROW = 36
BAR_HEIGHT = 12
LABEL_GAP = 14
# The directories drawn by name; the rest are summed in one row.
SHOWN_DIRECTORIES = 12
MAX_LABEL = 44
# What reverse() leaves unquoted in a path argument, so these URLs match the code browser's own.
_PATH_SAFE = "!$&'()*+,;=/~:@"


@dataclass(frozen=True)
class DirectoryBar:
    label: str
    files: int
    added: int
    removed: int
    findings: int = 0


def directory_name(directory: str) -> str:
    return f"{directory}/" if directory else "(top level)"


def _short(label: str) -> str:
    # Cut from the left: the deepest directory is the part a reader recognises.
    return label if len(label) <= MAX_LABEL else "…" + label[-(MAX_LABEL - 1):]


def directory_bars(directories: list[DirectoryStat], *, findings=lambda directory: 0) -> list[DirectoryBar]:
    """The bars of the chart: the directories with the most lines changed, then the rest as one."""
    bars = [
        DirectoryBar(directory_name(row.directory), row.files, row.added, row.removed, findings(row.directory))
        for row in directories[:SHOWN_DIRECTORIES]
    ]
    rest = directories[SHOWN_DIRECTORIES:]
    if rest:
        bars.append(DirectoryBar(
            f"{len(rest)} other directories", sum(row.files for row in rest), sum(row.added for row in rest),
            sum(row.removed for row in rest), 0,
        ))
    return bars


def _row_words(bar: DirectoryBar) -> str:
    words = f"{bar.label} {bar.files} file{'s' if bar.files != 1 else ''}, +{bar.added} −{bar.removed}"
    if bar.findings:
        words += f", {bar.findings} finding{'s' if bar.findings != 1 else ''}"
    return words


def changes_chart(*, title: str, bars: list[DirectoryBar]) -> SafeString | str:
    """The chart, or "" when nothing changed."""
    if not bars:
        return ""
    height = ROW * len(bars) + 6
    top = max(max(bar.added for bar in bars), max(bar.removed for bar in bars), 1)
    # Added and removed share one scale, drawn from the left: added on top, removed below it.
    room = WIDTH - 90
    svg = Svg(
        width=WIDTH, height=height, title=title, id_prefix="changes-chart", css_class="changes-chart",
        description="; ".join(_row_words(bar) for bar in bars) + ".",
    )
    for index, bar in enumerate(bars):
        y = 4 + index * ROW
        group = svg.add("g")
        label = _short(bar.label) + (f" · {bar.findings} finding{'s' if bar.findings != 1 else ''}"
                                     if bar.findings else "")
        svg.add("text", group, text=label, x=0, y=y + 10, class_="changes-label")
        for offset, value, css in ((0, bar.added, "changes-added"), (BAR_HEIGHT // 2, bar.removed, "changes-removed")):
            length = max(round(room * value / top), 1 if value else 0)
            bar_y = y + LABEL_GAP + offset
            svg.add("rect", group, x=0, y=bar_y, width=length, height=BAR_HEIGHT // 2, class_=css)
        words = f"+{bar.added} −{bar.removed}"
        longest = max(round(room * bar.added / top), round(room * bar.removed / top))
        svg.add("text", group, text=words, x=longest + 6, y=y + LABEL_GAP + BAR_HEIGHT - 2, class_="changes-value")
    return svg.markup()


@dataclass
class ChangesView:
    """What the "What does #N change?" page shows of git's answer: the changes (None when they
    cannot be read, with `problem` saying why), the chart, and where each path links to."""

    changes: object = None
    problem: str = ""
    chart: SafeString | str = ""
    links: object = None

    def file_url(self, path: str) -> str:
        if self.changes is None:
            return ""
        tree = self.links.code_tree(self.changes.head_sha) if self.links is not None else ""
        if tree:
            return tree + quote(path, safe=_PATH_SAFE, errors="surrogateescape")
        return self.changes.pull_request.repository.permalink(self.changes.head_sha, path)

    def directory_url(self, directory: str) -> str:
        if self.changes is None:
            return ""
        tree = self.links.code_tree(self.changes.head_sha) if self.links is not None else ""
        if tree:
            return tree + (quote(directory, safe=_PATH_SAFE, errors="surrogateescape") + "/" if directory else "")
        return self.changes.pull_request.repository.tree_link(self.changes.head_sha, directory)

    @property
    def directory_rows(self) -> list[dict]:
        return [
            {"name": directory_name(row.directory), "url": self.directory_url(row.directory), "row": row,
             "findings": self.changes.directory_findings(row.directory)}
            for row in self.changes.directories
        ]

    @property
    def file_rows(self) -> list[dict]:
        return [{"item": item, "url": self.file_url(item.stat.path)} for item in self.changes.files]


def changes_view(pull_request, *, links, pins=None) -> ChangesView:
    """Git's answer to what `pull_request` changes, ready for the page (never raises: a repository
    that cannot be read gives a view that says so)."""
    try:
        changes = pull_request_changes(pull_request, pins=pins)
    except ChangesUnavailable as problem:
        return ChangesView(problem=str(problem), links=links)
    bars = directory_bars(changes.directories, findings=changes.directory_findings)
    chart = changes_chart(
        title=f"Lines added and removed by directory in {pull_request.reference}", bars=bars,
    )
    return ChangesView(changes=changes, chart=chart, links=links)
