# A pull request's review state, derived from its facts and stored per generation; whether a
# finding looks regressed is part of it, no longer a column of its own.

import django.db.models.deletion
from django.db import migrations, models


def drop_possibly_regressed(apps, schema_editor):
    schema_editor.execute('ALTER TABLE "findings_finding" DROP COLUMN "possibly_regressed"')


def add_possibly_regressed(apps, schema_editor):
    false = "false" if schema_editor.connection.vendor == "postgresql" else "0"
    schema_editor.execute(
        f'ALTER TABLE "findings_finding" ADD COLUMN "possibly_regressed" boolean NOT NULL DEFAULT {false}'
    )


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0014_tag_descriptions_per_repository'),
        ('reviews', '0005_pull_request_generation'),
    ]

    operations = [
        # Written out: on SQLite, Django adds the column back (reversing) by rebuilding the table,
        # which the full-text search triggers on it (0010) do not survive. ALTER TABLE keeps them.
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.RemoveField(model_name='finding', name='possibly_regressed')],
            database_operations=[migrations.RunPython(drop_possibly_regressed, add_possibly_regressed)],
        ),
        migrations.CreateModel(
            name='PullRequestState',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('generation', models.PositiveBigIntegerField()),
                ('derived_at', models.DateTimeField(auto_now_add=True)),
                ('summary', models.JSONField()),
                ('findings', models.JSONField()),
                ('pull_request', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='states', to='reviews.pullrequest')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('pull_request', 'generation'), name='pull_request_state_once_per_generation')],
            },
        ),
        migrations.CreateModel(
            name='PullRequestGate',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('generation', models.PositiveBigIntegerField()),
                ('sha', models.CharField(blank=True, max_length=40)),
                ('commit_id', models.BigIntegerField(help_text='The pinned commit answered about.')),
                ('unique_from', models.PositiveSmallIntegerField()),
                ('verified', models.BooleanField()),
                ('body', models.TextField(help_text='mergeable, verified, reason, open_blockers, possibly_regressed: JSON.')),
                ('pull_request', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='reviews.pullrequest')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('pull_request', 'generation', 'sha'), name='pull_request_gate_once_per_generation_commit')],
            },
        ),
    ]
