"""The bundle page: paste or upload a bundle, see the real import's dry run, then confirm."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from access.models import AuditEntry
from findings.services.review_import import BundleInvalid, parse_bundle, review_import
from findings.models import Finding
from reviews.models import PullRequest, Repository
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PAGE = reverse("findings:bundle_import")
BUNDLE = """\
repository:
  slug: acme/rl
  clone_url: https://github.com/acme/rl.git
pull_request:
  number: 4108
  title: Nemotron multimodal SFT
commits:
  - sha: d044f40
    role: reviewed
findings:
  - number: 4
    kind: blocker
    title: Tolerance 0 never stops
    evidence:
      - kind: snippet
        path: src/loader.py
        start_line: 7
        end_line: 8
        text: "tolerance = 0"
"""


def importer() -> Client:
    client = Client()
    client.force_login(UserFactory(username="rae", groups=["Reviewer"]))
    return client


def test_the_dry_run_of_a_valid_bundle_says_what_it_would_create_and_writes_nothing_until_confirmed():
    client = importer()
    page = client.post(PAGE, {"text": BUNDLE})
    assert page.status_code == 200
    html = page.content.decode()
    assert "A dry run of acme/rl#4108" in html and "finding 4" in page.context["report"].created
    assert not Repository.objects.exists() and not Finding.objects.exists()
    assert not AuditEntry.objects.filter(action="review.import").exists()

    done = client.post(PAGE, {"text": BUNDLE, "confirm": "1"})
    assert done.status_code == 200 and "Imported acme/rl#4108" in done.content.decode()
    assert Finding.objects.get().title == "Tolerance 0 never stops"
    assert AuditEntry.objects.get(action="review.import").actor.username == "rae"

    again = client.post(PAGE, {"text": BUNDLE})
    assert again.context["report"].unchanged[-1] == "finding 4" and not again.context["report"].created


def test_a_dry_run_of_a_changed_bundle_says_what_it_would_change():
    client = importer()
    review_import(data=parse_bundle(BUNDLE))
    page = client.post(PAGE, {"text": BUNDLE.replace("Tolerance 0 never stops", "Tolerance 0 loops")})
    assert page.context["report"].updated == ["finding 4"]
    assert Finding.objects.get().title == "Tolerance 0 never stops"


def test_a_bundle_with_errors_names_each_field_with_the_commands_messages_and_writes_nothing():
    broken = BUNDLE.replace("kind: blocker", "kind: nit").replace("start_line: 7", "start_line: 9")
    with pytest.raises(BundleInvalid) as command:
        review_import(data=parse_bundle(broken))
    page = importer().post(PAGE, {"text": broken})
    assert page.status_code == 400
    assert page.context["errors"] == command.value.errors
    assert [name for name, _ in page.context["errors"]] == ["findings[0].kind", "findings[0].evidence[0].end_line"]
    html = page.content.decode()
    assert "Nothing was imported" in html and "findings[0].kind" in html
    assert not PullRequest.objects.exists()


def test_text_that_is_not_a_bundle_is_refused_with_the_parsers_message():
    page = importer().post(PAGE, {"text": "repository: [unclosed"})
    assert page.status_code == 400 and "Nothing was imported" in page.content.decode()
    assert not Repository.objects.exists()


def test_an_uploaded_json_file_is_imported_like_pasted_text():
    client = importer()
    upload = SimpleUploadedFile("review.json", json.dumps(parse_bundle(BUNDLE)).encode(), "application/json")
    page = client.post(PAGE, {"file": upload})
    assert page.status_code == 200 and page.context["report"].created


def test_a_large_bundle_is_sent_to_the_api_with_a_clear_message(settings):
    settings.RECHECK_IMPORT_INLINE_FINDINGS = 1
    data = parse_bundle(BUNDLE)
    data["findings"].append({**data["findings"][0], "number": 5})
    page = importer().post(PAGE, {"text": json.dumps(data)})
    assert page.status_code == 400 and "imports large bundles in the background" in page.content.decode()
    assert not Repository.objects.exists()


def test_only_those_allowed_to_import_reach_the_page_and_the_index_links_it_for_them():
    reader = Client()
    reader.force_login(UserFactory(username="rita", groups=["Reader"]))
    assert reader.get(PAGE).status_code == 403
    assert reader.post(PAGE, {"text": BUNDLE, "confirm": "1"}).status_code == 403
    assert not Repository.objects.exists()
    assert PAGE not in reader.get(reverse("findings:index")).content.decode()
    assert PAGE in importer().get(reverse("findings:index")).content.decode()
    assert Client().get(PAGE).status_code == 302


def test_the_page_enforces_csrf():
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="rae", groups=["Reviewer"]))
    assert client.post(PAGE, {"text": BUNDLE, "confirm": "1"}).status_code == 403
    assert not Repository.objects.exists()
