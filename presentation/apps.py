from django.apps import AppConfig


class PresentationConfig(AppConfig):
    name = "presentation"
    verbose_name = "Presentation"

    def ready(self):
        from presentation import receivers  # noqa: F401  (connects them)
