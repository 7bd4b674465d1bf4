"""Reads of what `access` owns that more than one interface needs."""
from __future__ import annotations

from collections.abc import Collection

from django.db.models import Q, QuerySet

from access.models import AuditEntry
from access.permissions import may_read_audit_log, readable_condition, reads_everything


def readable_audit_entries(
    user, *, entries: QuerySet[AuditEntry] | None = None, repository_ids: Collection[int] | None = None,
) -> QuerySet[AuditEntry]:
    """The audit entries `user` may read, for the site, the API and the admin alike: none unless
    they may read the audit log (`may_read_audit_log`); then the entries of repositories they read
    and those of no repository (sign-ins, tokens). `repository_ids` narrows it to an API token's
    repositories: such a token reads those repositories' entries and never the entries of no
    repository, which are not about any repository it was given. `entries` is the queryset to
    narrow (the admin's, with its ordering); by default every entry."""
    entries = AuditEntry.objects.all() if entries is None else entries
    if not may_read_audit_log(user):
        return entries.none()
    if repository_ids is not None:
        return entries.filter(readable_condition(user, "repository"), repository_id__in=list(repository_ids))
    if reads_everything(user):
        return entries
    return entries.filter(Q(repository__isnull=True) | readable_condition(user, "repository"))
