import re

import pytest

from presentation.rendering.highlight import highlight_replacement, highlight_snippet, lexer_for


def line_numbers(html: str) -> list[int]:
    numbers = html.split('class="linenos"', 1)[1].split("</td>", 1)[0]
    return [int(number) for number in re.findall(r">(\d+)<", numbers)]


def test_lines_are_numbered_from_the_snippets_start_line():
    html = highlight_snippet("def load():\n    return None\n", path="src/loader.py", start_line=259)
    assert line_numbers(html) == [259, 260]


def test_a_leading_blank_line_does_not_shift_the_numbers():
    html = highlight_snippet("\n\nx = 1\n", path="src/a.py", start_line=10)
    assert line_numbers(html) == [10, 11, 12]


def test_the_language_comes_from_the_file_name():
    assert lexer_for("nemo_rl/data/loader.py").name == "Python"
    assert lexer_for("examples/configs/sft.yaml").name == "YAML"
    html = highlight_snippet("def load():\n    pass\n", path="src/loader.py", start_line=1)
    assert '<span class="k">def</span>' in html


def test_an_unknown_file_type_falls_back_to_plain_text():
    assert lexer_for("NOTES.unknown-extension").name == "Text only"
    html = highlight_snippet("<b>not html</b>\n", path="NOTES.unknown-extension", start_line=3)
    assert "&lt;b&gt;not html&lt;/b&gt;" in html and line_numbers(html) == [3]


def test_code_is_escaped_not_interpreted():
    html = highlight_snippet('x = "</pre><script>alert(1)</script>"\n', path="a.py", start_line=1)
    assert "<script>" not in html


SAMPLES = [
    ("def load():\n    return None\n", "src/loader.py", 259),
    ("\n\nx = 1\n", "src/a.py", 10),
    ("key: value\n  - item\n", "conf/sft.yaml", 1),
    ("no newline at the end", "NOTES.unknown-extension", 7),
    ('x = "</pre><script>alert(1)</script>"\n', "a.py", 3),
    ("", "empty.py", 1),
]


@pytest.mark.parametrize(("code", "path", "start_line"), SAMPLES)
def test_the_cached_highlight_is_what_pygments_makes_of_the_snippet_on_its_own(code, path, start_line):
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    formatter = HtmlFormatter(linenos="table", linenostart=start_line, cssclass="highlight", wrapcode=True)
    # The same but for the wrapper being focusable (a snippet that scrolls sideways is reached by keyboard).
    assert highlight_snippet(code, path=path, start_line=start_line) == highlight(
        code or "\n", lexer_for(path), formatter
    ).replace('<div class="highlight">', '<div class="highlight" tabindex="0">', 1)


def test_a_text_is_highlighted_once_whatever_line_it_starts_on():
    from presentation.rendering import highlight as module

    module.highlight_cache_clear()
    for start_line in (1, 50, 900):
        html = highlight_snippet("total = compute(1)\n", path="pkg/a.py", start_line=start_line)
        assert line_numbers(html) == [start_line]
    info = module._highlighted_lines.cache_info()
    assert (info.misses, info.hits) == (1, 2)
    assert lexer_for("pkg/a.py") is lexer_for("other/b.py")


def test_a_whole_file_gets_one_row_and_anchor_per_line():
    from presentation.rendering.highlight import highlight_file

    html = highlight_file('"""A docstring\nover two lines"""\nx = 1\n\ny = 2', path="src/a.py")
    rows = re.findall(r'<tr id="L(\d+)"><td class="lineno"><a href="#L(\d+)" data-line="(\d+)">', html)
    assert [int(number) for number, _, _ in rows] == [1, 2, 3, 4, 5]
    # A token over two lines is closed and reopened at the line end: every row is balanced HTML.
    for row in html.split("<tr ")[1:]:
        assert row.count("<span") == row.count("</span>")
    assert '<span class="k">' not in html.split('id="L4"')[1].split("</tr>")[0]  # the empty line


def test_a_whole_file_is_numbered_as_git_counts_lines():
    from presentation.rendering.highlight import highlight_file

    html = highlight_file("one\r\ntwo\rstill two\nthree\n", path="notes.txt")
    assert html.count("<tr ") == 3 and "still two" in html.split('id="L2"')[1].split("</tr>")[0]
    assert "&lt;script&gt;" in highlight_file("<script>alert(1)</script>\n", path="x.txt")


def rows_of(html):
    """(kind, old number, new number, text) of each row of a replacement's table."""
    rows = re.findall(
        r'<tr class="diff-(\w+)"><td class="lineno">(\d*)</td><td class="lineno">(\d*)</td>'
        r'<td class="line-code"><span class="diff-sign" aria-hidden="true">.</span>(.*?)</td></tr>', html
    )
    return [(kind, old, new, re.sub(r"<[^>]+>", "", text)) for kind, old, new, text in rows]


def test_a_replacement_numbers_each_side_in_its_own_file():
    html = highlight_replacement(
        "a = 1\nb = 2\nc = 3", "a = 1\nb = compute()\nc = 3", path="x.py", old_start=10, new_start=40
    )

    assert rows_of(html) == [
        ("context", "10", "40", "a = 1"),
        ("removed", "11", "", "b = 2"),
        ("added", "", "41", "b = compute()"),
        ("context", "12", "42", "c = 3"),
    ]


def test_a_replacement_with_nothing_in_place_shows_the_lines_removed():
    html = highlight_replacement("x = 1\ny = 2", "", path="x.py", old_start=3, new_start=None)

    assert [row[:3] for row in rows_of(html)] == [("removed", "3", ""), ("removed", "4", "")]


def test_a_replacement_escapes_the_code_of_both_sides():
    html = highlight_replacement("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", path="notes.txt",
                                 old_start=1, new_start=1)

    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img" in html
