import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    # Numbered 0003 as reserved, and run after 0005: it adds its kinds to the call kinds 0004 and 0005 know.

    dependencies = [
        ('findings', '0016_follow_ups'),
        ('reporting', '0004_gitlab'),
        ('reviews', '0007_repository_forge'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ReviewComment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('github_id', models.BigIntegerField(help_text="The forge's id of the comment.", unique=True)),
                ('in_reply_to_id', models.BigIntegerField(blank=True, null=True)),
                ('author_login', models.CharField(blank=True, max_length=100)),
                ('author_id', models.BigIntegerField(blank=True, help_text="The forge's id of its author.", null=True)),
                ('body', models.TextField(blank=True, help_text='Markdown, as written on the forge (sanitised when shown).')),
                ('html_url', models.URLField(blank=True, max_length=500)),
                ('created_at', models.DateTimeField(blank=True, null=True)),
                ('updated_at', models.DateTimeField(blank=True, null=True)),
                ('deleted', models.BooleanField(default=False, help_text='Gone from the forge; kept so nothing is lost.')),
                ('by_recheck', models.BooleanField(default=False, help_text="Recheck's own reply.")),
                ('command_handled', models.BooleanField(default=False)),
            ],
            options={
                'ordering': ['thread_id', 'created_at', 'github_id'],
            },
        ),
        migrations.CreateModel(
            name='ReviewThread',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('root_comment_id', models.BigIntegerField(help_text="The forge's id of the thread's first comment.")),
                ('node_id', models.CharField(blank=True, help_text="The thread's GraphQL id, once known.", max_length=100)),
                ('html_url', models.URLField(blank=True, max_length=500)),
                ('path', models.CharField(blank=True, max_length=500)),
                ('side', models.CharField(blank=True, help_text='RIGHT (the new code) or LEFT (the old).', max_length=5)),
                ('subject_type', models.CharField(blank=True, help_text="line, or file for a file's comment.", max_length=10)),
                ('original_commit_id', models.CharField(blank=True, max_length=40)),
                ('original_start_line', models.PositiveIntegerField(blank=True, null=True)),
                ('original_line', models.PositiveIntegerField(blank=True, null=True)),
                ('commit_id', models.CharField(blank=True, max_length=40)),
                ('line', models.PositiveIntegerField(blank=True, null=True)),
                ('diff_hunk', models.TextField(blank=True)),
                ('author_login', models.CharField(blank=True, max_length=100)),
                ('resolved', models.BooleanField(default=False, help_text='Resolved on the forge, as it last said.')),
                ('state', models.CharField(choices=[('new', 'New'), ('finding', 'Triaged as a finding'), ('attached', 'Attached to a finding'), ('not_a_finding', 'Not a finding')], default='new', max_length=15)),
                ('problem', models.CharField(blank=True, choices=[('', 'None'), ('first_deleted', 'First comment deleted'), ('commit_missing', 'Commit not in the mirror'), ('file_missing', 'File not in the mirror'), ('line_beyond', 'Line beyond the file'), ('binary', 'Binary file')], default='', max_length=20)),
                ('problem_detail', models.TextField(blank=True)),
                ('placement', models.TextField(blank=True, help_text="How the finding's evidence was taken from the comment.")),
                ('triaged_at', models.DateTimeField(blank=True, null=True)),
                ('reply_comment_id', models.BigIntegerField(blank=True, null=True)),
                ('reply_body', models.TextField(blank=True, help_text='What the reply says (or will say once sent).')),
                ('reply_state', models.CharField(blank=True, help_text='The verdict and place the reply is about.', max_length=700)),
                ('resolve_wanted', models.BooleanField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['pull_request_id', 'root_comment_id'],
            },
        ),
        migrations.CreateModel(
            name='ThreadSettings',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('publish_verdicts', models.BooleanField(default=False, help_text="Reply on each triaged thread with its finding's verdict after each verification.")),
                ('resolve_when_verified', models.BooleanField(default=False, help_text='Resolve a thread once its finding is verified fixed, not only when marked fixed.')),
            ],
            options={
                'verbose_name_plural': 'thread settings',
            },
        ),
        migrations.CreateModel(
            name='ThreadSync',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('never', 'Not read yet'), ('ok', 'Read'), ('failed', 'Reading failed')], default='never', max_length=10)),
                ('message', models.TextField(blank=True, help_text="The forge's own message, when reading failed.")),
                ('response_status', models.PositiveIntegerField(blank=True, null=True)),
                ('synced_at', models.DateTimeField(blank=True, help_text='When reading last succeeded.', null=True)),
                ('tried_at', models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.RemoveConstraint(
            model_name='githubcall',
            name='github_call_kind_valid',
        ),
        migrations.AlterField(
            model_name='githubcall',
            name='kind',
            field=models.CharField(choices=[('check_run', 'Check run'), ('commit_status', 'Commit status'), ('comment', 'Pull request comment'), ('report', 'Report to prepare'), ('issue', 'Follow-up issue'), ('thread_reply', 'Review thread reply'), ('thread_resolve', 'Review thread resolution')], max_length=15),
        ),
        migrations.AddField(
            model_name='reviewthread',
            name='finding',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='review_threads', to='findings.finding'),
        ),
        migrations.AddField(
            model_name='reviewthread',
            name='pull_request',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='review_threads', to='reviews.pullrequest'),
        ),
        migrations.AddField(
            model_name='reviewthread',
            name='triaged_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='reviewcomment',
            name='thread',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='comments', to='reporting.reviewthread'),
        ),
        migrations.AddField(
            model_name='githubcall',
            name='review_thread',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='github_calls', to='reporting.reviewthread'),
        ),
        migrations.AddConstraint(
            model_name='githubcall',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['check_run', 'commit_status', 'comment', 'report', 'issue', 'thread_reply', 'thread_resolve'])), name='github_call_kind_valid'),
        ),
        migrations.AddField(
            model_name='threadsettings',
            name='repository',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='thread_settings', to='reviews.repository'),
        ),
        migrations.AddField(
            model_name='threadsync',
            name='pull_request',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='thread_sync', to='reviews.pullrequest'),
        ),
        migrations.AddConstraint(
            model_name='reviewthread',
            constraint=models.UniqueConstraint(fields=('pull_request', 'root_comment_id'), name='review_thread_once'),
        ),
        migrations.AddConstraint(
            model_name='reviewthread',
            constraint=models.CheckConstraint(condition=models.Q(('state__in', ['new', 'finding', 'attached', 'not_a_finding'])), name='review_thread_state_valid'),
        ),
        migrations.AddConstraint(
            model_name='reviewthread',
            constraint=models.CheckConstraint(condition=models.Q(('finding__isnull', False), models.Q(('state__in', ['finding', 'attached']), _negated=True), _connector='OR'), name='review_thread_triaged_has_finding'),
        ),
    ]
