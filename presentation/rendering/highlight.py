"""Evidence snippets as highlighted HTML with the line numbers they have in the file.

A page of thousands of snippets highlights each distinct text once: lexers are looked up once per
file name and reused, one formatter serves every snippet, and the highlighted code is cached by
its text and language. The line numbers, which differ between copies of the same text, are put
around the cached code afterwards, in the same table pygments' `linenos="table"` makes."""
from collections.abc import Collection, Mapping
from difflib import SequenceMatcher
from functools import cache, lru_cache

from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, find_lexer_class_for_filename

from presentation.rendering.fragments import content_key, kept_fragment, renderer_version

# Lexers strip leading and trailing blank lines by default, which would shift every line number
# after a snippet that starts on an empty line.
_LEXER_OPTIONS = {"stripnl": False, "ensurenl": True}

# Only the highlighted lines: the table and the numbers are ours, so the output can be shared by
# every snippet of the same text whatever line it starts on.
_FORMATTER = HtmlFormatter(nowrap=True)

# Distinct snippet texts of the largest pages we serve; each entry is a few kilobytes at most.
HIGHLIGHT_CACHE_SIZE = 20_000


def lexer_for(path: str) -> Lexer:
    """The lexer pygments picks for `path`'s file name, or plain text when it knows none. By name
    only, so every snippet of a file gets the same one and the lookup is done once per name. One
    instance per language serves every text: lexers keep no state between texts."""
    return _lexer_of_class(_lexer_class_for(path.rsplit("/", 1)[-1]))


@lru_cache(maxsize=4096)
def _lexer_class_for(file_name: str) -> type[Lexer]:
    return find_lexer_class_for_filename(file_name) or TextLexer


@lru_cache(maxsize=None)
def _lexer_of_class(lexer_class: type[Lexer]) -> Lexer:
    return lexer_class(**_LEXER_OPTIONS)


@lru_cache(maxsize=HIGHLIGHT_CACHE_SIZE)
def _highlighted_lines(code: str, lexer: Lexer) -> tuple[str, int]:
    """The code's lines highlighted, and how many there are. Cached by text and language: the
    lexer is the one shared instance for its file names; in the process, then in the shared cache
    by the code's hash, the lexer's name and `highlight_version` (`fragments`)."""
    html = kept_fragment("highlight", highlight_version(), content_key(f"{type(lexer).__module__}.{type(lexer).__name__}", code),
                         lambda: highlight(code, lexer, _FORMATTER))
    return html, html.count("\n")


@cache
def highlight_version() -> str:
    """Moves when this module (its formatter and options) or Pygments changes."""
    return renderer_version(__file__, ("Pygments",))


def highlight_snippet(code: str, *, path: str, start_line: int = 1) -> SafeString:
    """`code` highlighted for `path`'s language, its lines numbered from `start_line`.

    The numbers sit in their own table column so copying the code does not copy them."""
    lexer = lexer_for(path)
    lines, count = _highlighted_lines(code or "\n", lexer)
    first = max(start_line or 1, 1)
    numbers = "\n".join(f'<span class="normal">{number}</span>' for number in range(first, first + count))
    # `lines` is pygments' output, which escapes the code; the numbers are integers.
    return mark_safe(
        # Focusable: a long line scrolls the snippet sideways, which a keyboard must reach too.
        '<div class="highlight" tabindex="0"><table class="highlighttable"><tr>'
        f'<td class="linenos"><div class="linenodiv"><pre>{numbers}</pre></div></td>'
        f'<td class="code"><div><pre><span></span><code>{lines}</code></pre></div></td>'
        "</tr></table></div>\n"
    )


def highlight_cache_clear() -> None:
    _highlighted_lines.cache_clear()



def highlight_file(code: str, *, path: str, gutter: Mapping[int, str] | None = None,
                   marked: Collection[int] = ()) -> SafeString:
    """A whole file highlighted for `path`'s language, one table row per line: the row's id is
    `L<n>` (so `#L10` scrolls to it) and its number a link to that anchor, which the code browser
    makes focusable and selectable. With a `gutter` (safe HTML by line number: the code browser's
    links to the findings that start there) every row gets a column for it, and the rows of
    `marked` lines the class `has-finding`. Not cached: a file is highlighted once per page, and a
    cache of whole files would hold megabytes per entry."""
    # git and editors count lines at LF only; pygments also breaks lines at a lone CR, which would
    # shift every number after it away from the line the snippet reader takes at that number.
    text = (code or "\n").replace("\r\n", "\n").replace("\r", "")
    lines = highlight(text, lexer_for(path), _FORMATTER).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    marked = set(marked)

    def row(number: int, line: str) -> str:
        marks = ""
        if gutter is not None:
            marks = f'<td class="line-marks">{gutter.get(number, "")}</td>'
        css = ' class="has-finding"' if number in marked else ""
        return (f'<tr id="L{number}"{css}>{marks}<td class="lineno"><a href="#L{number}" data-line="{number}">{number}</a></td>'
                f'<td class="line-code">{line}</td></tr>')

    # pygments closes its spans at every line end, so each line is balanced HTML on its own;
    # what it emits is escaped, the numbers are integers and the gutter's HTML is the caller's, safe.
    return mark_safe(
        '<div class="highlight code-file"><table class="code-lines"><tbody>'
        + "".join(row(number, line) for number, line in enumerate(lines, start=1))
        + "</tbody></table></div>\n"
    )


def highlight_replacement(old: str, new: str, *, path: str, old_start: int | None, new_start: int | None,
                          new_path: str | None = None) -> SafeString:
    """Lines that are gone beside what replaced them, as a unified diff: each side highlighted
    for its file's language, each line numbered where it is in its own file (``old_start`` at the
    commit the lines were recorded at, ``new_start`` at the commit verified). Not cached: a page
    shows a few, each of at most a successor's forty lines."""
    old_lines = _lines_highlighted(old, path)
    new_lines = _lines_highlighted(new, new_path or path)
    old_keys = [line.strip() for line in old.split("\n")] if old else []
    new_keys = [line.strip() for line in new.split("\n")] if new else []
    rows = []

    def row(kind: str, sign: str, old_number: int | None, new_number: int | None, html: str) -> None:
        rows.append(
            f'<tr class="diff-{kind}"><td class="lineno">{old_number or ""}</td>'
            f'<td class="lineno">{new_number or ""}</td>'
            f'<td class="line-code"><span class="diff-sign" aria-hidden="true">{sign}</span>{html}</td></tr>'
        )

    first_old, first_new = max(old_start or 1, 1), max(new_start or 1, 1)
    for tag, old_from, old_to, new_from, new_to in SequenceMatcher(None, old_keys, new_keys, autojunk=False).get_opcodes():
        if tag == "equal":
            for offset in range(old_to - old_from):
                row("context", " ", first_old + old_from + offset, first_new + new_from + offset,
                    new_lines[new_from + offset])
            continue
        for number in range(old_from, old_to):
            row("removed", "−", first_old + number, None, old_lines[number])
        for number in range(new_from, new_to):
            row("added", "+", None, first_new + number, new_lines[number])
    # pygments escapes the code and closes its spans at every line end; the numbers are integers.
    return mark_safe(
        '<div class="highlight successor-diff diff-scroll" tabindex="0"><table class="diff-lines"><tbody>'
        + "".join(rows) + "</tbody></table></div>\n"
    )


def _lines_highlighted(code: str, path: str) -> list[str]:
    if not code:
        return []
    html, _ = _highlighted_lines(code, lexer_for(path))
    lines = html.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    wanted = code.count("\n") + 1
    return (lines + [""] * wanted)[:wanted]
