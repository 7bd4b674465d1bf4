"""Each call gets a due time (the outbox no longer leans on the task queue to wait), and a report
is one call however many annotations it has (the sender splits them 50 to a request)."""

import django.utils.timezone
from django.db import migrations, models


UNFINISHED = ["pending", "sending"]


def calls_due_and_whole(apps, schema_editor):
    GitHubCall = apps.get_model("reporting", "GitHubCall")
    for call in GitHubCall.objects.filter(status__in=UNFINISHED).iterator():
        call.due_at = call.next_attempt_at or call.created_at
        call.save(update_fields=["due_at"])
    # The later batches of a report not sent yet join its first call, which sends them all.
    for call in GitHubCall.objects.filter(status__in=UNFINISHED, part__gt=1).order_by("id"):
        first = GitHubCall.objects.filter(
            repository_id=call.repository_id, kind=call.kind, sha=call.sha, digest=call.digest, part=1
        ).first()
        if first is not None and first.status in UNFINISHED:
            output = first.body.setdefault("output", {})
            output["annotations"] = output.get("annotations", []) + call.body.get("output", {}).get("annotations", [])
            first.save(update_fields=["body"])
            call.delete()
        else:
            call.status = "failed"
            call.response_message = "Its report's first call did not create the check run; verify again."
            call.save(update_fields=["status", "response_message"])
    if schema_editor.connection.vendor == "postgresql":
        # The rows' deferred foreign-key checks fire now: PostgreSQL refuses to alter a table with
        # checks still pending in the transaction.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        schema_editor.execute("SET CONSTRAINTS ALL DEFERRED")


class Migration(migrations.Migration):

    dependencies = [
        ('reporting', '0001_github_calls'),
    ]

    operations = [
        migrations.AddField(
            model_name='githubcall',
            name='due_at',
            field=models.DateTimeField(default=django.utils.timezone.now, help_text="Not sent before this time: a retry's backoff, GitHub's Retry-After, or a sender's lease."),
        ),
        migrations.RunPython(calls_due_and_whole, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name='githubcall',
            name='github_call_kind_valid',
        ),
        migrations.RemoveConstraint(
            model_name='githubcall',
            name='github_call_part',
        ),
        migrations.RemoveField(
            model_name='githubcall',
            name='next_attempt_at',
        ),
        migrations.RemoveField(
            model_name='githubcall',
            name='part',
        ),
        migrations.RemoveField(
            model_name='githubcall',
            name='parts',
        ),
        migrations.AlterField(
            model_name='githubcall',
            name='kind',
            field=models.CharField(choices=[('check_run', 'Check run'), ('commit_status', 'Commit status'), ('comment', 'Pull request comment'), ('report', 'Report to prepare')], max_length=15),
        ),
        migrations.AddIndex(
            model_name='githubcall',
            index=models.Index(fields=['status', 'due_at'], name='github_call_due'),
        ),
        migrations.AddConstraint(
            model_name='githubcall',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['check_run', 'commit_status', 'comment', 'report'])), name='github_call_kind_valid'),
        ),
    ]
