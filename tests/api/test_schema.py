"""The OpenAPI schema: valid without warnings, documented offline, and true to the API. Schemathesis
generates requests for every operation from the schema and checks that no answer is a 5xx and
that every answer (status code, content type and body) is one the schema describes."""
import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from django.contrib.staticfiles import finders
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.factories import UserFactory
from tests.api.conftest import API_PERMISSIONS


def test_the_schema_validates_without_warnings(tmp_path, db):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    schema = (tmp_path / "schema.yaml").read_text()
    for operation in ("pull_request_gate", "pull_request_verify", "finding_resolve", "review_import", "github_webhook"):
        assert f"operationId: {operation}" in schema


def test_the_schema_is_served_as_json_too(anonymous_reader, db):
    response = anonymous_reader.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/repos/{owner}/{name}/pulls/{number}/gate" in paths
    assert {"400", "401", "404"} <= set(paths["/api/findings/"]["get"]["responses"])
    # A list's rows say why an error verdict is one, as the detail does: one component for both.
    components = response.json()["components"]["schemas"]
    assert "verdict_reason" in components["Finding"]["properties"]
    assert "verdict_reason" in components["Finding"]["required"]
    listed = paths["/api/findings/"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    page = components[listed["$ref"].rsplit("/", 1)[1]]
    assert page["properties"]["results"]["items"]["$ref"] == "#/components/schemas/Finding"


@pytest.mark.parametrize(("url", "asset"), [
    ("/api/docs/", "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"),
    ("/api/redoc/", "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"),
])
def test_the_docs_load_their_assets_from_this_server_not_a_cdn(anonymous_reader, db, url, asset):
    page = anonymous_reader.get(url).content.decode()
    assert f"/static/{asset}" in page
    assert "cdn.jsdelivr.net" not in page and "unpkg.com" not in page
    assert finders.find(asset), f"{asset} is not among the static files"


@pytest.fixture
def review_for_schemathesis(transactional_db, request):
    """The same review as the other API tests, committed, so the WSGI app sees it."""
    from findings.models import VerificationRun

    review = request.getfixturevalue("review")
    VerificationRun.objects.create(pull_request=review.pull_request, commit=review.head, done=1, total=5)
    return review


@pytest.fixture
def api_token(transactional_db):
    from tests.factories import make_api_token

    user = UserFactory(username="schemathesis", permissions=API_PERMISSIONS)
    return make_api_token(user)


@pytest.fixture
def wsgi_app(settings):
    # Schemathesis's WSGI client sends Host: localhost.
    settings.ALLOWED_HOSTS = ["testserver", "localhost"]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"writes": "100000/min"}}
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = "a secret schemathesis does not know"
    from recheck.wsgi import application

    return application


# The schema as the app generates it (no request is needed to build it). The coverage phase is
# left out to keep the run to seconds: positive and negative cases still come from fuzzing.
schema = schemathesis.openapi.from_dict(
    SchemaGenerator().get_schema(request=None, public=True),
    config=SchemathesisConfig.from_dict(
        {"phases": {"coverage": {"enabled": False}}, "generation": {"mode": "all"}}
    ),
)


@schema.parametrize()
@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@pytest.mark.django_db(transaction=True)
def test_every_operation_answers_as_its_schema_says(case, api_token, review_for_schemathesis, wsgi_app):
    review = review_for_schemathesis
    # Point path parameters at objects that exist, so reads return real bodies to check.
    real = {
        "owner": "acme",
        "name": "loader",
        "number": review.pull_request.number,
        "id": review.findings[1].pk if "/findings/" in case.path else (
            review.pull_request.pk if "/pulls/" in case.path else _first_id(case.path)
        ),
    }
    if case.path_parameters:
        case.path_parameters = {key: real.get(key, value) for key, value in case.path_parameters.items()}
    case.call_and_validate(
        app=wsgi_app,
        headers={"Authorization": f"Token {api_token}"},
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )


def _first_id(path: str):
    from findings.models import Evidence, Verification, VerificationRun

    for prefix, model in (("/api/evidence/", Evidence), ("/api/verifications/", Verification),
                          ("/api/runs/", VerificationRun)):
        if path.startswith(prefix):
            return model.objects.values_list("pk", flat=True).first() or 1
    return 1
