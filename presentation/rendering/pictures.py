"""The pictures the pages draw from the evidence, as server-side SVG (no script needed, so they
work in the static render and in a mail attachment):

- a submodule pin's history: the reference branch as a line, the base pin, the PR's pin, the fork
  point, "42 ahead · 93 behind" and whether the move fast-forwards;
- a verification grid: rows (findings, or one finding's evidence) by pinned commits, each cell
  coloured by its state, with marks where the code moved, was renamed or re-indented.

Plain data in, markup out; every picture has a <title> and a <desc> that say in words what it draws.
"""
from dataclasses import dataclass, field

from django.utils.safestring import SafeString, mark_safe

from presentation.rendering.svg import Svg
from core.vocabulary import MARKS

SHOWN = 8  # SHA characters in labels

# Fill, stroke and text colour per state; the same palette as the badges in recheck.css.
RED = ("#fef3f2", "#b42318", "#b42318")
GREEN = ("#ecfdf3", "#067647", "#067647")
AMBER = ("#fffaeb", "#93370d", "#93370d")
PURPLE = ("#f4f3ff", "#5925dc", "#5925dc")
GREY = ("#f2f4f7", "#475467", "#475467")
NONE = ("#ffffff", "#818b98", "#59636e")
PALETTE = {
    # verdicts
    "present": RED, "partly_fixed": AMBER, "likely_fixed": GREEN, "unverifiable": GREY, "error": PURPLE,
    # evidence states
    "holds": RED, "moved": AMBER, "gone": GREEN, "unchecked": GREY,
    "": NONE,
}
TEXT = "#1f2328"
MUTED = "#59636e"
LINE = "#57606a"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif"


def short(sha: str | None) -> str:
    return (sha or "")[:SHOWN]


# --- a submodule pin's history -------------------------------------------------------------------


def pin_history_sentence(facts: dict, *, path: str) -> str:
    """The picture in words (its text alternative, and the line under it)."""
    repository, branch = facts.get("repository") or path, facts.get("branch", "")
    pin = short(facts.get("pin"))
    if "ahead" not in facts:
        return f"The history of {repository} could not be read: {facts.get('problem', 'no figures')}."
    if facts["on_branch"]:
        where = f"{pin} is on {branch}, {facts['behind']} commits behind its head"
    else:
        where = (
            f"{pin} is not on {branch}: it forks from it at {short(facts['fork'])} and is "
            f"{facts['ahead']} commits ahead of {branch}'s head and {facts['behind']} behind"
        )
    parts = [f"{repository} pinned at {where}."]
    if facts.get("fast_forward") is not None:
        base = short(facts["base_pin"])
        if facts["fast_forward"]:
            parts.append(f"Moving from the base pin {base} is a fast-forward: it adds {facts['added']} commits.")
        else:
            parts.append(
                f"Moving from the base pin {base} is not a fast-forward: it adds {facts['added']} commits "
                f"and drops {facts['dropped']}."
            )
            if facts.get("added_subjects"):
                latest = "; ".join(f"“{subject}”" for subject in facts["added_subjects"])
                parts.append(f"The latest it adds: {latest}.")
            if facts.get("dropped_subjects"):
                latest = "; ".join(f"“{subject}”" for subject in facts["dropped_subjects"])
                parts.append(f"The latest it drops: {latest}.")
    return " ".join(parts)


def pin_history_figures(facts: dict) -> str:
    """'42 ahead · 93 behind', the figures the review writes by hand."""
    return f"{facts['ahead']} ahead · {facts['behind']} behind"


