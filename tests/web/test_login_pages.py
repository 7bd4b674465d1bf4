"""Logging in and out in the site's own pages, linked from the header."""
import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_header_links_to_log_in_and_back(client, settings):
    settings.RECHECK_PUBLIC_READ = True
    html = client.get("/").content.decode()
    assert f'href="{reverse("account_login")}?next=/"' in html
    page = client.get(reverse("account_login")).content.decode()
    assert 'class="site-header"' in page and "Sign in" in page and "Django administration" not in page


def test_a_user_logs_in_with_a_password_and_out_with_a_post(settings):
    settings.RECHECK_PUBLIC_READ = True
    UserFactory(username="rita")
    client = Client(enforce_csrf_checks=True)
    login_page = client.get(reverse("account_login"))
    token = login_page.cookies["csrftoken"].value
    response = client.post(
        reverse("account_login"),
        {"login": "rita", "password": "correct horse battery staple", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    home = client.get("/").content.decode()
    assert "rita" in home and "Sign out" in home
    assert client.get(reverse("account_logout")).status_code == 200  # a page that asks, never a GET that logs out
    assert client.post(reverse("account_logout")).status_code == 403  # without the CSRF token
    token = client.cookies["csrftoken"].value
    assert client.post(reverse("account_logout"), {"csrfmiddlewaretoken": token}).status_code == 302
    assert "Sign in" in client.get("/").content.decode()
