from django.urls import path

from reviews.converters import REPOSITORY
from web.views import audit as audit_views
from web.views import code as code_views
from web.views import decisions as decision_views
from web.views import editor as editor_views
from web.views import follow_ups as follow_up_views
from web.views import notifications as notification_views
from web.views import pages as views
from web.views import repository_pages
from web.views import policy as policy_views

from web.views import threads as thread_views
from web.views import timeline as timeline_views
from web.views import webhooks as webhook_views

app_name = "findings"

PULL_REQUEST = REPOSITORY + "/pull/<int:number>/"

urlpatterns = [
    path("", views.index, name="index"),
    path("tags/<slug:slug>/", repository_pages.tag_page, name="tag"),
    # What a person is sent, and the one-click unsubscribe their email links to.
    path("notifications/", notification_views.notifications_page, name="notifications"),
    path("notifications/unsubscribe/<str:token>/", notification_views.unsubscribe, name="unsubscribe"),
    # The audit log, for instance admins, and setting a recorded field change back.
    path("audit/", audit_views.audit_log, name="audit_log"),
    path("audit/<int:entry>/", audit_views.audit_entry, name="audit_entry"),
    path("audit/<int:entry>/revert/", audit_views.audit_entry_revert_view, name="audit_entry_revert"),
    path(PULL_REQUEST, views.pull_request_overview, name="pull_request"),
    path(PULL_REQUEST + "blockers/", views.pull_request_blockers, name="blockers"),
    path(PULL_REQUEST + "cleanups/", views.pull_request_cleanups, name="cleanups"),
    path(PULL_REQUEST + "findings/<int:finding_number>/", views.finding_detail, name="finding"),
    path(PULL_REQUEST + "runs/latest.json", views.latest_run, name="latest_run"),
    path(PULL_REQUEST + "verify/", views.verify_now, name="verify"),
    path(PULL_REQUEST + "since.json", timeline_views.since_last_visit, name="since_last_visit"),
    path(PULL_REQUEST + "since/seen/", timeline_views.mark_all_seen, name="mark_seen"),
    path(PULL_REQUEST + "timeline/", timeline_views.pull_request_timeline_page, name="timeline"),
    path(PULL_REQUEST + "timeline/feed.atom", timeline_views.pull_request_feed, name="pull_request_feed"),
    # The merge gate: overriding it at the head, and revoking an override.
    path(PULL_REQUEST + "gate/override/", policy_views.gate_override_now, name="gate_override"),
    path(PULL_REQUEST + "gate/overrides/<int:override_id>/revoke/", policy_views.gate_override_revoke_now,
         name="gate_override_revoke"),
    path(PULL_REQUEST + "companion.zip", views.companion_zip, name="companion_zip"),
    # The PR's GitHub review threads: its inbox, reading them again, triaging one.
    path(PULL_REQUEST + "threads/", thread_views.pull_request_threads_page, name="threads"),
    path(PULL_REQUEST + "threads/sync/", thread_views.threads_sync_now, name="threads_sync"),
    path(PULL_REQUEST + "threads/<int:thread_id>/triage/", thread_views.thread_triage_now, name="thread_triage"),
    # The code browser: the repository at a commit pinned to the PR, and one file there.
    path(PULL_REQUEST + "diff/", code_views.code_diff, name="code_diff"),
    path(PULL_REQUEST + "code/<str:sha>/", code_views.code_tree, name="code_tree"),
    path(PULL_REQUEST + "code/<str:sha>/<path:path>", code_views.code_file, name="code_file"),
    # Writing findings: the editor, checking evidence, the Markdown preview and the bundle page.
    path("preview/", editor_views.markdown_preview, name="markdown_preview"),
    path("import/", editor_views.bundle_import, name="bundle_import"),
    path(PULL_REQUEST + "findings/new/", editor_views.finding_new, name="finding_new"),
    path(PULL_REQUEST + "findings/<int:finding_number>/edit/", editor_views.finding_edit, name="finding_edit"),
    path(PULL_REQUEST + "findings/<int:finding_number>/evidence/new/", editor_views.evidence_new,
         name="evidence_new"),
    path(PULL_REQUEST + "evidence/check/", editor_views.evidence_check, name="evidence_check"),
    # Deciding on the site: Mark fixed, Dismiss and Reopen, and the "Needs a decision" pages.
    path("decisions/", decision_views.decisions, name="decisions"),
    path(PULL_REQUEST + "findings/<int:finding_number>/decide/", decision_views.finding_decide,
         name="finding_decide"),
    path(REPOSITORY + "/decisions/", decision_views.repository_decisions, name="repository_decisions"),
    path(PULL_REQUEST + "findings/<int:finding_number>/follow-up/", follow_up_views.follow_up_decide,
         name="follow_up_decide"),
    # Follow-ups: what merged pull requests left to do, checked on the default branch.
    path(REPOSITORY + "/follow-ups/", follow_up_views.repository_follow_ups_page, name="repository_follow_ups"),
    path(REPOSITORY + "/policy/", policy_views.repository_policy_now, name="repository_policy"),
    # After tags/: a repository owned by "tags" would otherwise take the tag pages.
    path(REPOSITORY + "/webhooks/", webhook_views.webhooks_page, name="webhooks"),
    path(REPOSITORY + "/webhooks/<int:endpoint_id>/", webhook_views.webhook_change, name="webhook_change"),
    path(REPOSITORY + "/webhooks/<int:endpoint_id>/messages/<int:message_id>/resend/", webhook_views.webhook_resend,
         name="webhook_resend"),
    path(REPOSITORY + "/timeline/", timeline_views.repository_timeline_page, name="repository_timeline"),
    path(REPOSITORY + "/timeline/feed.atom", timeline_views.repository_feed, name="repository_feed"),
    path(REPOSITORY + "/", repository_pages.repository_page, name="repository"),
    path(REPOSITORY + "/github-calls/<int:call_id>/resend/", views.github_call_resend_now,
         name="github_call_resend"),
    path(REPOSITORY + "/files/<path:path>", repository_pages.file_page, name="file"),
]

