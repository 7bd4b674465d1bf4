"""The site's three roles as groups with their model permissions. A later permission added to a
role goes in a new migration, so an operator's own changes to these groups are kept until then."""
from django.contrib.auth.management import create_permissions
from django.db import migrations

READ = [
    "reviews.view_repository", "reviews.view_pullrequest", "reviews.view_commit", "reviews.view_pinnedcommit",
    "findings.view_finding", "findings.view_evidence", "findings.view_verification", "findings.view_evidenceresult",
    "findings.view_findingevent", "findings.view_verificationrun", "findings.view_tag", "findings.view_findinglink",
]
REVIEW = READ + [
    "findings.add_finding", "findings.change_finding", "findings.add_evidence", "findings.change_evidence",
    "findings.delete_evidence", "findings.add_tag", "findings.change_tag", "findings.add_findinglink",
    "findings.delete_findinglink", "findings.import_review", "findings.verify_pullrequest",
]
MAINTAIN = REVIEW + ["findings.resolve_finding"]

ROLES = {"Reader": READ, "Reviewer": REVIEW, "Maintainer": MAINTAIN}


def create_role_groups(apps, schema_editor):
    # Permissions are made after migrations run; make them now so the groups can hold them.
    for app_label in ("reviews", "findings"):
        app_config = apps.get_app_config(app_label)
        # The migration state's app stubs have no models module; create_permissions needs one.
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codes in ROLES.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*role_permissions(Permission.objects.all(), name, codes))


def role_permissions(permissions, name: str, codes: list[str]) -> list:
    """The permissions among `permissions` (a queryset of auth's Permission) that the role `name`
    holds, by their "app_label.codename"; refused when one does not exist. Also used by
    access.roles, which puts the groups back after a flush."""
    wanted = {tuple(code.split(".", 1)) for code in codes}
    found = [
        permission
        for permission in permissions.select_related("content_type")
        if (permission.content_type.app_label, permission.codename) in wanted
    ]
    missing = wanted - {(p.content_type.app_label, p.codename) for p in found}
    if missing:
        raise RuntimeError(f"Permissions missing for the {name} role: {sorted(missing)}")
    return found


def remove_role_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("access", "0002_hash_plain_text_tokens"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("findings", "0011_companion_pages_generation"),
        ("reviews", "0005_pull_request_generation"),
    ]

    operations = [migrations.RunPython(create_role_groups, remove_role_groups)]
