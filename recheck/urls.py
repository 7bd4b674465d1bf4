from django.contrib import admin
from django.urls import include, path

from recheck.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/", include("findings.api.urls")),
    # Last: the site's <owner>/<name>/ pages would otherwise shadow the fixed prefixes above.
    path("", include("findings.urls")),
]

handler400 = "recheck.errorpages.bad_request"
handler403 = "recheck.errorpages.permission_denied"
handler404 = "recheck.errorpages.page_not_found"
handler500 = "recheck.errorpages.server_error"
