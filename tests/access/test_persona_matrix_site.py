"""Every URL of the site (walked from the URL patterns), for each persona of
tests/access/persona_world.py: what its role allows on A, and nothing of B, whose every URL
answers as a ghost's would; a reader's pages of A show no card, link or count of B."""
import json

import pytest

from access.models import ApiToken, Membership
from access.permissions import Action
from tests.access.persona_world import (  # noqa: F401 (the fixtures are used by name)
    A_SLUG,
    B_SLUG,
    PERSONAS,
    SHARED_TAG,
    SITE_ADMIN_PAGES,
    SITE_FORMS,
    SITE_GENERAL_FORMS,
    SITE_MIRROR_PAGES,
    SITE_PERSONAL_PAGES,
    SITE_WRITES,
    SITE_WRITE_DONE,
    TOKEN_PERSONAS,
    _persona,
    _site_url,
    _warm_caches,
    assert_like_a_ghost,
    assert_no_b,
    fresh_cache_fixture,
    held,
    queued_tasks_fixture,
    site_routes,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("persona_name", [name for name in PERSONAS if name not in TOKEN_PERSONAS])
def test_every_site_url_gives_each_persona_what_its_role_allows_and_nothing_of_b(persona_name, queued_tasks):
    persona, world = _persona(persona_name)
    _warm_caches(world, queued_tasks, api=False)
    token_key = ApiToken.objects.filter(user=persona.user).values_list("token_key", flat=True).first() if (
        persona.user.is_authenticated) else None
    extra = {"token_key": token_key or "0000000000000000"}
    reads_a = Action.READ in held(persona_name)
    for route in site_routes():
        url = _site_url(route, {**world.ids, **extra})
        response = persona.site.get(url)
        if response.status_code == 405:
            assert route in SITE_WRITES, f"{route} takes POST only: add it and the action it needs to SITE_WRITES"
            action = SITE_WRITES[route]
            response = persona.site.post(url)
            assert response.status_code < 500, (persona_name, url, response.status_code)
            if action is not None:
                if not reads_a and "{" in route:
                    assert response.status_code == 404, (persona_name, url, response.status_code)
                elif action in held(persona_name):
                    assert response.status_code in SITE_WRITE_DONE.get(route, {302}), (
                        persona_name, url, response.status_code)
                else:
                    assert response.status_code == 403, (persona_name, url, response.status_code)
        elif route in SITE_FORMS:
            # Anonymous visitors are sent to log in first, which tells nothing about the repository.
            expected = ({302, 404} if persona_name == "anonymous" else {404}) if not reads_a else {
                200 if SITE_FORMS[route] in held(persona_name) else 403}
            assert response.status_code in expected, (persona_name, url, response.status_code)
        elif route in SITE_PERSONAL_PAGES:
            signed_in = persona.user.is_authenticated or "{token}" in route
            assert response.status_code == (200 if signed_in else 302), (persona_name, url, response.status_code)
        elif route in SITE_ADMIN_PAGES:
            assert response.status_code == (302 if persona_name == "anonymous" else 403), (persona_name, url)
        elif route in SITE_GENERAL_FORMS:
            allowed = SITE_GENERAL_FORMS[route] in held(persona_name)
            assert response.status_code in ({200} if allowed else {302, 403}), (persona_name, url, response.status_code)
        elif route in SITE_MIRROR_PAGES:
            if reads_a:
                assert "fetched" in response.content.decode(), (persona_name, url, response.status_code)
            else:
                assert response.status_code == 404, (persona_name, url, response.status_code)
        elif route.startswith("accounts/"):
            # A user's own token pages: signing in is what they need (and a token of their own,
            # to be asked about revoking it).
            expected = 200 if persona.user.is_authenticated else 302
            if expected == 200 and "{token_key}" in route and not token_key:
                expected = 404
            assert response.status_code == expected, (url, response.status_code)
        elif "{" in route:
            assert response.status_code == (200 if reads_a else 404), (persona_name, url, response.status_code)
        else:
            assert response.status_code == 200, (persona_name, url, response.status_code)
        assert_no_b(response, url)
        text = response.content.decode(errors="replace")
        if not reads_a:
            assert not [word for word in world.a_words if word in text], (persona_name, url)
        if "{" not in route or route.startswith(("accounts/", "notifications/")):
            continue
        b_url, ghost_url = _site_url(route, world.b_ids), _site_url(route, world.ghost_ids)
        method = "post" if route in SITE_WRITES else "get"
        b_response = getattr(persona.site, method)(b_url)
        assert_no_b(b_response, b_url, b_url)
        assert_like_a_ghost(b_response, getattr(persona.site, method)(ghost_url), b_url, world, api=False)
    # The index lists A (and counts its findings) for A's readers only; searching finds nothing of B.
    for query in ("quokka", "Quokka cache", f"repo:{B_SLUG}", "tag:quokka-kind", "dtype", "tolerance"):
        response = persona.site.get("/", {"q": query})
        assert response.status_code == 200
        assert_no_b(response, "/", query)
    assert queued_tasks == [] or Action.VERIFY in held(persona_name)


def test_a_readers_pages_of_a_show_no_card_link_or_count_of_b():
    persona, world = _persona("reader")
    finding_url = _site_url("{owner}/{name}/pull/{number}/findings/{finding_number}/", world.ids)
    page = persona.site.get(finding_url).content.decode()
    # Linked, same file, shared tag and a similar title: B's finding is related four ways, and absent.
    assert "Related" in page or "related" in page
    assert "quokka" not in page.lower()
    tag_page = persona.site.get(f"/tags/{SHARED_TAG}/").content.decode()
    assert world.a_words[1] in tag_page and "quokka" not in tag_page.lower()
    tags = persona.api.get("/api/tags/").json()["results"]
    assert [(tag["slug"], tag["findings_count"]) for tag in tags] == [(SHARED_TAG, 1)]
    related = persona.api.get(f"/api/findings/{world.ids['findings']}/related/").json()
    assert "quokka" not in json.dumps(related).lower()
    detail = persona.api.get(f"/api/findings/{world.ids['findings']}/").json()
    assert "quokka" not in json.dumps(detail).lower()
    export = persona.api.get(f"/api/repos/{A_SLUG}/pulls/41/export").content.decode()
    assert "quokka" not in export.lower() and world.a_words[1] in export
    index = persona.site.get("/").content.decode()
    assert world.a_words[0] in index and "quokka" not in index.lower()


def test_a_maintainer_of_a_is_refused_settings_with_the_role_that_would_allow_it():
    persona, world = _persona("maintainer")
    response = persona.api.patch(f"/api/repos/{A_SLUG}/publishing", {"publish_checks": True}, format="json")
    assert response.status_code == 403
    assert response.json()["detail"] == (
        "maintainer-of-a may not change the settings of this server: that needs the Admin role; "
        "ask an admin of this server to grant it."
    )
    Membership.objects.filter(repository=world.a, user=persona.user).update(role="admin")
    response = persona.api.patch(f"/api/repos/{A_SLUG}/publishing", {"publish_checks": True}, format="json")
    assert response.status_code == 200 and response.json()["publish_checks"] is True
