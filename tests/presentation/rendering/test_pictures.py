"""The pictures are SVG that parses as XML, carries its figures and a text alternative, and
escapes whatever text it is given."""
import re
from xml.etree import ElementTree

import pytest

from presentation.companion import companion_pages_html
from presentation.rendering.pictures import GridCell, GridRow, grid_svg, pin_history_svg
from tests.submodules import verified_submodule_review

SVG = "{http://www.w3.org/2000/svg}"
FACTS = {
    "pin": "3961f399" + "0" * 32, "base_pin": "5ed97996" + "0" * 32, "repository": "NVIDIA-NeMo/Megatron-Bridge",
    "branch": "main", "branch_head": "a" * 40, "on_branch": False, "ahead": 42, "behind": 93, "fork": "b" * 40,
    "base_on_branch": True, "base_behind": 48, "fast_forward": False, "added": 42, "dropped": 45,
    "added_subjects": [], "dropped_subjects": [],
}


def parse(markup: str) -> ElementTree.Element:
    return ElementTree.fromstring(str(markup))


def texts(svg: ElementTree.Element) -> list[str]:
    return ["".join(element.itertext()) for element in svg.iter(f"{SVG}text")]


def svgs_in(html: str) -> list[ElementTree.Element]:
    return [parse(markup) for markup in re.findall(r"<svg\b.*?</svg>", html, flags=re.S)]


def test_the_pin_history_draws_the_reviews_figures_with_a_title_and_a_description():
    svg = parse(pin_history_svg(FACTS, path="3rdparty/Megatron-Bridge", id_prefix="p1"))

    assert svg.get("role") == "img" and svg.get("aria-labelledby") == "p1-title p1-desc"
    assert svg.find(f"{SVG}title").text == "Pin history of 3rdparty/Megatron-Bridge: 42 ahead · 93 behind main"
    description = svg.find(f"{SVG}desc").text
    assert "3961f399 is not on main" in description and "drops 45" in description
    drawn = texts(svg)
    assert "42 ahead · 93 behind main" in drawn
    assert "not a fast-forward from 5ed97996: adds 42, drops 45" in drawn
    assert {"PR pin 3961f399", "base pin 5ed97996", "fork bbbbbbbb"} <= set(drawn)


def test_a_pin_on_its_branch_that_fast_forwards_is_drawn_on_the_line():
    facts = {**FACTS, "on_branch": True, "ahead": 0, "behind": 3, "base_behind": 5, "fast_forward": True,
             "added": 2, "dropped": 0}
    drawn = texts(parse(pin_history_svg(facts, path="b", id_prefix="p2")))

    assert "0 ahead · 3 behind main" in drawn and "fast-forward from 5ed97996: adds 2" in drawn
    assert not any(text.startswith("fork") for text in drawn)


def test_without_figures_there_is_no_picture():
    assert pin_history_svg({"pin": "a" * 40, "problem": "unreachable"}, path="b", id_prefix="p3") == ""


def test_hostile_text_is_escaped_and_stays_text():
    hostile = '</text></svg><script>alert("x")</script>&\x07'
    markup = grid_svg(rows=[GridRow(label=hostile, cells=[GridCell(state="present", label=hostile)])],
                      columns=[hostile], title=hostile, id_prefix="g")

    svg = parse(markup)
    assert not list(svg.iter("script")) and not list(svg.iter(f"{SVG}script"))
    assert svg.find(f"{SVG}title").text == hostile.replace("\x07", "\ufffd")
    assert "<script>" not in str(markup)


def test_the_grid_colours_cells_by_state_and_marks_moves():
    markup = grid_svg(
        rows=[GridRow(label="4. Tolerance", cells=[GridCell("present", "present"),
                                                   GridCell("present", "present", marks=("moved", "reindented")),
                                                   GridCell("", "not verified")])],
        columns=["d044f40 reviewed", "e73411d1 rebased", "d862cea6 head"], title="Grid", id_prefix="g2",
    )
    svg = parse(markup)
    cells = [rect for rect in svg.iter(f"{SVG}rect") if "cell" in (rect.get("class") or "")]
    assert [cell.get("class") for cell in cells] == ["cell state-present", "cell state-present", "cell state-none"]
    assert [cell.find(f"{SVG}title").text for cell in cells][1] == "4. Tolerance at e73411d1 rebased: present (moved, re-indented)"
    assert {"M", "I", "M = moved", "I = re-indented"} <= set(texts(svg))


@pytest.mark.django_db
def test_the_pictures_appear_on_the_pages_and_in_the_static_render(client, tmp_path):
    pull_request, bridge = verified_submodule_review(tmp_path)
    base = pull_request.get_absolute_url()

    finding_page = client.get(f"{base}findings/1/").content.decode()
    blockers_page = client.get(f"{base}blockers/").content.decode()
    overview_page = client.get(base).content.decode()
    static = companion_pages_html(pull_request=pull_request)[0]

    for html in (finding_page, blockers_page, static["blockers.html"]):
        histories = [svg for svg in svgs_in(html) if "pin-history" in svg.get("class")]
        assert len(histories) == 1  # one picture for the three items about the same pin
        assert "4 ahead · 5 behind main" in texts(histories[0])
        assert "not a fast-forward from " + bridge.base_pin[:8] + ": adds 4, drops 3" in texts(histories[0])
    for html in (overview_page, static["index.html"]):
        # The phone's stacked copy says the same cell by cell.
        [stacked] = [svg for svg in svgs_in(html) if "grid-stacked" in svg.get("class").split()]
        assert {rect.find(f"{SVG}title").text for rect in stacked.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None}
        [grid] = [svg for svg in svgs_in(html) if "grid" in svg.get("class").split()]
        cells = [rect.find(f"{SVG}title").text for rect in grid.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None]
        assert "2. A broken dataset never stops the job at " + pull_request.pins.get(role="head").commit.short_sha \
            + " head: still present (moved)" in cells
        assert any(text.startswith("1. The Bridge pin points off main at") and "likely fixed" in text for text in cells)
    [matrix] = [svg for svg in svgs_in(finding_page) if "grid" in svg.get("class").split()]
    assert "to src/loader.py" not in " ".join(texts(matrix))  # finding 1 has no moving code
    snippet_page = client.get(f"{base}findings/2/").content.decode()
    [matrix] = [svg for svg in svgs_in(snippet_page) if "grid" in svg.get("class").split()]
    assert "to src/loader.py:7" in texts(matrix)
