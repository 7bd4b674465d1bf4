# What a list shows of each finding from a stored state, a row a finding, so a page reads its own
# findings' rows rather than each pull request's whole state. The states already stored get their
# rows here, each with the shape it was stored in.

import django.db.models.deletion
from django.db import migrations, models


def fill_rows(apps, schema_editor):
    PullRequestState = apps.get_model("findings", "PullRequestState")
    FindingListState = apps.get_model("findings", "FindingListState")
    for state in PullRequestState.objects.order_by("pk").iterator(chunk_size=20):
        shape = state.summary.get("shape", 0) if isinstance(state.summary, dict) else 0
        FindingListState.objects.bulk_create(
            (
                FindingListState(
                    state_id=state.pk, finding_id=int(pk), shape=shape, verdict=finding.get("verdict") or "",
                    resolution=finding.get("resolution") or finding.get("status", ""),
                    possibly_regressed=bool(finding.get("possibly_regressed")),
                )
                for pk, finding in (state.findings or {}).items()
            ),
            batch_size=2000,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0016_follow_ups'),
    ]

    operations = [
        migrations.CreateModel(
            name='FindingListState',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('finding_id', models.BigIntegerField()),
                ('shape', models.PositiveSmallIntegerField()),
                ('verdict', models.CharField(blank=True, help_text='Empty while it has none.', max_length=15)),
                ('resolution', models.CharField(max_length=15)),
                ('possibly_regressed', models.BooleanField()),
                ('state', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='listed', to='findings.pullrequeststate')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('state', 'finding_id'), name='finding_list_state_once_per_state')],
            },
        ),
        migrations.RunPython(fill_rows, migrations.RunPython.noop, elidable=True),
    ]
