"""GitHubCall becomes ForgeCall, the outbox of every forge, in the state only: the table, its
indexes and constraints keep their names. The permissions follow the model's new name, so a person
or group granted them keeps them (Django would otherwise make new ones beside the old)."""
import django.db.models.deletion
from django.db import migrations, models

RENAMED = {
    "add_githubcall": ("add_forgecall", "Can add forge call"),
    "change_githubcall": ("change_forgecall", "Can change forge call"),
    "delete_githubcall": ("delete_forgecall", "Can delete forge call"),
    "view_githubcall": ("view_forgecall", "Can view forge call"),
    "resend_githubcall": ("resend_forgecall", "Can send a failed forge call again"),
}
PREVIOUS_NAMES = {
    "add_githubcall": "Can add GitHub call",
    "change_githubcall": "Can change GitHub call",
    "delete_githubcall": "Can delete GitHub call",
    "view_githubcall": "Can view GitHub call",
    "resend_githubcall": "Can send a failed GitHub call again",
}


def permissions_renamed(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for old, (new, name) in RENAMED.items():
        Permission.objects.filter(content_type__app_label="reporting", codename=old).update(codename=new, name=name)


def permissions_named_back(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for old, (new, _) in RENAMED.items():
        Permission.objects.filter(content_type__app_label="reporting", codename=new).update(
            codename=old, name=PREVIOUS_NAMES[old])


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('reporting', '0005_review_threads'),
        ('reviews', '0007_repository_forge'),
    ]

    operations = [
        # The table named as it is, first: RenameModel then renames nothing on the database.
        migrations.AlterModelTable(name='githubcall', table='reporting_githubcall'),
        migrations.RenameModel(old_name='GitHubCall', new_name='ForgeCall'),
        migrations.AlterModelOptions(
            name='forgecall',
            options={'ordering': ['-id'], 'permissions': [('resend_forgecall', 'Can send a failed forge call again')],
                     'verbose_name': 'forge call'},
        ),
        migrations.AlterField(
            model_name='forgecall',
            name='pull_request',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name='forge_calls', to='reviews.pullrequest'),
        ),
        migrations.AlterField(
            model_name='forgecall',
            name='repository',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='forge_calls',
                                    to='reviews.repository'),
        ),
        migrations.AlterField(
            model_name='forgecall',
            name='review_thread',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name='forge_calls', to='reporting.reviewthread'),
        ),
        migrations.RunPython(permissions_renamed, permissions_named_back),
    ]
