from django.apps import AppConfig


class ForgeConfig(AppConfig):
    name = "forge"
    # The label the app had when it was called `reporting`: its tables, migrations and permissions
    # keep their names.
    label = "reporting"
    verbose_name = "Forge (GitHub)"

    def ready(self):
        from forge import receivers  # noqa: F401  (connects them)
