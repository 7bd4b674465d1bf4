from django.apps import AppConfig


class PresentationConfig(AppConfig):
    name = "presentation"
    verbose_name = "Presentation"

    def ready(self):
        # Registered in every process: the receiver enqueues them by name.
        from presentation import receivers, tasks  # noqa: F401
