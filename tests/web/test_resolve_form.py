"""One resolve form (findings.forms.ResolveForm) for the site's decide page and the admin: the same
bad input gets the same errors from both, and changes nothing."""
import html

import pytest
from django.urls import reverse

from findings.forms import COMMIT_MAX_LENGTH, NOTE_MAX_LENGTH
from findings.models import Finding, FindingEvent
from tests.factories import FindingFactory

pytestmark = pytest.mark.django_db

BAD_INPUT = [
    pytest.param({"status": "fixed", "commit": "a" * 41, "note": ""}, ["commit"], id="a-commit-of-41-characters"),
    pytest.param({"status": "fixed", "commit": "b" * 64, "note": ""}, ["commit"], id="a-commit-of-64-characters"),
    pytest.param({"status": "dismissed", "commit": "", "note": "n" * (NOTE_MAX_LENGTH + 1)}, ["note"],
                 id="a-note-over-the-limit"),
    pytest.param({"status": "fixed", "commit": "c" * 50, "note": "n" * 6000}, ["commit", "note"], id="both"),
    pytest.param({"status": "closed", "commit": "", "note": ""}, ["status"], id="an-unknown-status"),
]


def post_site(client, finding, data):
    return client.post(finding.get_absolute_url() + "decide/", data)


def post_admin(client, finding, data):
    return client.post(reverse("admin:findings_finding_resolve", args=["fixed"]), {"ids": str(finding.pk), **data})


@pytest.mark.parametrize(("data", "fields"), BAD_INPUT)
def test_the_site_and_the_admin_refuse_the_same_bad_input_with_the_same_errors(client, staff_maintainer, data, fields):
    finding = FindingFactory()
    client.force_login(staff_maintainer)

    site = post_site(client, finding, data)
    admin = post_admin(client, finding, data)

    site_form, admin_form = site.context["decision"].form, admin.context["form"]
    assert type(site_form) is type(admin_form)
    assert sorted(site_form.errors) == sorted(admin_form.errors) == fields
    assert site_form.errors == admin_form.errors
    for errors in site_form.errors.values():
        for error in errors:
            assert html.escape(error) in site.content.decode()
            assert html.escape(error) in admin.content.decode()
    assert site.status_code == 400 and admin.status_code == 200
    assert Finding.objects.get(pk=finding.pk).status == Finding.Status.OPEN
    assert not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()


def test_the_limits_say_what_a_commit_and_a_note_may_be(client, staff_maintainer):
    finding = FindingFactory()
    client.force_login(staff_maintainer)
    errors = post_site(client, finding, {"status": "fixed", "commit": "a" * 41, "note": "n" * 5001}).context[
        "decision"].form.errors
    assert errors["commit"] == [f"A commit SHA has 7 to {COMMIT_MAX_LENGTH} hexadecimal digits; this has 41 characters."]
    assert errors["note"] == [f"A note is at most {NOTE_MAX_LENGTH} characters; this one has 5001."]


def test_the_site_s_commit_box_takes_as_many_characters_as_the_form(client, staff_maintainer):
    finding = FindingFactory()
    client.force_login(staff_maintainer)
    page = client.get(finding.get_absolute_url() + "decide/").content.decode()
    assert f'maxlength="{COMMIT_MAX_LENGTH}"' in page and 'maxlength="64"' not in page


def test_the_api_takes_a_note_as_long_as_the_form_does(staff_maintainer):
    from rest_framework.test import APIClient

    finding = FindingFactory()
    client = APIClient()
    client.force_authenticate(staff_maintainer)
    url = f"/api/findings/{finding.pk}/resolve"
    too_long = client.post(url, {"status": "dismissed", "note": "n" * (NOTE_MAX_LENGTH + 1)}, format="json")
    assert too_long.status_code == 400
    assert too_long.json()["errors"] == [{"field": "note", "message": f"A note is at most {NOTE_MAX_LENGTH} characters."}]
    assert Finding.objects.get(pk=finding.pk).status == Finding.Status.OPEN
    assert client.post(url, {"status": "dismissed", "note": "n" * NOTE_MAX_LENGTH}, format="json").status_code == 200
