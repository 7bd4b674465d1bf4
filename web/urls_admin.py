"""The admin's sign-in address, answered by the site (recheck.urls puts it before the admin's own)."""
from django.urls import path

from web.views.signin import admin_login

urlpatterns = [path("", admin_login, name="admin_login")]
