"""Evidence snippets as highlighted HTML with the line numbers they have in the file."""
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

# Lexers strip leading and trailing blank lines by default, which would shift every line number
# after a snippet that starts on an empty line.
_LEXER_OPTIONS = {"stripnl": False, "ensurenl": True}


def lexer_for(path: str, code: str = "") -> Lexer:
    """The lexer pygments picks for `path`'s file name, or plain text when it knows none."""
    try:
        return get_lexer_for_filename(path.rsplit("/", 1)[-1], code, **_LEXER_OPTIONS)
    except ClassNotFound:
        return TextLexer(**_LEXER_OPTIONS)


def highlight_snippet(code: str, *, path: str, start_line: int = 1) -> SafeString:
    """`code` highlighted for `path`'s language, its lines numbered from `start_line`.

    The numbers sit in their own table column so copying the code does not copy them."""
    formatter = HtmlFormatter(
        linenos="table",
        linenostart=max(start_line or 1, 1),
        cssclass="highlight",
        wrapcode=True,
    )
    return mark_safe(highlight(code or "\n", lexer_for(path, code), formatter))
