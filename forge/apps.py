from django.apps import AppConfig


class ForgeConfig(AppConfig):
    name = "forge"
    # The label the app had when it was called `reporting`: its tables, migrations and permissions
    # keep their names.
    label = "reporting"
    verbose_name = "Forge (GitHub)"

    def ready(self):
        # Registered in every process, not only in a worker: services enqueue them by name.
        from forge import receivers, tasks  # noqa: F401
