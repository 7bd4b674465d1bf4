# Check evidence: a CI check by its name, the app its reports come from, the tests and scanner
# results inside it.

from django.db import migrations, models

from findings.search.schema import search_index_install, search_index_uninstall


def search_triggers_off(apps, schema_editor):
    # SQLite rebuilds the evidence table to change its constraint, which the full-text search
    # triggers reading it (0010) do not survive: they are set up again, and the index refilled, after.
    if schema_editor.connection.vendor == "sqlite":
        search_index_uninstall(schema_editor.connection)


def search_triggers_on(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        search_index_install(schema_editor.connection, backfill=True)


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0019_evidence_result_successor'),
        ('reviews', '0007_repository_forge'),
    ]

    operations = [
        migrations.RunPython(search_triggers_off, search_triggers_on),
        migrations.RemoveConstraint(
            model_name='evidence',
            name='evidence_fields_match_kind',
        ),
        migrations.AddField(
            model_name='evidence',
            name='check_app',
            field=models.CharField(blank=True, help_text="The app a check's reports must come from; any when empty.", max_length=255),
        ),
        migrations.AddField(
            model_name='evidence',
            name='check_name',
            field=models.CharField(blank=True, help_text="A CI check's name (check evidence).", max_length=255),
        ),
        migrations.AddField(
            model_name='evidence',
            name='check_results',
            field=models.JSONField(blank=True, default=list, help_text='Scanner results inside the check.'),
        ),
        migrations.AddField(
            model_name='evidence',
            name='check_tests',
            field=models.JSONField(blank=True, default=list, help_text='Test ids inside the check.'),
        ),
        migrations.AlterField(
            model_name='evidence',
            name='expect',
            field=models.CharField(blank=True, choices=[('present', 'Matches'), ('absent', 'Does not match'), ('exists', 'Exists'), ('missing', 'Is missing'), ('pinned_at', 'Is pinned at'), ('off_branch', 'Is off its branch'), ('not_fast_forward', 'Does not fast-forward'), ('failed', 'Fails')], max_length=20),
        ),
        migrations.AlterField(
            model_name='evidence',
            name='kind',
            field=models.CharField(choices=[('snippet', 'Code snippet'), ('pattern', 'Pattern'), ('path', 'Path'), ('gitlink', 'Submodule pin'), ('note', 'Note'), ('check', 'CI check')], max_length=10),
        ),
        migrations.AddConstraint(
            model_name='evidence',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('commit__isnull', False), ('end_line__isnull', False), ('kind', 'snippet'), ('start_line__isnull', False), ('start_line__gte', 1), models.Q(('path', ''), _negated=True), ('end_line__gte', models.F('start_line'))), models.Q(('commit__isnull', False), ('expect__in', ['present', 'absent']), ('kind', 'pattern'), models.Q(('path', ''), _negated=True), models.Q(('regex', ''), _negated=True)), models.Q(('commit__isnull', False), ('expect__in', ['exists', 'missing']), ('kind', 'path'), models.Q(('path', ''), _negated=True)), models.Q(('commit__isnull', False), ('kind', 'gitlink'), ('sha__regex', '^[0-9a-f]{7,40}$'), ('expect__in', ['', 'pinned_at', 'off_branch', 'not_fast_forward']), models.Q(('path', ''), _negated=True)), models.Q(('kind', 'note'), models.Q(('text', ''), _negated=True)), models.Q(('commit__isnull', False), ('expect__in', ['', 'failed']), ('kind', 'check'), models.Q(('check_name', ''), _negated=True)), _connector='OR'), name='evidence_fields_match_kind', violation_error_message='Evidence is missing a field its kind needs.'),
        ),
            migrations.RunPython(search_triggers_on, search_triggers_off),
    ]
