from django.db import migrations, models


def mark_limited(apps, schema_editor):
    # Tokens made before this flag were limited exactly when they named repositories; one whose
    # repositories were all deleted since cannot be told apart from an unlimited one any more, and
    # the data migration cannot ask, so those stay as they were read before (unlimited).
    ApiToken = apps.get_model("access", "ApiToken")
    ApiToken.objects.filter(repositories__isnull=False).update(limited=True)


class Migration(migrations.Migration):
    dependencies = [("access", "0004_repository_memberships")]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="limited",
            field=models.BooleanField(
                default=False,
                help_text="Limited to the repositories below; a limited token whose repositories are gone reaches none.",
            ),
        ),
        migrations.AlterField(
            model_name="apitoken",
            name="repositories",
            field=models.ManyToManyField(
                blank=True, help_text="The repositories a limited token reaches.", related_name="+",
                to="reviews.repository",
            ),
        ),
        migrations.RunPython(mark_limited, migrations.RunPython.noop),
    ]
