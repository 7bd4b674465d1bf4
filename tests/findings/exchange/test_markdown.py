"""Markdown export: a PR comment with the blockers grouped, verdicts and permalinks."""
import pytest

from findings.exchange.markdown import md_code, md_escape, md_link, pull_request_markdown
from findings.models import Verification
from tests.findings.exchange_data import build_review

pytestmark = pytest.mark.django_db


def test_it_has_a_heading_and_a_status_line():
    review = build_review()
    text = pull_request_markdown(pull_request=review.pull_request)
    assert text.startswith("## Before acme/loader#4108 can merge: Add the \\*streaming\\* loader\n")
    status = next(line for line in text.splitlines() if line.startswith("**Status:**"))
    assert status.startswith("**Status:** open · 3 of 4 blockers open · 1 of 1 cleanups open · ")
    assert f"verified at [`{review.head.short_sha}`](https://github.com/acme/loader/commit/{review.head.sha})" in status
    assert status.endswith(": 1 still present, 1 likely fixed, 2 not verified")


def test_blockers_are_grouped_as_on_the_blockers_page():
    review = build_review()
    text = pull_request_markdown(pull_request=review.pull_request)
    ci, nothing, cleanups = text.index("#### Caught by CI"), text.index("#### Nothing checks these"), text.index(
        "### Cleanups")
    assert ci < text.index("**1\\. The pin is off main**") < nothing
    assert nothing < text.index("**2\\. Tolerance") < cleanups
    assert nothing < text.index("**5\\. Audio runs die mid-run**") < cleanups
    assert text.index("- 4\\. Name the loader better — not checkable by machine") > cleanups


def test_each_blocker_shows_its_verdict_and_a_permalink():
    review = build_review()
    lines = pull_request_markdown(pull_request=review.pull_request).splitlines()
    first = next(line for line in lines if "**1\\." in line)
    assert f"still present at [`{review.head.short_sha}`]" in first
    # The first snippet's permalink, at the commit it was recorded at.
    assert first.endswith(
        f"· [src/loader.py:40-42](https://github.com/acme/loader/blob/{review.reviewed.sha}/src/loader.py#L40-L42)"
    )
    second = next(line for line in lines if "**2\\." in line)
    assert "likely fixed at" in second
    # No snippet: the finding's location, at the latest verified commit.
    assert second.endswith(
        f"[src/generic\\_sft.py:259](https://github.com/acme/loader/blob/{review.head.sha}/src/generic_sft.py#L259)"
    )
    fifth = next(line for line in lines if "**5\\." in line)
    assert f"not verified at [`{review.head.short_sha}`]" in fifth


def test_a_closed_blocker_says_so():
    review = build_review()
    lines = pull_request_markdown(pull_request=review.pull_request).splitlines()
    third = next(line for line in lines if "**3\\." in line)
    assert f"marked fixed in [`{review.head.short_sha}`]" in third


def test_text_from_the_review_is_escaped():
    review = build_review()
    text = pull_request_markdown(pull_request=review.pull_request)
    assert "**2\\. Tolerance \\_0\\_ never stops**" in text
    # A summary that starts like a list item stays text, and brackets and tags stay literal.
    assert "  \\- a \\[broken\\] dataset \\<runs\\> forever" in text.splitlines()


def test_a_review_never_verified_says_so():
    review = build_review()
    Verification.objects.all().delete()
    text = pull_request_markdown(pull_request=review.pull_request)
    assert "not verified yet" in text.splitlines()[2]
    assert "**1\\. The pin is off main** — not verified yet" in text


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("plain words", "plain words"),
        ("**bold** _em_ `code`", "\\*\\*bold\\*\\* \\_em\\_ \\`code\\`"),
        ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
        ("<script>", "\\<script\\>"),
        ("# heading", "\\# heading"),
        ("1. not a list", "1\\. not a list"),
        ("- not a list", "\\- not a list"),
        ("a | b", "a \\| b"),
        ("two\nlines", "two lines"),
        ("&amp;", "\\&amp;"),
    ],
)
def test_md_escape_keeps_text_literal(raw, escaped):
    assert md_escape(raw) == escaped


def test_md_link_keeps_the_destination_in_one_piece():
    assert md_link("a b", "https://x/blob/s/a b (1).py") == "[a b](https://x/blob/s/a%20b%20%281%29.py)"
    assert md_link("plain", "") == "plain"


def test_md_code_survives_backticks():
    assert md_code("abc") == "`abc`"
    assert md_code("a`b") == "``a`b``"
