from django.apps import AppConfig


class ReportingConfig(AppConfig):
    name = "reporting"
    verbose_name = "Reporting to GitHub"

    def ready(self):
        # Registered in every process, not only in a worker: services enqueue them by name.
        from reporting import tasks  # noqa: F401
