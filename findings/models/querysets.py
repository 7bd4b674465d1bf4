"""The querysets the rows of findings share: bulk writes that move the generation of the pull
requests they touch, and the filter to what a person may read; and `in_slices`, for an `__in`
of thousands."""
from django.apps import apps
from django.db import models

from reviews.services import pull_requests_changed


class ChangesPullRequestQuerySet(models.QuerySet):
    """Bulk writes (`update`, `bulk_create`, `bulk_update`) send no signals, so these querysets
    move the generation of the pull requests they touch themselves (see `findings.receivers`): no
    caller can forget to. `pull_request_field` is the lookup from a row to its PR's id."""

    pull_request_field = "pull_request_id"

    def _pull_request_ids(self) -> set[int]:
        return set(self.order_by().values_list(self.pull_request_field, flat=True).distinct())

    def update(self, **kwargs):
        ids = self._pull_request_ids()
        count = super().update(**kwargs)
        pull_requests_changed(pull_request_ids=ids)
        return count

    def bulk_create(self, objs, *args, **kwargs):
        created = super().bulk_create(objs, *args, **kwargs)
        pull_requests_changed(pull_request_ids=self._pull_request_ids_of(created))
        return created

    def bulk_update(self, objs, fields, *args, **kwargs):
        count = super().bulk_update(objs, fields, *args, **kwargs)
        pull_requests_changed(pull_request_ids=self._pull_request_ids_of(objs))
        return count

    def _pull_request_ids_of(self, objs) -> set[int]:
        if self.pull_request_field == "pull_request_id":
            return {obj.pull_request_id for obj in objs}
        finding_ids = {obj.finding_id for obj in objs}
        # The models import this module, so Finding is looked up in the app registry, not imported.
        Finding = apps.get_model("findings", "Finding")
        return set(Finding.objects.filter(pk__in=finding_ids).values_list("pull_request_id", flat=True).distinct())


def in_slices(values: list, size: int = 500):
    """`values` a slice at a time, so that an `__in` of thousands stays within what a database takes."""
    for start in range(0, len(values), size):
        yield values[start:start + size]


def _readable(queryset, user, path: str):
    # access.permissions decides; imported here because it reads access.models at call time.
    from access.permissions import readable_rows

    return readable_rows(queryset, user, path)


class FindingRowQuerySet(ChangesPullRequestQuerySet):
    pull_request_field = "finding__pull_request_id"

    def readable_by(self, user):
        """The rows of findings in repositories `user` may read."""
        return _readable(self, user, "finding__pull_request__repository")
