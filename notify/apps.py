from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "notify"
    verbose_name = "Notifications"

    def ready(self):
        from notify import receivers  # noqa: F401  (connects the receivers)
