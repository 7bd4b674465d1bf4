from django.apps import AppConfig


class FindingsConfig(AppConfig):
    name = "findings"
    verbose_name = "Findings"

    def ready(self):
        # Celery's autodiscovery runs only in a worker; a web process that enqueues by task name
        # (findings.enqueue) needs the tasks registered too.
        from findings import tasks  # noqa: F401
        from findings import signals  # noqa: F401  (connects the receivers)
