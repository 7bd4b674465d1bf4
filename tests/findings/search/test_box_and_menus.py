"""The search box's filters and the page's menus (the API's parameters) are one query: each holds,
so `?q=kind:cleanup&kind=blocker` finds nothing, on the site and through the API alike."""
import re

import pytest

from tests.findings.search.test_search import corpus  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db

CASES = [
    ("kind:cleanup", {"kind": "blocker"}, []),
    ("kind:cleanup", {"kind": "cleanup"}, ["reversed_phrase"]),
    ("kind:blocker kind:cleanup", {"kind": "cleanup"}, ["reversed_phrase"]),
    ("never", {"kind": "blocker"}, ["phrase"]),
    ("status:fixed", {"status": "open"}, []),
    ("status:fixed", {"status": "fixed"}, ["fixed"]),
    ("repo:acme/tools", {"repository": "acme/loader"}, []),
    ("tag:silent-failure", {"repository": "acme/loader", "kind": "blocker"}, ["body_hit", "phrase"]),
    ("tolerance", {"status": "fixed"}, []),
    ("", {"kind": "cleanup"}, ["reversed_phrase"]),
]


def site_found(client, q: str, menus: dict) -> list[str]:
    return sorted(site_titles_with(client, {"q": q, **menus}))


def site_titles_with(client, params: dict) -> list[str]:
    response = client.get("/", params)
    assert response.status_code == 200
    html = response.content.decode()
    return [re.sub(r"<[^>]+>|^\s*\d+\s*", "", title).strip()
            for title in re.findall(r'<p class="result-title"><a [^>]*><span class="glance-number">\d+</span> (.*?)</a>',
                                    html)]


def api_found(client, q: str, parameters: dict) -> list[str]:
    response = client.get("/api/findings/", {"q": q, "page_size": 200, **parameters})
    assert response.status_code == 200, response.content
    return sorted(item["title"] for item in response.json()["results"])


@pytest.mark.parametrize(("q", "menus", "expected"), CASES)
def test_the_box_and_the_menus_must_both_hold_on_the_site_and_in_the_api(client, corpus, q, menus, expected):  # noqa: F811
    wanted = sorted(getattr(corpus, name).title for name in expected)
    assert site_found(client, q, menus) == wanted
    assert api_found(client, q, menus) == wanted


def test_a_typed_filter_the_menu_contradicts_finds_nothing_rather_than_everything(client, corpus):  # noqa: F811
    everything = site_titles_with(client, {"q": "kind:cleanup kind:blocker"})
    assert len(everything) == 6
    html = client.get("/", {"q": "kind:cleanup", "kind": "blocker"}).content.decode()
    assert site_titles_with(client, {"q": "kind:cleanup", "kind": "blocker"}) == []
    assert "kind:cleanup" in html
