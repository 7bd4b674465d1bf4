"""Fragments kept by their content in the shared cache: a finding's Markdown by its text's hash and
the render version, a snippet's highlighting by its code's hash, lexer and version. A process that
never rendered one reads it from there; a renderer that changed renders it again; with the cache
down it is rendered as before."""
from unittest import mock

import pytest
from django.core.cache import cache

from presentation.rendering import highlight, markdown

TEXT = "A **write-up** kept by its content, [with a link](https://example.com)."
CODE = "def load(sample):\n    return sample\n"


@pytest.fixture(autouse=True)
def fresh_process():
    """Each test starts as a process that rendered nothing, with an empty shared cache."""
    cache.clear()
    markdown._rendered_kept.cache_clear()
    highlight.highlight_cache_clear()
    yield
    markdown._rendered_kept.cache_clear()
    highlight.highlight_cache_clear()


def test_markdown_rendered_by_one_process_is_read_by_another_from_the_shared_cache():
    first = markdown.render_markdown(TEXT)
    markdown._rendered_kept.cache_clear()  # another process: its own copies are empty
    with mock.patch.object(markdown, "_parser", wraps=markdown._parser) as parser:
        assert markdown.render_markdown(TEXT) == first
        assert parser.call_count == 0
        markdown._rendered_kept.cache_clear()
        # A new renderer (a deploy that changed this module or its libraries) renders it again.
        with mock.patch.object(markdown, "markdown_render_version", return_value="another-version"):
            assert markdown.render_markdown(TEXT) == first
        assert parser.call_count == 1


def test_a_snippet_highlighted_by_one_process_is_read_by_another_from_the_shared_cache():
    first = highlight.highlight_snippet(CODE, path="src/load.py", start_line=3)
    highlight.highlight_cache_clear()
    with mock.patch.object(highlight, "highlight", wraps=highlight.highlight) as highlighting:
        # The same code elsewhere in the file: the kept lines, numbered where it starts.
        again = highlight.highlight_snippet(CODE, path="pkg/other.py", start_line=10)
        assert highlighting.call_count == 0
        assert again.split('<td class="code">')[1] == first.split('<td class="code">')[1]
        assert '<span class="normal">10</span>' in again
        highlight.highlight_cache_clear()
        # Another language is another fragment.
        highlight.highlight_snippet(CODE, path="notes.txt")
        assert highlighting.call_count == 1


def test_with_the_cache_down_fragments_are_rendered(settings):
    from recheck.cache import _ASK_AGAIN_AT

    settings.CACHES = {"default": {"BACKEND": "recheck.cache.ForgivingRedisCache",
                                   "LOCATION": "redis://127.0.0.1:9/0"}}
    assert "<strong>write-up</strong>" in markdown.render_markdown(TEXT)
    assert "highlight" in highlight.highlight_snippet(CODE, path="a.py")
    # The cache was asked and found down (read from the cache's own record, not the log, which a
    # worker started by an earlier test in this process may have reconfigured).
    assert any("127.0.0.1:9" in where for where in _ASK_AGAIN_AT)
