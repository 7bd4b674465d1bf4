"""The admin site: Django's, with its "View on site" shortcut answered by `backoffice.shortcut`.

Django's shortcut (`/admin/r/<content type>/<id>/`) asks only whether the user is staff, then
redirects to the object's page, so a staff user without a role could walk ids and read the names of
private repositories, pull requests, findings and follow-ups from the redirects. Here it asks what
the site asks. Settings install `RecheckAdminConfig` in place of Django's `SimpleAdminConfig`; the
registrations are still found when the admin's URLs are first loaded (`recheck.urls`)."""
from django.contrib import admin
from django.contrib.admin.apps import SimpleAdminConfig
from django.urls import path


class RecheckAdminSite(admin.AdminSite):
    def get_urls(self):
        # Imported here: the site is made when the admin's URLs load, after every app is ready,
        # and the shortcut reads models.
        from backoffice.shortcut import view_on_site

        shortcut = path(
            "r/<path:content_type_id>/<path:object_id>/", self.admin_view(view_on_site), name="view_on_site"
        )
        return [shortcut if getattr(url, "name", None) == "view_on_site" else url for url in super().get_urls()]


class RecheckAdminConfig(SimpleAdminConfig):
    default_site = "backoffice.site.RecheckAdminSite"
