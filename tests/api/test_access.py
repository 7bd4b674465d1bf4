"""Who may read and write, with the personas: an anonymous reader, a token without permission, a
token with permission, and a staff maintainer's browser session."""
import pytest
from rest_framework.test import APIClient

from findings.models import FindingEvent, VerificationRun
from tests.factories import UserFactory
from tests.api.conftest import token_client

pytestmark = pytest.mark.django_db

READS = [
    "/api/repos/",
    "/api/repos/acme/loader/",
    "/api/repos/acme/loader/pulls/",
    "/api/repos/acme/loader/pulls/4108/",
    "/api/repos/acme/loader/pulls/4108/gate",
    "/api/pulls/",
    "/api/findings/",
    "/api/evidence/",
    "/api/verifications/",
    "/api/runs/",
]


@pytest.fixture
def private_server(settings):
    settings.RECHECK_PUBLIC_READ = False


@pytest.mark.parametrize("url", READS)
def test_anyone_may_read_when_reads_are_public(anonymous_reader, review, url):
    assert anonymous_reader.get(url).status_code == 200


@pytest.mark.parametrize("url", READS)
def test_an_anonymous_reader_is_told_to_send_a_token_when_reads_are_private(
    anonymous_reader, review, private_server, url
):
    response = anonymous_reader.get(url)
    assert response.status_code == 401
    assert "Authorization: Token <key>" in response.json()["detail"]
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("persona", ["token_without_permission", "staff_session"])
def test_any_authenticated_user_may_read_a_private_server(request, review, private_server, persona):
    client = request.getfixturevalue(persona)
    assert client.get("/api/findings/").status_code == 200
    assert client.get(f"/api/findings/{review.findings[1].pk}/history/").status_code == 200


def test_a_wrong_token_is_refused_even_for_public_reads(review):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/findings/").status_code == 401


def writes(review):
    return {
        # Every pinned commit: a SHA must name a commit of a fetched repository
        # (tests/api/test_actions.py).
        "verify": ("/api/repos/acme/loader/pulls/4108/verify", {}),
        # Dismissing: who may write is the question here; marking fixed asks a fetched mirror
        # (tests/api/test_actions.py).
        "resolve": (f"/api/findings/{review.findings[1].pk}/resolve", {"status": "dismissed", "note": "Out of scope."}),
        "import": ("/api/reviews/import", {"repository": {}}),  # refused as invalid (400) once allowed in
    }


@pytest.mark.parametrize("action", ["verify", "resolve", "import"])
def test_an_anonymous_write_is_refused_with_how_to_authenticate(anonymous_reader, review, action):
    url, payload = writes(review)[action]
    response = anonymous_reader.post(url, payload, format="json")
    assert response.status_code == 401 and "Authorization: Token" in response.json()["detail"]
    assert not VerificationRun.objects.exists() and not FindingEvent.objects.exists()


@pytest.mark.parametrize(
    ("action", "permission"),
    [
        ("verify", "needs the Reviewer role"),
        ("resolve", "needs the Maintainer role"),
        ("import", "needs the Reviewer role"),
    ],
)
def test_a_token_without_the_permission_is_told_which_role_it_lacks(token_without_permission, review, action,
                                                                    permission):
    url, payload = writes(review)[action]
    response = token_without_permission.post(url, payload, format="json")
    assert response.status_code == 403
    assert permission in response.json()["detail"] and "ask an admin" in response.json()["detail"]
    assert not VerificationRun.objects.exists() and not FindingEvent.objects.exists()


@pytest.mark.parametrize(("action", "expected"), [("verify", 202), ("resolve", 200), ("import", 400)])
def test_a_token_with_the_permission_may_write(token_with_permission, review, action, expected):
    url, payload = writes(review)[action]
    assert token_with_permission.post(url, payload, format="json").status_code == expected


def test_each_write_needs_its_own_permission(review):
    verifier = token_client(UserFactory(username="verifier", permissions=["findings.verify_pullrequest"]))
    verify_url, verify_payload = writes(review)["verify"]
    resolve_url, resolve_payload = writes(review)["resolve"]
    assert verifier.post(verify_url, verify_payload, format="json").status_code == 202
    assert verifier.post(resolve_url, resolve_payload, format="json").status_code == 403


def test_a_staff_session_write_without_the_csrf_token_is_refused(staff_session, review):
    url, payload = writes(review)["resolve"]
    response = staff_session.post(url, payload, format="json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]
    assert not FindingEvent.objects.exists()


def test_a_staff_session_write_with_the_csrf_token_goes_through(staff_session, review):
    staff_session.get("/api/findings/", HTTP_ACCEPT="text/html")  # the browsable API sets the cookie
    token = staff_session.cookies["csrftoken"].value
    url, payload = writes(review)["resolve"]
    response = staff_session.post(url, payload, format="json", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200, response.json()
    assert FindingEvent.objects.get().actor.username == "maintainer"


def test_a_token_write_needs_no_csrf_token(review):
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(**token_with_permission_headers(review))
    url, payload = writes(review)["verify"]
    assert client.post(url, payload, format="json").status_code == 202


def token_with_permission_headers(review) -> dict:
    from tests.factories import make_api_token

    user = UserFactory(username="csrf-free", permissions=["findings.verify_pullrequest"])
    return {"HTTP_AUTHORIZATION": f"Token {make_api_token(user)}"}


def test_writes_are_throttled_per_user_and_reads_are_not(token_with_permission, review, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"writes": "2/min"}}
    url, payload = writes(review)["verify"]
    statuses = [token_with_permission.post(url, payload, format="json").status_code for _ in range(3)]
    assert statuses == [202, 202, 429]
    throttled = token_with_permission.post(url, payload, format="json")
    assert int(throttled["Retry-After"]) > 0 and "throttled" in throttled.json()["detail"]
    assert token_with_permission.get("/api/findings/").status_code == 200
    other = token_client(UserFactory(username="other-bot", permissions=["findings.verify_pullrequest"]))
    assert other.post(url, payload, format="json").status_code == 202


@pytest.mark.parametrize(
    "url",
    READS + ["/api/", "/api/reviews/import", "/api/repos/acme/loader/pulls/4108/verify", "/api/hooks/github"],
)
def test_the_browsable_api_renders_for_a_staff_session(staff_session, review, url):
    response = staff_session.get(url, HTTP_ACCEPT="text/html")
    assert response.status_code in (200, 403, 405)  # 403: this staff user may not import or verify
    assert response["Content-Type"].startswith("text/html")
