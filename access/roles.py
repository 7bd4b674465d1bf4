"""The role groups after a flush.

The roles' groups are made by a data migration (access 0003), which runs once. A database that is
flushed (a test database between transactional tests, or an operator's `manage.py flush`) keeps
its schema but loses those rows, and with them every role. After each migrate or flush this puts
back a missing group with the permissions the migration gives it, and leaves an existing group
as an operator may have changed it."""
import importlib

from django.contrib.auth.management import create_permissions

ROLES_MIGRATION = "access.migrations.0003_reader_reviewer_maintainer_groups"


def role_groups_ensure(sender, apps=None, using="default", **kwargs) -> None:
    from django.apps import apps as global_apps
    from django.contrib.auth.models import Group, Permission

    # The permissions of these apps are made by their own post_migrate, which may not have run yet.
    for label in ("reviews", "findings"):
        create_permissions(global_apps.get_app_config(label), verbosity=0, using=using)
    migration = importlib.import_module(ROLES_MIGRATION)
    for name, codes in migration.ROLES.items():
        group, created = Group.objects.using(using).get_or_create(name=name)
        if created:
            group.permissions.add(*migration.role_permissions(Permission.objects.using(using), name, codes))
