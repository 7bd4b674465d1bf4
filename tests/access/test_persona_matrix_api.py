"""Every operation of the API (read from its OpenAPI schema), for each persona of
tests/access/persona_world.py: what its role allows on A, and nothing of B, whose every URL
answers as a ghost's would."""
import json

import pytest

from access.permissions import Action
from findings.models import Finding, Tag, TagDescription, VerificationRun
from tests.access.persona_world import (  # noqa: F401 (the fixtures are used by name)
    A_SLUG,
    B_SLUG,
    GHOST_SLUG,
    PERSONAS,
    _body,
    _call,
    _fill,
    _persona,
    _warm_caches,
    api_operations,
    assert_like_a_ghost,
    assert_no_b,
    expected_api,
    fresh_cache_fixture,
    held,
    queued_tasks_fixture,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("persona_name", PERSONAS)
def test_every_api_operation_gives_each_persona_what_its_role_allows_and_nothing_of_b(persona_name, queued_tasks):
    persona, world = _persona(persona_name)
    _warm_caches(world, queued_tasks, api=True)
    b_status_before = dict(Finding.objects.filter(pull_request__repository=world.b).values_list("pk", "status"))
    checked = 0
    for method, path in api_operations():
        if path.startswith(("/api/schema/", "/api/docs/", "/api/redoc/", "/api/hooks/")):
            continue
        # A's first, then B's, then the ghost's: B must answer exactly as the ghost does.
        url = _fill(path, world.ids)
        body = _body(method, path, A_SLUG, world.ids)
        response = _call(persona.api, method, url, body)
        expected = expected_api(persona_name, method, path, url)
        assert response.status_code in expected, (persona_name, method, url, response.status_code,
                                                   expected, response.content[:300])
        assert_no_b(response, url)
        if response.status_code == 200 and method == "get" and Action.READ not in held(persona_name):
            text = response.content.decode()
            assert not [word for word in world.a_words if word in text], (persona_name, url)
        b_url = _fill(path, world.b_ids)
        ghost_url = _fill(path, world.ghost_ids)
        if b_url == url and not path.endswith("/reviews/import"):
            continue  # no repository in the URL: the lists were checked above
        b_body = _body(method, path, B_SLUG, world.b_ids)
        b_response = _call(persona.api, method, b_url, b_body)
        ghost_response = _call(persona.api, method, ghost_url, _body(method, path, GHOST_SLUG, world.ghost_ids))
        asked = b_url + json.dumps(b_body)
        assert_no_b(b_response, b_url, asked)
        if path.endswith("/description") and ghost_response.status_code == 200:
            # Describing a slug nobody uses makes the tag; B's tag is not described by them.
            assert b_response.status_code in (401, 403, 404), (persona_name, b_url, b_response.status_code)
            Tag.objects.filter(slug="ghost-kind").delete()
            continue
        assert_like_a_ghost(b_response, ghost_response, b_url, world, api=True)
        checked += 1
    assert checked >= 15
    # Nothing of B changed: no status, no run, no setting, no import.
    assert dict(Finding.objects.filter(pull_request__repository=world.b).values_list("pk", "status")) == (
        b_status_before
    )
    assert VerificationRun.objects.filter(pull_request__repository=world.b).count() == 1
    world.b.refresh_from_db()
    assert not world.b.publish_checks
    assert list(TagDescription.objects.filter(repository=world.b).values_list("description", flat=True)) == ["Quokka"]
