from django.contrib import admin
from django.urls import include, path

from recheck.health import healthz, healthz_operations, metrics

# The admin's registrations (backoffice.admin), found here rather than at start-up: a command never
# needs them (settings install the admin's simple config, backoffice.site.RecheckAdminConfig).
admin.autodiscover()

urlpatterns = [
    # One sign-in page for everyone, with allauth's rate limits and the forge's buttons; a signed-in
    # user who may not enter the admin is told why.
    path("admin/login/", include("web.urls_admin")),
    path("admin/", admin.site.urls),
    path("accounts/", include("web.urls_accounts")),
    path("accounts/", include("allauth.urls")),
    path("healthz", healthz, name="healthz"),
    path("healthz/operations", healthz_operations, name="healthz_operations"),
    path("metrics", metrics, name="metrics"),
    path("api/", include("api.urls")),
    # Last: the site's <owner>/<name>/ pages would otherwise shadow the fixed prefixes above.
    path("", include("web.urls")),
]

handler400 = "recheck.errorpages.bad_request"
handler403 = "recheck.errorpages.permission_denied"
handler404 = "recheck.errorpages.page_not_found"
handler500 = "recheck.errorpages.server_error"
