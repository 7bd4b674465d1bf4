"""Publishing to GitHub is set per repository through the API, by those allowed to change it."""
import pytest
from rest_framework.test import APIClient

from reviews.models import Repository
from tests.factories import RepositoryFactory, UserFactory, make_api_token

pytestmark = pytest.mark.django_db

URL = "/api/repos/acme/loader/publishing"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {make_api_token(user)}")
    return client


@pytest.fixture
def repository():
    return RepositoryFactory(slug="acme/loader")


def test_a_maintainer_turns_check_runs_on_and_reads_it_back(repository):
    client = token_client(UserFactory(username="owner", permissions=["reviews.change_repository"]))

    response = client.patch(URL, {"publish_checks": True}, format="json")

    assert response.status_code == 200, response.json()
    assert (response.json()["publish_checks"], response.json()["publish_comment"]) == (True, False)
    assert Repository.objects.get(pk=repository.pk).publish_checks is True
    assert client.get("/api/repos/acme/loader/").json()["publish_checks"] is True


def test_a_token_without_the_permission_is_refused(repository):
    client = token_client(UserFactory(username="ci-bot", permissions=["findings.verify_pullrequest"]))

    response = client.patch(URL, {"publish_comment": True}, format="json")

    assert response.status_code == 403
    assert "that needs the Admin role" in response.json()["detail"]
    assert Repository.objects.get(pk=repository.pk).publish_comment is False


def test_anonymous_writes_are_refused(repository):
    assert APIClient().patch(URL, {"publish_checks": True}, format="json").status_code in (401, 403)
    assert Repository.objects.get(pk=repository.pk).publish_checks is False


def test_an_empty_change_says_what_to_send(repository):
    client = token_client(UserFactory(username="owner", permissions=["reviews.change_repository"]))

    response = client.patch(URL, {}, format="json")

    assert response.status_code == 400
    assert "publish_checks" in str(response.json())
