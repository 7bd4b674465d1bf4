"""The audit log records each kind of write exactly once, through whichever interface it came,
and each refused write once, as a refusal; nobody can edit it."""
from io import StringIO

import pytest
from django.core.management import call_command
from django.forms import MultiWidget
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import ApiToken, AuditEntry
from access.tokens import api_token_create, api_token_revoke
from findings.models import Evidence, Finding
from tests.factories import EvidenceFactory, FindingFactory, PinnedCommitFactory, UserFactory, make_api_token
from tests.api.conftest import API_PERMISSIONS
from tests.api.test_actions import bundle

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    """Queued verifications are recorded, not run: what is audited is the request."""
    from types import SimpleNamespace

    from findings import tasks

    ids = []
    monkeypatch.setattr(tasks.run_verification, "delay", lambda run_id: ids.append(run_id) or SimpleNamespace(id="t"))
    return ids


def entries(**filters) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(**filters))


def only(**filters) -> AuditEntry:
    found = entries(**filters)
    assert len(found) == 1, [str(entry) for entry in AuditEntry.objects.all()]
    assert AuditEntry.objects.count() == 1, [str(entry) for entry in AuditEntry.objects.all()]
    return found[0]


@pytest.fixture
def bot():
    return UserFactory(username="ci-bot", permissions=API_PERMISSIONS)


def api(user, scopes=("read", "verify", "import", "resolve"), name="CI") -> APIClient:
    client = APIClient(REMOTE_ADDR="198.51.100.4")
    client.credentials(HTTP_AUTHORIZATION=f"Token {make_api_token(user, scopes=scopes, name=name)}")
    return client


@pytest.fixture
def finding():
    finding = FindingFactory(title="Tolerance lowered")
    EvidenceFactory(finding=finding, commit=PinnedCommitFactory(pull_request=finding.pull_request).commit)
    return finding


# --- Decisions ---------------------------------------------------------------------------------------


def test_a_decision_through_the_api_is_recorded_once_with_who_which_token_where_and_what(bot, finding):
    response = api(bot).post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "Out of scope."},
                             format="json")
    assert response.status_code == 200
    entry = only(action="finding.resolve")
    assert (entry.outcome, entry.actor, entry.source, entry.ip) == ("done", bot, "api", "198.51.100.4")
    assert entry.token == ApiToken.objects.get() and "'CI'" in entry.token_label
    assert entry.changes["status"] == ["open", "dismissed"] and entry.changes["note"] == [None, "Out of scope."]
    assert entry.repository == finding.pull_request.repository
    assert entry.target == f"{finding.pull_request.reference} finding {finding.number}"


def test_a_decision_the_service_refuses_is_recorded_once_as_a_refusal(bot, finding):
    response = api(bot).post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": ""}, format="json")
    assert response.status_code == 400
    entry = only(action="finding.resolve")
    assert entry.outcome == "refused" and "needs a reason" in entry.message and entry.actor == bot


@pytest.mark.parametrize("scopes, permissions, message", [
    (("read",), API_PERMISSIONS, "needs 'resolve'"),
    (("read", "resolve"), [], "may not mark findings fixed, dismissed or open"),
])
def test_a_decision_refused_for_its_token_or_user_is_recorded_once_as_a_refusal(finding, scopes, permissions, message):
    user = UserFactory(username="limited", permissions=permissions)
    response = api(user, scopes=scopes).post(f"/api/findings/{finding.pk}/resolve", {"status": "open"}, format="json")
    assert response.status_code == 403
    entry = only(action="finding.resolve")
    assert entry.outcome == "refused" and message in entry.message and entry.actor == user


def test_a_decision_in_the_admin_is_recorded_once(client, staff_maintainer, finding):
    client.force_login(staff_maintainer)
    client.post(reverse("admin:findings_finding_resolve", args=["dismissed"]),
                {"ids": str(finding.pk), "status": "dismissed", "note": "Duplicate."}, REMOTE_ADDR="203.0.113.9")
    entry = only(action="finding.resolve")
    assert (entry.outcome, entry.actor, entry.source, entry.ip) == ("done", staff_maintainer, "admin", "203.0.113.9")


def test_the_client_address_comes_from_the_proxy_header_when_one_is_configured(client, settings, staff_maintainer,
                                                                              finding):
    settings.RECHECK_CLIENT_IP_HEADER = "HTTP_X_FORWARDED_FOR"
    client.force_login(staff_maintainer)
    client.post(reverse("admin:findings_finding_resolve", args=["dismissed"]),
                {"ids": str(finding.pk), "status": "dismissed", "note": "Duplicate."},
                REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="192.0.2.44, 10.0.0.1")
    assert only(action="finding.resolve").ip == "192.0.2.44"


