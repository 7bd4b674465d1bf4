"""The timeline read everywhere: the API (cursor pages, kinds, since a generation, in the OpenAPI
document), the site's page and the Atom feeds; a private repository's events reach no outsider."""
import xml.etree.ElementTree as ET

import pytest

from access.models import Membership
from core.vocabulary import events as ev
from reviews.models import Repository
from tests import personas
from tests.factories import make_api_token
from tests.timeline_world import TimelineWorld

pytestmark = pytest.mark.django_db
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    return TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada"))


def pushed(world):
    world.imported().first_push()
    before = world.events().count()
    world.second_push()
    return before


def test_the_api_gives_the_pull_requests_events_in_cursor_pages(world):
    before = pushed(world)
    api = personas.api_client(personas.user_with_role("reader", username="rita"))
    url = "/api/repos/acme/loader/pulls/7/events/"
    first = api.get(url, {"page_size": before}).json()
    assert len(first["results"]) == before and first["next"]
    rest = api.get(first["next"]).json()
    assert [(row["kind"], row["finding_number"], row["cause"]) for row in rest["results"]] == [
        (ev.FINDING_VERDICT_CHANGED, 1, "recheck"), (ev.FINDING_REGRESSED, 2, "recheck"),
    ]
    assert rest["results"][0]["sha"] == world.head.sha and rest["results"][0]["repository"] == "acme/loader"
    status = api.get(url, {"kind": ev.FINDING_STATUS_CHANGED}).json()["results"]
    assert [(row["actor"], row["payload"]["note"]) for row in status] == [("ada", "Config is gone.")]
    generation = rest["results"][0]["generation"]
    since = api.get(url, {"since_generation": generation - 1}).json()["results"]
    assert {row["kind"] for row in since} == {ev.FINDING_VERDICT_CHANGED, ev.FINDING_REGRESSED}
    assert api.get(url, {"kind": "nonsense"}).status_code == 400
    repository = api.get("/api/repos/acme/loader/events/", {"page_size": 200}).json()["results"]
    assert [row["id"] for row in repository] == [row["id"] for row in api.get(url, {"page_size": 200}).json()["results"]]


def test_the_openapi_document_describes_the_events_and_their_payload(world):
    schema = personas.api_client(personas.superuser()).get("/api/schema/", {"format": "json"}).json()
    assert "/api/repos/{owner}/{name}/pulls/{number}/events/" in schema["paths"]
    assert "/api/repos/{owner}/{name}/events/" in schema["paths"]
    payload = schema["components"]["schemas"]["EventPayload"]["properties"]
    assert {"finding", "from", "to", "note", "reason", "run"} <= set(payload)
    kind = schema["components"]["schemas"]["ReviewEvent"]["properties"]["kind"]
    enum = kind.get("enum") or schema["components"]["schemas"][kind["$ref"].rsplit("/", 1)[1]]["enum"]
    assert set(enum) == set(ev.EVENT_KINDS)


def test_the_site_shows_the_timeline_and_the_feeds_say_the_same(world):
    pushed(world)
    page = personas.site_client().get("/acme/loader/pull/7/timeline/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Finding 1: Still present → Likely fixed" in html
    assert "Finding 2 was marked fixed, and its evidence holds again" in html
    assert "Fixed by ada" in html.replace("Open → Fixed by ada", "Fixed by ada")
    feed = personas.site_client().get("/acme/loader/pull/7/timeline/feed.atom")
    assert feed["Content-Type"].startswith("application/atom+xml")
    entries = ET.fromstring(feed.content).findall(f"{ATOM}entry")
    assert len(entries) == world.events().count()
    titles = [entry.find(f"{ATOM}title").text for entry in entries]
    assert titles[0].startswith("Possibly regressed: Finding 2") and titles[1].startswith("Verdict changed: Finding 1")
    repo_feed = personas.site_client().get("/acme/loader/timeline/feed.atom")
    assert len(ET.fromstring(repo_feed.content).findall(f"{ATOM}entry")) == len(entries)
    assert personas.site_client().get("/acme/loader/timeline/").status_code == 200


def test_a_private_repositorys_events_reach_no_outsider(world, settings):
    pushed(world)
    repository = Repository.objects.get(slug="acme/loader")
    repository.visibility = Repository.Visibility.PRIVATE
    repository.save()
    outsider = personas.user_with_role("no_role", username="olga")
    member = personas.member_of(repository, personas.user_with_role("no_role", username="mia"), Membership.Role.READER)
    urls = ["/acme/loader/pull/7/timeline/", "/acme/loader/pull/7/timeline/feed.atom", "/acme/loader/timeline/",
            "/acme/loader/timeline/feed.atom"]
    for url in urls:
        assert personas.site_client().get(url).status_code in (302, 404), url
        assert personas.site_client(outsider).get(url).status_code == 404, url
        assert personas.site_client(member).get(url).status_code == 200, url
    apis = {"outsider": personas.api_client(outsider, name="outsider's"), "member": personas.api_client(member)}
    for url in ("/api/repos/acme/loader/pulls/7/events/", "/api/repos/acme/loader/events/"):
        assert apis["outsider"].get(url).status_code == 404
        assert apis["member"].get(url).status_code == 200
    # A feed reader with a token: the member's reaches it, the outsider's and a forged one do not.
    secret = make_api_token(member, scopes=("read",), name="feed reader")
    others = make_api_token(outsider, scopes=("read",), name="feed reader")
    client = personas.site_client()
    assert client.get("/acme/loader/pull/7/timeline/feed.atom", {"token": secret}).status_code == 200
    assert client.get("/acme/loader/timeline/feed.atom", HTTP_AUTHORIZATION=f"Token {secret}").status_code == 200
    assert client.get("/acme/loader/pull/7/timeline/feed.atom", {"token": others}).status_code == 404
    assert client.get("/acme/loader/pull/7/timeline/feed.atom", {"token": secret[:-2] + "xx"}).status_code == 404
    # The member loses the role: the token reaches nothing more.
    Membership.objects.filter(user=member).delete()
    assert client.get("/acme/loader/pull/7/timeline/feed.atom", {"token": secret}).status_code == 404


def test_the_api_reads_since_the_last_visit_and_a_page_of_events_in_a_fixed_number_of_queries(
        world, django_assert_max_num_queries):
    world.imported().first_push()
    ada = personas.api_client(world.actor)
    url = "/api/repos/acme/loader/pulls/7/events/"
    assert ada.get(url, {"since_generation": "last-visit"}).json()["results"] == []  # a first visit: nothing new
    world.second_push()
    since = ada.get(url, {"since_generation": "last-visit"}).json()["results"]
    assert [row["kind"] for row in since] == [ev.FINDING_VERDICT_CHANGED, ev.FINDING_REGRESSED]
    with django_assert_max_num_queries(12):
        assert len(ada.get(url, {"page_size": 200}).json()["results"]) == world.events().count()
