"""Every GET operation of the API answers as its OpenAPI schema says, on data like the demo's: the
#4108 review as shipped (its repository never fetched, so its commits are abbreviated SHAs with no
date yet) and the sample repository's review, fetched and verified at each pinned commit.
Schemathesis draws each operation's requests (valid and invalid query strings, path parameters
pointing at real objects or at none) and checks the status code, the content type and the body
against the schema, as a staff token and anonymously. Bounded: a few examples per operation, a
few seconds in all."""
import pytest
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation import GenerationMode

from tests.api.test_schema import schema as api_schema
from tests.factories import UserFactory, make_api_token

pytestmark = pytest.mark.django_db

GET_OPERATIONS = [result.ok() for result in api_schema.include(method="GET").get_all_operations()]
EXAMPLES = 8
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def wsgi_app(settings):
    settings.ALLOWED_HOSTS = ["testserver", "localhost"]
    from recheck.wsgi import application

    # The app is called in this thread, inside the test's transaction: as Django's test client
    # does, keep the start and end of each request from closing the connection under it.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield application
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def demo_like(settings, tmp_path):
    """The demo's two reviews, the sample's verified at each pin, with a run and an import job."""
    from cli.demo import demo_load
    from findings.models import Evidence, Finding, ImportJob, Verification, VerificationRun
    from findings.services.verification.run import pull_request_verify

    settings.RECHECK_MIRROR_ROOT = tmp_path / "mirrors"
    load = demo_load(sample_path=tmp_path / "sample.git")
    for pin in load.sample.pins.select_related("commit"):
        pull_request_verify(pull_request=load.sample, commit=pin.commit)
    user = UserFactory(username="schemathesis", is_staff=True, is_superuser=True)
    # A run of the whole PR, queued (no commit of its own), and a run at a commit, done.
    runs = {load.review.number: VerificationRun.objects.create(pull_request=load.review, done=0, total=9),
            load.sample.number: VerificationRun.objects.create(pull_request=load.sample, status="done", done=3,
                                                               total=3, commit=load.sample.pins.first().commit)}
    job = ImportJob.objects.create(data={"repository": {"slug": load.review.repository.slug}}, findings=1,
                                   requested_by=user)
    samples = {}
    for pull_request in (load.review, load.sample):
        owner, name = pull_request.repository.slug.split("/")
        finding = Finding.objects.filter(pull_request=pull_request).order_by("number").first()
        verification = Verification.objects.filter(finding__pull_request=pull_request).first()
        samples[pull_request.number] = {
            "owner": owner, "name": name, "number": pull_request.number, "pulls": pull_request.pk,
            "findings": finding.pk, "evidence": Evidence.objects.filter(finding=finding).first().pk,
            "verifications": verification.pk if verification else 1, "runs": runs[pull_request.number].pk, "imports": job.pk,
            "tags": finding.tags.values_list("slug", flat=True).first() or "silent-failure",
            "path": finding.path or "README.md",
        }
    assert load.review.pins.filter(commit__committed_at__isnull=True).exists()
    return samples, make_api_token(user)


def real_parameters(path: str, parameters: dict, sample: dict) -> dict:
    collection = path.removeprefix("/api/").split("/", 1)[0]
    real = {"id": sample.get(collection, 1), "slug": sample["tags"]}
    return {key: sample.get(key, real.get(key, value)) for key, value in parameters.items()}


@pytest.mark.parametrize("who", ["a staff token", "anonymous"])
def test_every_read_answers_as_the_schema_says_on_demo_data(demo_like, wsgi_app, who):
    samples, token = demo_like
    headers = {"Authorization": f"Token {token}"} if who == "a staff token" else {}
    sample_pr = next(number for number in samples if number != 4108)
    for operation in GET_OPERATIONS:
        cases = st.one_of(operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
                          operation.as_strategy(generation_mode=GenerationMode.NEGATIVE))

        # A few examples of each operation, its path parameters pointed at the #4108 review's
        # objects, at the sample's, or left as drawn (mostly nothing there).
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=cases, target=st.sampled_from([4108, sample_pr, None]))
        def answers_as_the_schema_says(case, target):
            if case.path_parameters and target is not None:
                case.path_parameters = real_parameters(case.operation.path, case.path_parameters, samples[target])
            case.call_and_validate(app=wsgi_app, headers=headers, checks=CHECKS)

        answers_as_the_schema_says()


def test_a_pin_not_fetched_yet_has_no_date_and_the_schema_allows_it(demo_like, client):
    from rest_framework.test import APIClient

    samples, token = demo_like
    response = APIClient().get(f"/api/pulls/{samples[4108]['pulls']}/", HTTP_AUTHORIZATION=f"Token {token}")
    pins = response.json()["pins"]
    assert pins and all(pin["committed_at"] is None for pin in pins)
    schema = api_schema.raw_schema["components"]["schemas"]
    pinned = next(name for name, body in schema.items() if "committed_at" in body.get("properties", {})
                  and "has_verifications" in body["properties"])
    assert schema[pinned]["properties"]["committed_at"].get("nullable") is True
