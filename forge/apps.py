from django.apps import AppConfig


class ForgeConfig(AppConfig):
    name = "forge"
    # The label the app had when it was called `reporting`: its tables, migrations and permissions
    # keep their names.
    label = "reporting"
    verbose_name = "Forge (GitHub, GitLab)"

    def ready(self):
        from forge import receivers  # noqa: F401  (connects them)
        # Each registers itself with forge.interface: a repository's forge is found by its name.
        import forge.github.integration  # noqa: F401
        import forge.gitlab.integration  # noqa: F401
