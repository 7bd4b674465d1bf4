from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccessConfig(AppConfig):
    name = "access"
    verbose_name = "Access"

    def ready(self):
        from access.roles import role_groups_ensure

        post_migrate.connect(role_groups_ensure, sender=self, dispatch_uid="access.role_groups_ensure")
