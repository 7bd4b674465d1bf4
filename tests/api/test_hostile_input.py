"""Hostile bodies (alias bombs, deep nesting, endless digits) are refused as JSON 400s, on every
endpoint that reads a body, without being expanded: what is bounded is the memory a refusal takes
(an alias bomb expands to 10^9 strings), not its time, which depends on the machine's load."""
import json
import time
import tracemalloc

import pytest
import yaml

from core import documents as limits
from findings.exchange.bundle import bundle_dump
from findings.services.review_import import parse_bundle
from core.documents import DocumentError, load_json, load_yaml
from findings.models import WebhookDelivery
from reviews.models import PullRequest
from tests.api.test_actions import bundle
from tests.api.test_webhooks import deliver, pull_request_event

pytestmark = pytest.mark.django_db

# The classic "billion laughs": 561 bytes that expand to 10^9 strings.
ALIAS_BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
repository: *i
"""
DEEP_JSON = "[" * 2000 + "]" * 2000
DEEP_OBJECT = '{"a":' * 2000 + "1" + "}" * 2000
LONG_NUMBER = "9" * 5000


# Far below what expanding any of these bodies takes, far above what reading and refusing one does.
REFUSAL_PEAK_BYTES = 32 * 2**20
# Not a measure of speed: a guard so that a parser that does expand fails the test rather than hang.
HANG_SECONDS = 30


def answered_quickly(send):
    tracemalloc.start()
    started = time.monotonic()
    try:
        response = send()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < HANG_SECONDS
    assert peak < REFUSAL_PEAK_BYTES, f"the refusal took {peak / 2**20:.0f} MiB: the body was expanded"
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    return response.json()


def test_a_yaml_alias_bomb_is_refused_without_being_expanded(token_with_permission):
    body = answered_quickly(
        lambda: token_with_permission.post("/api/reviews/import", ALIAS_BOMB, content_type="application/yaml")
    )
    assert "aliases" in body["detail"]
    assert not PullRequest.objects.exists()


@pytest.mark.parametrize("content_type", ["application/json", "application/yaml"])
@pytest.mark.parametrize("text", [DEEP_JSON, DEEP_OBJECT, '{"findings": ' + DEEP_JSON + "}"])
def test_deep_nesting_is_refused_on_import_without_being_expanded(token_with_permission, content_type, text):
    body = answered_quickly(lambda: token_with_permission.post("/api/reviews/import", text, content_type=content_type))
    assert "deeper than" in body["detail"] or "Not valid" in body["detail"]


def test_a_number_of_thousands_of_digits_is_refused_on_import(token_with_permission):
    text = json.dumps(bundle()).replace('"number": 12', f'"number": {LONG_NUMBER}')
    body = answered_quickly(lambda: token_with_permission.post("/api/reviews/import", text,
                                                               content_type="application/json"))
    assert "digits" in body["detail"]
    yaml_text = yaml.safe_dump(bundle()).replace("number: 12", f"number: {LONG_NUMBER}")
    body = answered_quickly(lambda: token_with_permission.post("/api/reviews/import", yaml_text,
                                                               content_type="application/yaml"))
    assert "digits" in body["detail"]


@pytest.mark.parametrize("text", [DEEP_JSON, DEEP_OBJECT, '{"commit": ' + LONG_NUMBER + "}"])
def test_verify_and_resolve_refuse_hostile_json(token_with_permission, review, text):
    verify = f"/api/repos/acme/loader/pulls/{review.pull_request.number}/verify"
    resolve = f"/api/findings/{review.findings[1].pk}/resolve"
    for url in (verify, resolve):
        body = answered_quickly(lambda url=url: token_with_permission.post(url, text, content_type="application/json"))
        assert "detail" in body


@pytest.mark.parametrize(
    "text", [DEEP_JSON, DEEP_OBJECT, json.dumps(pull_request_event()).replace("4108", LONG_NUMBER)]
)
def test_the_signed_webhook_refuses_hostile_json(anonymous_reader, review, settings, text):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = "webhook-secret-for-tests"
    body = answered_quickly(lambda: deliver(anonymous_reader, None, body=text.encode()))
    assert "not a GitHub event payload" in body["detail"] or "pull_request payload" in body["detail"]
    assert not WebhookDelivery.objects.exists()


def test_a_webhook_pull_request_number_beyond_any_column_is_a_400(anonymous_reader, review, settings):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = "webhook-secret-for-tests"
    response = deliver(anonymous_reader, pull_request_event(number=10**15))
    assert response.status_code == 400 and "pull_request.number" in response.json()["detail"]


def test_a_body_beyond_the_upload_limit_is_a_json_400(anonymous_reader, settings):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = "webhook-secret-for-tests"
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = deliver(anonymous_reader, {"padding": "x" * 5000})
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")


def test_aliases_are_refused_even_small_ones():
    with pytest.raises(DocumentError, match="aliases"):
        load_yaml("a: &x 1\nb: *x\n")


def test_documents_with_more_values_than_the_limit_are_refused(monkeypatch):
    monkeypatch.setattr(limits, "MAX_NODES", 10)
    assert load_json(json.dumps(list(range(9)))) == list(range(9))
    with pytest.raises(DocumentError, match="more than 10 values"):
        load_json(json.dumps(list(range(10))))
    with pytest.raises(DocumentError, match="more than 10 values"):
        load_yaml(yaml.safe_dump(list(range(10))))


def test_nan_and_infinity_are_not_numbers():
    with pytest.raises(DocumentError, match="NaN"):
        load_json('{"a": NaN}')


def test_an_exported_bundle_with_repeated_values_reads_back_without_aliases():
    shared = {"kind": "note", "text": "Same."}
    data = {"repository": {"slug": "a/b"}, "findings": [{"evidence": [shared]}, {"evidence": [shared]}]}
    text = bundle_dump(data)
    assert "&" not in text and "*" not in text
    assert parse_bundle(text) == data


def test_a_captured_body_replayed_under_new_delivery_ids_queues_nothing(
    anonymous_reader, review, settings, queued_tasks, django_capture_on_commit_callbacks
):
    from findings.models import VerificationRun
    from forge.github.webhooks import github_signature

    settings.RECHECK_GITHUB_WEBHOOK_SECRET = "webhook-secret-for-tests"
    captured = json.dumps(pull_request_event()).encode()
    signature = github_signature(secret="webhook-secret-for-tests", body=captured)
    with django_capture_on_commit_callbacks(execute=True):
        first = deliver(anonymous_reader, None, body=captured, signature=signature, delivery="original")
    assert first.status_code == 202 and len(queued_tasks) == 1
    for replay in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            again = deliver(anonymous_reader, None, body=captured, signature=signature, delivery=f"replay-{replay}")
        assert again.status_code == 200 and again.json()["run"] is None
        VerificationRun.objects.update(status="done")  # verified in between: still nothing to do
    assert len(queued_tasks) == 1 and VerificationRun.objects.count() == 1
