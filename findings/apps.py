from django.apps import AppConfig


class FindingsConfig(AppConfig):
    name = "findings"
    verbose_name = "Findings"

    def ready(self):
        from findings import signals  # noqa: F401  (connects the receivers)