# --- Imports -----------------------------------------------------------------------------------------


def test_an_import_through_the_api_is_recorded_once_with_what_it_created(bot):
    assert api(bot).post("/api/reviews/import", bundle(), format="json").status_code == 201
    entry = only(action="review.import")
    assert (entry.outcome, entry.actor, entry.target) == ("done", bot, "acme/importer#12")
    assert "pull request acme/importer#12" in entry.changes["created"][1]


def test_an_invalid_import_is_recorded_once_as_a_refusal_and_imports_nothing(bot):
    data = bundle(findings=[{"number": 1, "kind": "blocker", "title": "x",
                             "evidence": [{"kind": "pattern", "path": "a", "regex": "(", "expect": "present"}]}])
    assert api(bot).post("/api/reviews/import", data, format="json").status_code == 400
    entry = only(action="review.import")
    assert entry.outcome == "refused" and "regex" in entry.message and entry.target == "acme/importer#12"
    assert not Finding.objects.exists()


def test_an_import_from_the_command_is_recorded_once_as_the_command_s(tmp_path):
    import json

    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle()))
    call_command("import_review", str(path), stdout=StringIO())
    entry = only(action="review.import")
    assert (entry.outcome, entry.source, entry.actor, entry.ip) == ("done", "command", None, None)


def test_an_import_that_sets_a_status_records_the_import_and_the_decision(bot):
    data = bundle()
    data["findings"][0].update(status="dismissed", resolution={"note": "Not ours."})
    api(bot).post("/api/reviews/import", data, format="json")
    assert [entry.action for entry in AuditEntry.objects.order_by("id")] == ["finding.resolve", "review.import"]
    assert entries(action="finding.resolve")[0].source == "import"


# --- Verification requests ---------------------------------------------------------------------------


def test_each_verification_request_is_recorded_once_including_the_one_an_active_run_answers(
    bot, finding, queued, django_capture_on_commit_callbacks
):
    pull_request = finding.pull_request
    owner, name = pull_request.repository.slug.split("/")
    url = f"/api/repos/{owner}/{name}/pulls/{pull_request.number}/verify"
    client = api(bot)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url, {}, format="json").status_code == 202
        assert client.post(url, {}, format="json").status_code == 202
    first, second = AuditEntry.objects.order_by("id")
    assert (first.action, first.outcome, second.action, second.outcome) == (
        "verification.request", "done", "verification.request", "done"
    )
    assert "queued" in first.message and "already covers" in second.message and len(queued) == 1


def test_a_verification_request_without_the_scope_is_recorded_once_as_a_refusal(bot, finding, queued):
    pull_request = finding.pull_request
    owner, name = pull_request.repository.slug.split("/")
    response = api(bot, scopes=("read",)).post(f"/api/repos/{owner}/{name}/pulls/{pull_request.number}/verify", {},
                                               format="json")
    assert response.status_code == 403
    assert only(action="verification.request").outcome == "refused" and queued == []


def test_a_verification_started_on_the_site_is_recorded_once(client, finding):
    staff = UserFactory(username="verifier", is_staff=True, permissions=["findings.verify_pullrequest"])
    client.force_login(staff)
    pull_request = finding.pull_request
    client.post(reverse("findings:verify", args=[*pull_request.repository.slug.split("/"), pull_request.number]))
    entry = only(action="verification.request")
    assert (entry.outcome, entry.source, entry.actor) == ("done", "site", staff)


def test_a_verification_the_site_refuses_is_recorded_once_as_a_refusal(client, finding):
    reader = UserFactory(username="reader")
    client.force_login(reader)
    pull_request = finding.pull_request
    response = client.post(reverse("findings:verify", args=[*pull_request.repository.slug.split("/"),
                                                            pull_request.number]))
    assert response.status_code == 403
    entry = only(action="verification.request")
    assert (entry.outcome, entry.source, entry.actor) == ("refused", "site", reader)


# --- Edits in the admin ------------------------------------------------------------------------------


def admin_form_data(response) -> dict:
    """What the browser would send back from an admin change page, unchanged."""
    data = {}
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update({f"{formset.prefix}-{key}": value for key, value in formset.management_form.initial.items()})
        forms.extend(formset.forms)
    for form in forms:
        for field in form:
            value = field.value()
            if value is None or value is False:
                continue
            if isinstance(field.field.widget, MultiWidget):  # a date and a time, for one datetime
                for index, part in enumerate(field.field.widget.decompress(value)):
                    data[f"{field.html_name}_{index}"] = part
                continue
            data[field.html_name] = value
    return data


