"""The admin of a record (the audit log, a finding's history, the follow-ups) shows it and never
adds to, changes or deletes it, even for a superuser: the services alone write records."""
import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", ["access/auditentry", "findings/findingevent", "findings/followup"])
def test_a_record_cannot_be_added_to_changed_or_deleted_in_the_admin(client, superuser, model):
    from django.contrib import admin
    from django.apps import apps

    client.force_login(superuser)
    assert client.get(f"/admin/{model}/").status_code == 200
    assert client.get(f"/admin/{model}/add/").status_code == 403
    model_admin = admin.site._registry[apps.get_model(*model.split("/"))]
    request = type("Request", (), {"user": superuser})()
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)
