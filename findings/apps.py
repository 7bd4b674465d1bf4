from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _repair_search_index(sender, using, **kwargs):
    from django.db import connections

    from findings.search.schema import search_index_repair

    search_index_repair(connections[using])


class FindingsConfig(AppConfig):
    name = "findings"
    verbose_name = "Findings"

    def ready(self):
        # SQLite rebuilds a table to alter a column, and the rebuilt table has no triggers.
        post_migrate.connect(_repair_search_index, sender=self)
        from findings import receivers, timeline_receivers  # noqa: F401  (connects the receivers)
