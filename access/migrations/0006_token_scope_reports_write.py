# The reports:write scope: a CI job's token that sends the reports of its repository's commits.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('access', '0005_apitoken_limited'),
    ]

    operations = [
        migrations.AlterField(
            model_name='apitoken',
            name='scopes',
            field=models.JSONField(default=list, help_text='Any of: read, verify, import, resolve, reports:write, settings.'),
        ),
    ]