def pin_history_svg(facts: dict, *, path: str, id_prefix: str) -> SafeString | str:
    """The pin's place in the submodule's history; '' when the history could not be read (the
    page then says why in words)."""
    if not facts or "ahead" not in facts:
        return ""
    width, height = 680, 210
    main_y, side_y = 78, 140
    ahead, behind = facts["ahead"], facts["behind"]
    on_branch = facts["on_branch"]
    base_pos = None
    if facts.get("base_pin") and facts.get("base_on_branch"):
        base_pos = behind - facts["base_behind"]  # along the branch, counted from the fork point
    lo = min(0, base_pos if base_pos is not None else 0)
    hi = max(behind, ahead, 1)
    left, right = 70, width - 150

    def x(position: int) -> float:
        return round(left + (position - lo) / (hi - lo) * (right - left), 1)

    branch = facts.get("branch", "")
    svg = Svg(
        width=width, height=height, id_prefix=id_prefix, css_class="picture pin-history",
        title=f"Pin history of {path}: {pin_history_figures(facts)} {branch}",
        description=pin_history_sentence(facts, path=path),
    )
    svg.root.set("font-family", FONT)
    svg.add("rect", x=0, y=0, width=width, height=height, fill="#ffffff")
    svg.add("text", x=12, y=22, font_size=14, font_weight=700, fill=TEXT,
            text=f"{facts.get('repository', path)} history")
    # The reference branch, continuing past its head.
    svg.add("line", x1=left - 40, y1=main_y, x2=x(behind) + 40, y2=main_y, stroke=LINE, stroke_width=3)
    svg.add("text", x=left - 40, y=main_y - 10, font_size=12, font_weight=700, fill=LINE, text=branch)
    _dot(svg, x(behind), main_y, fill=LINE, radius=6, label="head of the branch")
    svg.add("text", x=x(behind) + 40, y=main_y - 28, font_size=12, fill=MUTED, text_anchor="end",
            text=f"{branch} head {short(facts.get('branch_head'))}")
    pin_colour = RED[1] if not on_branch else GREEN[1]
    if base_pos is not None:
        _dot(svg, x(base_pos), main_y, fill="#175cd3", radius=7, label="the pin at the PR's base")
        svg.add("text", x=x(base_pos), y=main_y - 12, font_size=12, fill="#175cd3", text_anchor="middle",
                text=f"base pin {short(facts['base_pin'])}", class_="base-pin")
    if on_branch:
        _dot(svg, x(0), main_y, fill=pin_colour, radius=7, label="the PR's pin")
        svg.add("text", x=x(0), y=main_y + 26, font_size=12, fill=pin_colour, text_anchor="middle",
                text=f"PR pin {short(facts['pin'])}", class_="pr-pin")
    else:
        fork_x, pin_x = x(0), x(ahead)
        svg.add("path", d=f"M {fork_x} {main_y} C {fork_x + 18} {main_y}, {fork_x + 6} {side_y}, "
                          f"{fork_x + 30} {side_y} L {max(pin_x, fork_x + 30)} {side_y}",
                fill="none", stroke=pin_colour, stroke_width=3, stroke_dasharray="6 4")
        _dot(svg, fork_x, main_y, fill="#ffffff", stroke=LINE, radius=5, label="the fork point")
        # Left of the fork point: the pin's line leaves it to the right and down, through where a
        # centred label would sit.
        svg.add("text", x=fork_x - 8, y=main_y + 20, font_size=11, fill=MUTED, text_anchor="end",
                text=f"fork {short(facts.get('fork'))}", class_="fork")
        _dot(svg, max(pin_x, fork_x + 30), side_y, fill=pin_colour, radius=7, label="the PR's pin")
        svg.add("text", x=max(pin_x, fork_x + 30) + 12, y=side_y + 4, font_size=12, fill=pin_colour,
                text=f"PR pin {short(facts['pin'])}", class_="pr-pin")
    svg.add("text", x=12, y=height - 36, font_size=14, font_weight=700, fill=pin_colour, class_="figures",
            text=f"{pin_history_figures(facts)} {branch}")
    if facts.get("fast_forward") is not None:
        ff = facts["fast_forward"]
        verdict = (
            f"fast-forward from {short(facts['base_pin'])}: adds {facts['added']}"
            if ff
            else f"not a fast-forward from {short(facts['base_pin'])}: adds {facts['added']}, "
                 f"drops {facts['dropped']}"
        )
        svg.add("text", x=12, y=height - 14, font_size=13, fill=GREEN[1] if ff else RED[1], class_="fast-forward",
                text=verdict)
    return svg.markup()


def _dot(svg: Svg, cx: float, cy: float, *, fill: str, radius: int, label: str, stroke: str | None = None):
    circle = svg.add("circle", cx=cx, cy=cy, r=radius, fill=fill, stroke=stroke or "#ffffff", stroke_width=2)
    svg.add("title", circle, text=label)
    return circle


# --- verification grids --------------------------------------------------------------------------


@dataclass
class GridCell:
    state: str  # a verdict or an evidence state ('' when not verified there)
    label: str  # what the state means in words
    marks: tuple[str, ...] = ()  # keys of MARKS
    note: str = ""  # drawn inside a wide cell: where the code moved to


@dataclass
class GridRow:
    label: str
    cells: list[GridCell] = field(default_factory=list)
    link: str = ""


def grid_pictures(**arguments) -> SafeString | str:
    """The grid twice: as it is drawn on a wide screen, labels beside their cells, and stacked for
    a phone, each label above its cells, so a narrow screen shows whole columns rather than the
    labels and a sliver of one (the stylesheet shows one or the other)."""
    wide = grid_svg(**arguments)
    if not wide:
        return ""
    stacked = grid_svg(**{**arguments, "id_prefix": arguments["id_prefix"] + "-stacked"}, stacked=True)
    return mark_safe(wide + stacked)