def test_an_edit_of_a_finding_and_its_evidence_in_the_admin_records_each_with_before_and_after(
    client, staff_maintainer, finding
):
    client.force_login(staff_maintainer)
    url = reverse("admin:findings_finding_change", args=[finding.pk])
    data = admin_form_data(client.get(url))
    data["title"] = "Tolerance lowered to 10"
    evidence = finding.evidence.get()
    prefix = next(key for key in data if key.endswith("-0-id"))[: -len("-0-id")]
    data[f"{prefix}-0-path"] = "src/moved.py"
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    edit = only_of(action="finding.edit")
    assert edit.changes == {"title": ["Tolerance lowered", "Tolerance lowered to 10"]} and edit.actor == staff_maintainer
    evidence_edit = only_of(action="evidence.edit")
    assert evidence_edit.changes["path"] == [evidence.path, "src/moved.py"]
    assert AuditEntry.objects.count() == 2


def only_of(**filters) -> AuditEntry:
    found = entries(**filters)
    assert len(found) == 1, [str(entry) for entry in AuditEntry.objects.all()]
    return found[0]


def test_deleting_evidence_in_the_admin_is_recorded_once(admin_client, finding):
    evidence = finding.evidence.get()
    admin_client.post(reverse("admin:findings_evidence_delete", args=[evidence.pk]), {"post": "yes"})
    assert not Evidence.objects.exists()
    assert only(action="evidence.delete").repository == finding.pull_request.repository


def test_a_change_of_a_user_s_groups_is_recorded_with_before_and_after(admin_client):
    from django.contrib.auth.models import Group

    reviewers = Group.objects.get(name="Reviewer")
    AuditEntry.objects.all().delete()  # the group was made outside the admin; only the membership counts here
    # The admin's form shows whole seconds; a joining time with microseconds would change on saving.
    user = UserFactory(username="dana", date_joined=timezone.now().replace(microsecond=0))
    url = reverse("admin:auth_user_change", args=[user.pk])
    data = admin_form_data(admin_client.get(url))
    data["groups"] = [reviewers.pk]
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    entry = only(action="user.edit")
    assert entry.changes == {"groups": [[], ["Reviewer"]]}


def test_a_new_user_s_password_never_reaches_the_log(admin_client):
    admin_client.post(reverse("admin:auth_user_add"), {
        "username": "erin", "password1": "a-long-secret-passphrase", "password2": "a-long-secret-passphrase",
        "usable_password": "true",
    })
    entry = only(action="user.add")
    assert "passphrase" not in str(entry.changes) and "password" not in entry.changes


# --- Tokens ------------------------------------------------------------------------------------------


def test_making_and_revoking_a_token_are_recorded_once_each_and_a_refused_one_as_a_refusal(bot, staff_maintainer):
    token, _ = api_token_create(user=bot, name="CI", scopes=["read", "verify"], created_by=staff_maintainer)
    api_token_revoke(token=token, revoked_by=staff_maintainer)
    with pytest.raises(Exception, match="already revoked"):
        api_token_revoke(token=token, revoked_by=staff_maintainer)
    with pytest.raises(Exception, match="Unknown scope"):
        api_token_create(user=bot, name="CI", scopes=["everything"], created_by=staff_maintainer)
    made, revoked, refused_revoke, refused_make = AuditEntry.objects.order_by("id")
    assert (made.action, made.outcome, made.actor) == ("token.create", "done", staff_maintainer)
    assert made.changes["scopes"] == [None, ["read", "verify"]]
    assert (revoked.action, revoked.outcome) == ("token.revoke", "done")
    assert (refused_revoke.action, refused_revoke.outcome) == ("token.revoke", "refused")
    assert (refused_make.action, refused_make.outcome) == ("token.create", "refused")


def test_a_token_made_in_the_admin_shows_its_secret_once_and_is_recorded(admin_client, admin_user, bot):
    response = admin_client.post(reverse("admin:access_apitoken_add"), {
        "user": bot.pk, "name": "Nightly", "scopes": ["read", "verify"], "days": 30,
    })
    token = ApiToken.objects.get()
    secret = response.context["secret"]
    assert response.status_code == 200 and secret in response.content.decode()
    assert "no-store" in response["Cache-Control"] and not response.cookies.get("messages")
    assert secret.startswith(token.token_key) and secret not in str(token.digest)
    assert APIClient(HTTP_AUTHORIZATION=f"Token {secret}").get("/api/").status_code == 200
    assert only(action="token.create").actor == admin_user
    page = admin_client.get(reverse("admin:access_apitoken_change", args=[token.pk])).content.decode()
    assert secret not in page


