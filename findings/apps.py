from django.apps import AppConfig


class FindingsConfig(AppConfig):
    name = "findings"
    verbose_name = "Findings"

    def ready(self):
        # Services enqueue tasks by name (findings.enqueue), so every process that can enqueue (a
        # web process too, not only a worker) must have the tasks registered with the Celery app.
        from findings import tasks  # noqa: F401
