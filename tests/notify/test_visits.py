"""Since you last looked, read as a page reads it: per person, from `since.json`, never in the page
kept for everyone."""
import re

import pytest

from core.vocabulary import events as ev
from tests import personas
from tests.timeline_world import TimelineWorld

pytestmark = pytest.mark.django_db
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    return TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada"))


def test_each_person_is_shown_what_changed_since_their_own_last_visit(world):
    world.imported().first_push()
    ada, bob = personas.site_client(world.actor), personas.site_client(personas.user_with_role("reader", username="bob"))
    url = "/acme/loader/pull/7/since.json"
    assert ada.get(url).json()["count"] == 0  # a first visit marks nothing
    world.second_push()
    assert bob.get(url).json()["count"] == 0  # bob's first visit is now
    answer = ada.get(url).json()
    assert answer["count"] == 2 and set(answer["findings"]) == {"1", "2"}
    assert "Still present → Likely fixed" in answer["findings"]["1"][0]
    assert ada.get(url).json()["count"] == 2  # still marked on a reload, until marked seen
    timeline = ada.get(answer["timeline"]).content.decode()
    assert timeline.count('<li class="event ') == 2 and "event-unseen" in timeline
    assert ada.post(answer["seen_url"], HTTP_ACCEPT="application/json").status_code == 200
    assert ada.get(url).json()["count"] == 0
    assert personas.site_client().get(url).json() == {"signed_in": False, "count": 0, "findings": {}}


def test_the_kept_page_is_the_same_for_everyone_the_marks_come_on_their_own(world):
    world.imported().first_push()
    ada, bob = personas.site_client(world.actor), personas.site_client(personas.user_with_role("reader", username="bob"))
    ada.get("/acme/loader/pull/7/since.json")
    world.second_push()
    pages = [CSRF.sub("", client.get("/acme/loader/pull/7/").content.decode()) for client in (ada, bob)]
    for page in pages:
        assert "changed-since" not in page.replace('id="since-last-visit" class="since-last-visit"', "")
        assert 'id="since-last-visit"' in page and "since-last-visit.js" in page
    assert ada.get("/acme/loader/pull/7/since.json").json()["count"] == 2
    assert {ev.FINDING_REGRESSED, ev.FINDING_VERDICT_CHANGED} <= set(world.events().values_list("kind", flat=True))
