from django.urls import path

from findings.site import decision_views, views

app_name = "findings"

PULL_REQUEST = "<str:owner>/<str:name>/pull/<int:number>/"

urlpatterns = [
    path("", views.index, name="index"),
    path("tags/<slug:slug>/", views.tag_page, name="tag"),
    path(PULL_REQUEST, views.pull_request_overview, name="pull_request"),
    path(PULL_REQUEST + "blockers/", views.pull_request_blockers, name="blockers"),
    path(PULL_REQUEST + "cleanups/", views.pull_request_cleanups, name="cleanups"),
    path(PULL_REQUEST + "findings/<int:finding_number>/", views.finding_detail, name="finding"),
    path(PULL_REQUEST + "runs/latest.json", views.latest_run, name="latest_run"),
    path(PULL_REQUEST + "verify/", views.verify_now, name="verify"),
    path(PULL_REQUEST + "companion.zip", views.companion_zip, name="companion_zip"),
    # Deciding on the site: Mark fixed, Dismiss and Reopen, and the "Needs a decision" pages.
    path("decisions/", decision_views.decisions, name="decisions"),
    path(PULL_REQUEST + "findings/<int:finding_number>/decide/", decision_views.finding_decide,
         name="finding_decide"),
    path("<str:owner>/<str:name>/decisions/", decision_views.repository_decisions, name="repository_decisions"),
    # After tags/: a repository owned by "tags" would otherwise take the tag pages.
    path("<str:owner>/<str:name>/", views.repository_page, name="repository"),
    path("<str:owner>/<str:name>/files/<path:path>", views.file_page, name="file"),
]
