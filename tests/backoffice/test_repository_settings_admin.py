"""A repository's reporting settings kept beside it (replies in review threads, follow-up issues)
are edited on the repository's admin page, by whoever may change its settings, and recorded."""
import pytest

from access.models import AuditEntry
from forge.models import FollowUpIssueSetting, ThreadSettings
from tests.factories import RepositoryFactory, UserFactory
from tests.personas import member_of, site_client, superuser

pytestmark = pytest.mark.django_db


def change_form_data(response) -> dict:
    """What the change page's form would send back as it stands: the repository's fields and each
    inline's management and row fields, as the browser would post them untouched."""
    data = {}
    form = response.context["adminform"].form
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if value is None or value is False:
            continue
        data[name] = value
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        management = formset.management_form
        for name in ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS", "MAX_NUM_FORMS"):
            data[f"{formset.prefix}-{name}"] = management.initial.get(name, management[name].value())
        # A new row's fields as the page shows them (its defaults: the merge policy's days).
        for row in formset.forms:
            if row.instance.pk is not None:
                continue
            for name in row.fields:
                value = row[name].value()
                if value not in (None, False, "") and name not in ("id", "repository"):
                    data[f"{row.prefix}-{name}"] = value
    return data


def test_an_admin_switches_thread_replies_and_follow_up_issues_on_from_the_repository_page():
    repository = RepositoryFactory(slug="acme/loader")
    root = superuser()
    client = site_client(root)
    url = f"/admin/reviews/repository/{repository.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Review threads" in html and "Follow-up issues" in html
    data = change_form_data(page)
    data.update({"thread_settings-0-publish_verdicts": "on", "thread_settings-0-resolve_when_verified": "on",
                 "follow_up_issue_setting-0-open_issues": "on"})
    response = client.post(url, data)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    settings = ThreadSettings.objects.get(repository=repository)
    assert (settings.publish_verdicts, settings.resolve_when_verified) == (True, True)
    assert FollowUpIssueSetting.objects.get(repository=repository).open_issues
    recorded = set(AuditEntry.objects.filter(repository=repository).values_list("action", flat=True))
    assert {"threadsettings.add", "followupissuesetting.add"} <= recorded, recorded

    # Posted again with one switched off: the same rows change, and the change is recorded.
    page = client.get(url)
    data = change_form_data(page)
    for inline in page.context["inline_admin_formsets"]:
        for index, row in enumerate(inline.formset.forms):
            if row.instance.pk is None:
                continue  # a new row (the merge policy, never saved here): posted untouched
            data[f"{inline.formset.prefix}-{index}-id"] = row.instance.pk
            data[f"{inline.formset.prefix}-{index}-repository"] = repository.pk
    data.update({"thread_settings-0-publish_verdicts": "on", "follow_up_issue_setting-0-open_issues": "on"})
    assert client.post(url, data).status_code == 302
    settings.refresh_from_db()
    assert (settings.publish_verdicts, settings.resolve_when_verified) == (True, False)
    assert ThreadSettings.objects.filter(repository=repository).count() == 1
    assert AuditEntry.objects.filter(repository=repository, action="threadsettings.edit").exists()


def test_the_settings_are_changed_with_the_repository_s_settings_never_by_their_own_model_permissions():
    repository = RepositoryFactory(slug="acme/loader", visibility="private")
    ThreadSettings.objects.create(repository=repository, publish_verdicts=False)
    url = f"/admin/reviews/repository/{repository.pk}/change/"

    def thread_inline(user):
        page = site_client(user).get(url)
        assert page.status_code == 200
        return {inline.formset.prefix: inline for inline in page.context["inline_admin_formsets"]}["thread_settings"]

    # The rows' own model permissions and a reviewer's role: the repository's page is read-only
    # to them, and so are its settings.
    reviewer = member_of(repository, UserFactory(username="rae", is_staff=True, permissions=[
        "reviews.view_repository", "reporting.view_threadsettings", "reporting.add_threadsettings",
        "reporting.change_threadsettings",
    ]), "reviewer")
    assert not thread_inline(reviewer).has_change_permission
    # The repository's settings (instance-wide), without any permission on the rows themselves.
    keeper = UserFactory(username="kim", is_staff=True, permissions=["reviews.view_repository", "findings.view_finding",
                                                                     "reviews.change_repository"])
    assert thread_inline(keeper).has_change_permission
