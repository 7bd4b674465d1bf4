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