def test_revoking_from_the_admin_is_recorded_once(admin_client, admin_user, bot):
    token, _ = api_token_create(user=bot, name="CI", scopes=["read"])
    AuditEntry.objects.all().delete()
    admin_client.post(reverse("admin:access_apitoken_changelist"),
                      {"action": "revoke", "_selected_action": [token.pk]})
    token.refresh_from_db()
    assert token.is_revoked and token.revoked_by == admin_user
    assert only(action="token.revoke").actor == admin_user


# --- Reading the log ---------------------------------------------------------------------------------


def test_instance_admins_read_the_log_through_the_api_and_nobody_writes_to_it(admin_user, bot, finding):
    api(bot).post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "No."}, format="json")
    admin = api(admin_user, scopes=("read",), name="Audit")
    body = admin.get("/api/audit/?action=finding.resolve").json()
    assert body["count"] == 1 and body["results"][0]["actor"] == "ci-bot" and body["results"][0]["outcome"] == "done"
    # Refused before the method is looked at (a read token writes nothing), and not allowed anyway.
    assert admin.post("/api/audit/", {}, format="json").status_code in (403, 405)
    assert admin.delete("/api/audit/").status_code in (403, 405)
    admin.force_authenticate(admin_user)  # a session has no scopes: the method itself is refused
    assert admin.post("/api/audit/", {}, format="json").status_code == 405
    assert admin.delete("/api/audit/").status_code == 405
    assert api(bot, scopes=("read",), name="Reader").get("/api/audit/").status_code == 403


def test_the_admin_shows_the_log_read_only(admin_client, bot, finding):
    api(bot).post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "No."}, format="json")
    entry = AuditEntry.objects.get()
    assert admin_client.get(reverse("admin:access_auditentry_changelist")).status_code == 200
    page = admin_client.get(reverse("admin:access_auditentry_change", args=[entry.pk]))
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert admin_client.post(reverse("admin:access_auditentry_change", args=[entry.pk]), {"message": "x"}).status_code == 403
    assert admin_client.get(reverse("admin:access_auditentry_add")).status_code == 403
    assert admin_client.post(reverse("admin:access_auditentry_delete", args=[entry.pk]), {"post": "yes"}).status_code == 403
    assert AuditEntry.objects.get().message == entry.message


def test_an_admin_token_limited_to_a_repository_reads_only_its_entries(admin_user, bot, finding):
    other = FindingFactory(title="Elsewhere")
    for target in (finding, other):
        api(bot).post(f"/api/findings/{target.pk}/resolve", {"status": "dismissed", "note": "No."}, format="json")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + make_api_token(
        admin_user, scopes=["read"], repositories=[finding.pull_request.repository], name="Audit A"))
    body = client.get("/api/audit/").json()
    assert [row["repository"] for row in body["results"]] == [finding.pull_request.repository.slug]


def test_reading_the_log_takes_a_fixed_number_of_queries(admin_user, bot, finding, django_assert_max_num_queries):
    for _ in range(3):
        api(bot).post(f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "No."}, format="json")
        api(bot).post(f"/api/findings/{finding.pk}/resolve", {"status": "open"}, format="json")
    client = api(admin_user, scopes=("read",), name="Audit")
    with django_assert_max_num_queries(7):
        assert client.get("/api/audit/").json()["count"] == 6


def test_a_repository_setting_changed_through_the_api_is_recorded_with_before_and_after(finding):
    owner = UserFactory(username="owner", permissions=["reviews.change_repository"])
    slug = finding.pull_request.repository.slug
    response = api(owner, scopes=("read", "settings")).patch(f"/api/repos/{slug}/publishing", {"publish_checks": True},
                                                            format="json")
    assert response.status_code == 200
    entry = only(action="repository.settings")
    assert (entry.outcome, entry.actor, entry.changes) == ("done", owner, {"publish_checks": [False, True]})


def test_a_repository_setting_refused_to_a_token_without_the_scope_is_recorded_as_a_refusal(finding):
    owner = UserFactory(username="owner", permissions=["reviews.change_repository"])
    slug = finding.pull_request.repository.slug
    response = api(owner, scopes=("read",)).patch(f"/api/repos/{slug}/publishing", {"publish_checks": True},
                                                 format="json")
    assert response.status_code == 403 and "'settings'" in response.json()["detail"]
    assert only(action="repository.settings").outcome == "refused"


def test_a_refusal_of_a_path_with_a_nul_byte_is_still_recorded(finding):
    """A hostile URL reaches the audit log as text PostgreSQL can store."""
    from access.audit import audit_refusal

    entry = audit_refusal(action="finding.resolve", target="/api/findings/1\x00/resolve", message="no\x00",
                          changes={"note": ["a\x00", None]})
    entry.refresh_from_db()
    assert entry.target == "/api/findings/1\\0/resolve" and entry.message == "no\\0"
    assert entry.changes == {"note": ["a\\0", None]}
