"""Rendered Markdown is kept by its text: the same text is rendered once, a changed one afresh,
and a long one is never kept."""
from unittest import mock

from presentation.rendering import markdown


def test_the_same_text_is_rendered_once_and_a_changed_one_again():
    text = "A **kept** text, written once for this test."
    with mock.patch.object(markdown, "_parser", wraps=markdown._parser) as parser:
        first = markdown.render_markdown(text)
        assert markdown.render_markdown(text) == first
        assert first == "<p>A <strong>kept</strong> text, written once for this test.</p>\n"
        assert parser.call_count == 1
        assert "changed" in markdown.render_markdown(text + " changed")
        assert parser.call_count == 2


def test_a_long_text_is_rendered_each_time_and_not_kept():
    text = "word " * (markdown.MARKDOWN_KEPT_CHARS // 5 + 1)
    with mock.patch.object(markdown, "_parser", wraps=markdown._parser) as parser:
        markdown.render_markdown(text)
        markdown.render_markdown(text)
        assert parser.call_count == 2


def test_a_kept_render_is_still_sanitised():
    html = markdown.render_markdown("[x](javascript:alert(1)) <script>alert(1)</script>")
    assert markdown.render_markdown("[x](javascript:alert(1)) <script>alert(1)</script>") == html
    assert "href=\"javascript" not in html.lower() and "<script>" not in html
