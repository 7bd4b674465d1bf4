"""The audit log's time filters take any ISO 8601 time Python reads: an offset PostgreSQL would
refuse (`+21:38`) is moved to UTC first, and a time that leaves the calendar when moved is a 400
that says so, never a 500."""
import pytest
from rest_framework.test import APIClient

from access.models import AuditEntry
from tests.personas import superuser

pytestmark = pytest.mark.django_db


@pytest.fixture
def auditor():
    AuditEntry.objects.create(action="finding.edit", target="acme/alpha#1")
    client = APIClient()
    client.force_authenticate(superuser())
    return client


def test_an_offset_the_database_refuses_is_read_in_utc(auditor):
    listed = auditor.get("/api/audit/", {"until": "0425-06-26T08:16:29.6+21:38"})
    assert listed.status_code == 200 and listed.json()["results"] == []
    assert len(auditor.get("/api/audit/", {"since": "0425-06-26T08:16:29.6+21:38"}).json()["results"]) == 1


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+23:00", "9999-12-31T23:59:59-23:00", "tomorrow"])
def test_a_time_outside_the_calendar_is_a_400(auditor, value):
    refused = auditor.get("/api/audit/", {"since": value})
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "since"
