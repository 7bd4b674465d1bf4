from django.apps import AppConfig


class CliConfig(AppConfig):
    name = "cli"
    verbose_name = "Commands"

    def ready(self):
        from core.collector import collector_resume

        # manage.py paused the collector for the set-up (core.collector); the models and the
        # apps before this one are loaded, so what the set-up made is kept out of its passes.
        collector_resume()
