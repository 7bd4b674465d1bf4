"""Findings' Markdown as safe HTML: markdown-it-py (CommonMark plus tables) renders, nh3 sanitises.

The parser already escapes raw HTML and refuses `javascript:` links; the sanitiser is the second
wall, so a parser upgrade or a plugin cannot let a script or a hostile URL through.

A fenced ```mermaid block becomes a diagram placeholder: its source, escaped, in
`<div class="mermaid-diagram"><pre class="mermaid-source">`, which the pages hand to a local copy
of Mermaid (strict security level) to draw. Without script, or when the diagram does not parse,
the reader sees the source.

The parser is built on first use: markdown-it takes longer to import than the rest of a command's
start-up, and most processes (a worker verifying, a command) never render Markdown."""
import functools

import nh3
from django.utils.safestring import SafeString, mark_safe

from presentation.rendering.fragments import content_key, kept_fragment, renderer_version

DIAGRAM_LANGUAGE = "mermaid"


def _is_diagram(token) -> bool:
    return token.type == "fence" and token.info.strip().split(maxsplit=1)[:1] == [DIAGRAM_LANGUAGE]


@functools.cache
def _parser():
    from markdown_it import MarkdownIt
    from markdown_it.common.utils import escapeHtml

    # Raw HTML in a finding is shown as text: reviewers quote HTML far more often than they mean it.
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    render_fence = parser.renderer.rules["fence"]

    def fence(tokens, index, options, env):
        token = tokens[index]
        if _is_diagram(token):
            return (
                '<div class="mermaid-diagram"><pre class="mermaid-source">'
                f"{escapeHtml(token.content)}</pre></div>\n"
            )
        return render_fence(tokens, index, options, env)

    parser.renderer.rules["fence"] = fence
    return parser

# No <img>: the companion pages are self-contained and must not load anything from elsewhere.
ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li",
    "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
# Only the diagram placeholder's own classes survive: nothing else in a finding can style itself.
ALLOWED_CLASSES = {"div": {"mermaid-diagram"}, "pre": {"mermaid-source"}}
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}


# Rendered Markdown is kept by its text, as GitLab keeps `cached_markdown_version`: a finding's
# write-up shows on its page, its PR's pages and the static render, each rebuilt once per
# generation, while the text itself rarely changes. Kept in the process (bounded in entries) and
# in the shared cache by the text's hash and `markdown_render_version` (`fragments`); only texts
# up to MARKDOWN_KEPT_CHARS are kept, so the process holds at most a few tens of MiB.
MARKDOWN_CACHE_SIZE = 2048
MARKDOWN_KEPT_CHARS = 16_000


def render_markdown(text: str) -> SafeString:
    """`text` (Markdown) as sanitised HTML; links open with rel="noopener noreferrer"."""
    if not text or not text.strip():
        return mark_safe("")
    if len(text) <= MARKDOWN_KEPT_CHARS:
        return _rendered_kept(text)
    return _rendered(text)


@functools.lru_cache(maxsize=MARKDOWN_CACHE_SIZE)
def _rendered_kept(text: str) -> SafeString:
    # The process's copy first, then the shared cache's (by the text's hash and the render version).
    html = kept_fragment("markdown", markdown_render_version(), content_key(text), lambda: str(_rendered(text)))
    return mark_safe(html)  # what `_rendered` made: the sanitiser's output


@functools.cache
def markdown_render_version() -> str:
    """Moves when this module or the libraries that render and sanitise change."""
    return renderer_version(__file__, ("markdown-it-py", "nh3"))


def _rendered(text: str) -> SafeString:
    html = _parser().render(text)
    return mark_safe(
        nh3.clean(
            html,
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            allowed_classes=ALLOWED_CLASSES,
            url_schemes=ALLOWED_URL_SCHEMES,
            link_rel="noopener noreferrer",
        )
    )


def has_diagram(*texts: str) -> bool:
    """Whether any of these Markdown texts holds a ```mermaid block (the page then loads Mermaid)."""
    return any(
        text and DIAGRAM_LANGUAGE in text and any(_is_diagram(token) for token in _parser().parse(text))
        for text in texts
    )
