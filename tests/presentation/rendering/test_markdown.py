from html.parser import HTMLParser

from presentation.rendering.markdown import render_markdown


def attribute_names(html: str) -> set[str]:
    names: set[str] = set()

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            names.update(name for name, _ in attrs)

    Collector().feed(html)
    return names


def test_it_renders_commonmark_with_tables():
    html = render_markdown("Set it to **100**.\n\n| flag | value |\n| --- | --- |\n| tolerance | 0 |\n")
    assert "<strong>100</strong>" in html
    assert "<table>" in html and "<td>tolerance</td>" in html


def test_a_script_tag_is_shown_as_text_and_never_runs():
    html = render_markdown("Before <script>alert('x')</script> after\n\n<script>\nalert(1)\n</script>\n")
    assert "<script" not in html
    assert "&lt;script&gt;" in html


def test_javascript_links_are_not_links():
    html = render_markdown("[click](javascript:alert(1)) and <javascript:alert(2)> and [x](JaVaScRiPt:alert(3))")
    assert "href" not in html
    assert 'href="javascript' not in html.lower()


def test_links_open_without_handing_over_the_opener():
    html = render_markdown("See [the comment](https://github.com/acme/project/pull/1#r2).")
    assert '<a href="https://github.com/acme/project/pull/1#r2" rel="noopener noreferrer">the comment</a>' in html


def test_images_are_dropped_so_pages_load_nothing_from_elsewhere():
    html = render_markdown("![diagram](https://example.com/tracker.png)")
    assert "<img" not in html and "example.com" not in html


def test_event_handler_attributes_cannot_be_smuggled_in():
    html = render_markdown(
        '<a href="https://x.test" onclick="steal()">x</a>\n\n[y](https://y.test "t\\" onmouseover=\\"steal()")'
    )
    assert attribute_names(html) <= {"href", "rel", "title"}


def test_empty_text_renders_nothing():
    assert render_markdown("") == "" and render_markdown("   \n") == ""


def test_a_mermaid_block_becomes_a_diagram_placeholder_holding_its_escaped_source():
    html = render_markdown("See:\n\n```mermaid\ngraph LR\n  A[RL main] --> B[\"<b>Bridge</b> & co\"]\n```\n")
    assert '<div class="mermaid-diagram"><pre class="mermaid-source">graph LR\n' in html
    assert 'A[RL main] --&gt; B["&lt;b&gt;Bridge&lt;/b&gt; &amp; co"]' in html


def test_a_mermaid_block_cannot_smuggle_markup_out_of_its_source():
    html = render_markdown("```mermaid\n</pre></div><script>alert(1)</script><a href='javascript:x'>y</a>\n```\n")
    assert "<script" not in html and "<a " not in html
    assert html.count("<pre") == 1 and html.count("</pre>") == 1


def test_only_the_diagram_placeholder_keeps_a_class():
    html = render_markdown("```python\nx = 1\n```\n\n<div class=\"mermaid-diagram evil\">x</div>\n")
    assert attribute_names(html) == set()


def test_a_page_knows_when_it_holds_a_diagram():
    from presentation.rendering.markdown import has_diagram

    assert has_diagram("", "text\n\n```mermaid\ngraph LR\nA-->B\n```\n")
    assert not has_diagram("`mermaid` is mentioned", "```python\nmermaid = 1\n```\n", "")
