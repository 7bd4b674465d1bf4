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


def test_the_forge_button_and_its_note_are_there_only_when_a_forge_is_configured(client, settings):
    page = client.get(reverse("account_login")).content.decode()
    assert "Sign in with GitHub" in page and "Sign in with your forge account" in page
    settings.SOCIALACCOUNT_PROVIDERS = {}
    page = client.get(reverse("account_login")).content.decode()
    assert "Sign in with" not in page and "forge account" not in page
    assert "Ask an admin of this Recheck for an account" in page
    assert f'href="{reverse("findings:index")}"' in page.split('class="account-back"', 1)[1]


def test_one_word_for_signing_in_on_every_page_that_speaks_of_it(client, settings):
    settings.RECHECK_PUBLIC_READ = True
    for url in ("/", reverse("account_login"), reverse("account_logout")):
        html = client.get(url, follow=True).content.decode()
        assert "Log in" not in html and "Log out" not in html and "logged in" not in html
        assert "Sign in" in html


def test_a_signed_in_user_who_may_not_enter_the_admin_is_told_why(client):
    client.force_login(UserFactory(username="mona", groups=["Maintainer"]))
    response = client.get("/admin/", follow=True)
    assert response.status_code == 403
    page = response.content.decode()
    assert "You are signed in as <strong>mona</strong>, who may not enter the admin" in page
    assert 'name="password"' not in page  # not a sign-in form that would only send them back
    assert 'action="/accounts/logout/"' in page


def test_the_admin_sends_others_to_the_one_sign_in_page(client):
    response = client.get("/admin/", follow=True)
    assert response.redirect_chain[-1][0] == f"{reverse('account_login')}?next=%2Fadmin%2F"
    staff = UserFactory(username="sam", is_staff=True, is_superuser=True)
    client.force_login(staff)
    assert client.get("/admin/login/?next=/admin/").status_code == 302
