"""The API's URLs. Collections and objects end with a slash; actions (gate, verify, resolve,
import, the webhook) do not. A pull request is addressed by id or as on the forge, by owner/name
and number."""
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from api import webhooks
from api.views import (
    audit,
    changes,
    events,
    exports,
    findings,
    gate,
    navigation,
    outgoing_webhooks,
    policy,
    pull_requests,
    reports,
    repositories,
    review_imports,
    tags,
    threads,
    verifications,
)
from api.views.annotations import PullRequestAnnotations
from api.views.new_failures import PullRequestNewFailures
from reviews.converters import REPOSITORY
from api.views.follow_ups import RepositoryFollowUpList

app_name = "api"

PULL = f"repos/{REPOSITORY}/pulls/<int:number>"

urlpatterns = [
    path("", navigation.ApiRoot.as_view(), name="root"),
    path("repos/", repositories.RepositoryList.as_view(), name="repository-list"),
    path(f"repos/{REPOSITORY}/pulls/", pull_requests.RepositoryPullRequestList.as_view(),
         name="repository-pulls"),
    path(f"repos/{REPOSITORY}/figures/", repositories.RepositoryFigures.as_view(), name="repository-figures"),
    path(f"repos/{REPOSITORY}/files/<path:path>", repositories.RepositoryFile.as_view(),
         name="repository-file"),
    path(f"repos/{REPOSITORY}/publishing", repositories.RepositoryPublishing.as_view(),
         name="repository-publishing"),
    path(f"repos/{REPOSITORY}/thread-settings", threads.RepositoryThreadSettings.as_view(),
         name="repository-thread-settings"),
    path(f"repos/{REPOSITORY}/follow-ups/", RepositoryFollowUpList.as_view(), name="repository-follow-ups"),
    path(f"repos/{REPOSITORY}/policy", policy.RepositoryPolicyView.as_view(), name="repository-policy"),
    # After the routes that go on from a repository's slug: `repos/group/sub/project/figures/` is
    # the figures of group/sub/project, not a project named figures.
    path(f"repos/{REPOSITORY}/commits/<str:sha>/reports/", reports.CommitReports.as_view(), name="commit-reports"),
    path(f"repos/{REPOSITORY}/webhooks/", outgoing_webhooks.RepositoryWebhooks.as_view(), name="repository-webhooks"),
    path(f"repos/{REPOSITORY}/webhooks/<int:endpoint>", outgoing_webhooks.RepositoryWebhook.as_view(),
         name="repository-webhook"),
    path(f"repos/{REPOSITORY}/webhooks/<int:endpoint>/secret", outgoing_webhooks.RepositoryWebhookSecret.as_view(),
         name="repository-webhook-secret"),
    path(f"repos/{REPOSITORY}/webhooks/<int:endpoint>/messages/", outgoing_webhooks.RepositoryWebhookMessages.as_view(),
         name="repository-webhook-messages"),
    path(f"repos/{REPOSITORY}/webhooks/<int:endpoint>/messages/<int:message>/resend",
         outgoing_webhooks.RepositoryWebhookResend.as_view(), name="repository-webhook-resend"),
    path(f"repos/{REPOSITORY}/events/", events.RepositoryEvents.as_view(), name="repository-events"),
    path(f"repos/{REPOSITORY}/", repositories.RepositoryDetail.as_view(), name="repository-detail"),
    path(f"{PULL}/", pull_requests.PullRequestByNumber.as_view(), name="pull-request-by-number"),
    path(f"{PULL}/events/", events.PullRequestEvents.as_view(), name="pull-request-events"),
    path(f"{PULL}/gate", gate.PullRequestGate.as_view(), name="pull-request-gate"),
    path(f"{PULL}/overrides/", policy.PullRequestOverrides.as_view(), name="pull-request-overrides"),
    path(f"{PULL}/overrides/<int:id>/revoke", policy.PullRequestOverrideRevoke.as_view(),
         name="pull-request-override-revoke"),
    path(f"{PULL}/verify", verifications.PullRequestVerify.as_view(), name="pull-request-verify"),
    path(f"{PULL}/annotations", PullRequestAnnotations.as_view(), name="pull-request-annotations"),
    path(f"{PULL}/export", exports.PullRequestExport.as_view(), name="pull-request-export"),
    path(f"{PULL}/threads/", threads.PullRequestThreads.as_view(), name="pull-request-threads"),
    path(f"{PULL}/threads/<int:thread_id>/triage", threads.PullRequestThreadTriage.as_view(),
         name="pull-request-thread-triage"),
    path(f"{PULL}/changes", changes.PullRequestChanges.as_view(), name="pull-request-changes"),
    path(f"{PULL}/new-failures/", PullRequestNewFailures.as_view(), name="pull-request-new-failures"),
    path("pulls/", pull_requests.PullRequestList.as_view(), name="pull-request-list"),
    path("pulls/<int:pk>/", pull_requests.PullRequestDetail.as_view(), name="pull-request-detail"),
    path("findings/", findings.FindingList.as_view(), name="finding-list"),
    path("findings/<int:pk>/", findings.FindingDetail.as_view(), name="finding-detail"),
    path("findings/<int:pk>/history/", findings.FindingHistory.as_view(), name="finding-history"),
    path("findings/<int:pk>/resolve", findings.FindingResolve.as_view(), name="finding-resolve"),
    path("findings/<int:pk>/tags", findings.FindingTags.as_view(), name="finding-tags"),
    path("findings/<int:pk>/links", findings.FindingLinks.as_view(), name="finding-links"),
    path("findings/<int:pk>/links/<int:link>", findings.FindingLinkDetail.as_view(), name="finding-link-detail"),
    path("findings/<int:pk>/related/", findings.FindingRelated.as_view(), name="finding-related"),
    path("tags/", tags.TagList.as_view(), name="tag-list"),
    path("tags/<slug:slug>/", tags.TagDetail.as_view(), name="tag-detail"),
    # Any text reaches the service, which refuses a slug it would not record with a 400 that says why.
    path("tags/<str:slug>/description", tags.TagDescription.as_view(), name="tag-description"),
    path("evidence/", findings.EvidenceList.as_view(), name="evidence-list"),
    path("evidence/<int:pk>/", findings.EvidenceDetail.as_view(), name="evidence-detail"),
    path("verifications/", verifications.VerificationList.as_view(), name="verification-list"),
    path("verifications/<int:pk>/", verifications.VerificationDetail.as_view(), name="verification-detail"),
    path("runs/", verifications.VerificationRunList.as_view(), name="run-list"),
    path("runs/<int:pk>/", verifications.VerificationRunDetail.as_view(), name="run-detail"),
    path("reviews/import", review_imports.ReviewImport.as_view(), name="review-import"),
    path("imports/<int:pk>/", review_imports.ImportJobDetail.as_view(), name="import-detail"),
    path("audit/", audit.AuditLog.as_view(), name="audit-log"),
    path("audit/<int:pk>/revert", audit.AuditEntryRevert.as_view(), name="audit-revert"),
    path("hooks/github", webhooks.GitHubWebhook.as_view(), name="github-webhook"),
    path("hooks/gitlab", webhooks.GitLabWebhook.as_view(), name="gitlab-webhook"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    # Last: any other URL under /api/ answers with a JSON 404 rather than the site's HTML one.
    re_path(r"^(?P<path>.*)$", navigation.api_not_found, name="not-found"),
]