def grid_svg(
    *, rows: list[GridRow], columns: list[str], title: str, id_prefix: str, cell_width: int = 76,
    label_width: int = 300, stacked: bool = False,
) -> SafeString | str:
    """Rows by columns (a column is "<sha> <role>"), each cell coloured by its state and marked
    M (moved), R (renamed) or I (re-indented). Every cell has its own <title> (row, column, state
    and marks in words). `stacked` puts each row's label above its cells, for a narrow screen."""
    if not rows or not columns:
        return ""
    head, cell_height, gap = 48, 28, 4
    cells_width = len(columns) * (cell_width + gap)
    if stacked:
        # The label over the row's cells, as wide as they are (and at least a phone's width).
        label_width, label_room, row_step = 8, max(cells_width, 300), 18 + cell_height + gap + 4
        width = label_room + 16
    else:
        # As wide as the longest label needs, within bounds (the cell's <title> has the whole label).
        label_width = min(label_width, max(160, 32 + int(6.6 * max(len(row.label) for row in rows))))
        label_room, row_step = label_width - 16, cell_height + gap
        width = label_width + cells_width + 12
    legend_y = head + len(rows) * row_step + 18
    height = legend_y + 22
    words = []
    for row in rows:
        described = "; ".join(f"{column}: {_cell_words(cell)}" for column, cell in zip(columns, row.cells, strict=True))
        words.append(f"{row.label} — {described}.")
    svg = Svg(width=width, height=height, id_prefix=id_prefix,
              css_class="picture grid-stacked" if stacked else "picture grid", title=title,
              description=" ".join(words), role="group" if any(row.link for row in rows) else "img")
    svg.root.set("font-family", FONT)
    background = svg.add("rect", x=0, y=0, width=width, height=height, fill="#ffffff")
    for index, column in enumerate(columns):
        cx = label_width + index * (cell_width + gap) + cell_width / 2
        sha, _, role = column.partition(" ")
        svg.add("text", x=cx, y=head - 22, font_size=12, font_family="ui-monospace, monospace", fill=TEXT,
                text_anchor="middle", text=sha)
        if role:
            svg.add("text", x=cx, y=head - 8, font_size=11, fill=MUTED, text_anchor="middle", text=role)
    used_states, used_marks = {}, set()
    for row_index, row in enumerate(rows):
        y = head + row_index * row_step
        group = svg.add("g", class_="grid-row")
        if row.link:
            group = svg.add("a", group, href=row.link)
        if stacked:
            svg.add("text", group, x=8, y=y + 12, font_size=12, fill=TEXT, text=_fit(row.label, label_room))
            y += 18
        else:
            svg.add("text", group, x=8, y=y + cell_height / 2 + 4, font_size=12, fill=TEXT,
                    text=_fit(row.label, label_room))
        for column_index, (column, cell) in enumerate(zip(columns, row.cells, strict=True)):
            fill, stroke, ink = PALETTE.get(cell.state, NONE)
            used_states.setdefault(cell.state, cell.label)
            cx = label_width + column_index * (cell_width + gap)
            rect = svg.add("rect", x=cx, y=y, width=cell_width, height=cell_height, rx=4, fill=fill, stroke=stroke,
                           stroke_dasharray="3 2" if not cell.state else None, class_=f"cell state-{cell.state or 'none'}")
            svg.add("title", rect, text=f"{row.label} at {column}: {_cell_words(cell)}")
            inside = cell.note if cell.note else cell.label
            svg.add("text", x=cx + 6, y=y + cell_height / 2 + 4, font_size=11, fill=ink,
                    text=_fit(inside, cell_width - 12 - 10 * len(cell.marks)))
            for mark_index, mark in enumerate(cell.marks):
                used_marks.add(mark)
                svg.add("text", x=cx + cell_width - 6 - 10 * mark_index, y=y + 11, font_size=10, font_weight=700,
                        fill=ink, text_anchor="end", class_=f"mark mark-{mark}", text=MARKS[mark][0])
    bottom = _legend(svg, used_states, used_marks, y=legend_y, width=width)
    if bottom + 10 > height:
        # The legend took more lines than one: the picture grows to hold them.
        height = bottom + 10
        svg.root.set("height", str(height))
        svg.root.set("viewBox", f"0 0 {width} {height}")
        background.set("height", str(height))
    return svg.markup()


def _cell_words(cell: GridCell) -> str:
    marks = [MARKS[mark][1] for mark in cell.marks]
    words = cell.label + (f" ({', '.join(marks)})" if marks else "")
    return f"{words}, now {cell.note}" if cell.note else words


# The width of a character of the legend's 11px text, taken wide so no entry runs into the next.
LEGEND_CHAR = 6.8


def _legend(svg: Svg, states: dict[str, str], marks: set[str], *, y: int, width: int) -> int:
    """The legend's entries, in lines that fit the picture's width; returns the last line's y."""
    entries = [(state, label) for state, label in states.items()]
    entries += [(None, f"{MARKS[mark][0]} = {MARKS[mark][1]}") for mark in sorted(marks)]
    x, line_height = 8, 18
    for state, label in entries:
        swatch = 16 if state is not None else 0
        room = swatch + LEGEND_CHAR * len(label)
        if x > 8 and x + room > width - 8:
            x, y = 8, y + line_height
        if state is not None:
            fill, stroke, _ = PALETTE.get(state, NONE)
            svg.add("rect", x=x, y=y - 10, width=12, height=12, rx=2, fill=fill, stroke=stroke)
        svg.add("text", x=x + swatch, y=y, font_size=11, fill=MUTED, text=label)
        x += room + 16
    return y


def _fit(text: str, pixels: float) -> str:
    """Text cut to about `pixels` wide at 11–12px (an ellipsis marks the cut; the <title> has it all)."""
    room = max(1, int(pixels / 6.6))
    return text if len(text) <= room else text[: room - 1].rstrip() + "…"
