"""Findings' Markdown as safe HTML: markdown-it-py (CommonMark plus tables) renders, nh3 sanitises.

The parser already escapes raw HTML and refuses `javascript:` links; the sanitiser is the second
wall, so a parser upgrade or a plugin cannot let a script or a hostile URL through."""
import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

# Raw HTML in a finding is shown as text: reviewers quote HTML far more often than they mean it.
_parser = MarkdownIt("commonmark", {"html": False}).enable("table")

# No <img>: the companion pages are self-contained and must not load anything from elsewhere.
ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li",
    "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}


def render_markdown(text: str) -> SafeString:
    """`text` (Markdown) as sanitised HTML; links open with rel="noopener noreferrer"."""
    if not text or not text.strip():
        return mark_safe("")
    html = _parser.render(text)
    return mark_safe(
        nh3.clean(
            html,
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes=ALLOWED_URL_SCHEMES,
            link_rel="noopener noreferrer",
        )
    )
