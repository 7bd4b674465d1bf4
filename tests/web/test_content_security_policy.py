"""The Content-Security-Policy on every page: each URL of the site (walked from the URL patterns,
as the persona matrix walks them), each GET operation of the API (from its schema, the browsable
pages included), the admin's pages for every registered model, the sign-in pages and the error
pages all carry the same strict policy. (The pages' scripts under it are the browser tests'.)"""
import re

import pytest
from django.contrib import admin
from django.test import Client, override_settings

from tests.access.persona_world import SITE_WRITES, _fill, _site_url, _world, api_operations, site_routes
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

DIRECTIVES = {
    "default-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
}


def policy_of(response) -> dict[str, list[str]]:
    header = response.get("Content-Security-Policy", "")
    return {name: values for name, *values in (part.split() for part in header.split(";") if part.strip())}


def assert_strict(response, url: str) -> None:
    policy = policy_of(response)
    assert policy, f"{url} ({response.status_code}) has no Content-Security-Policy"
    for name, value in DIRECTIVES.items():
        assert policy.get(name) == [value], (url, name, policy)
    scripts = policy["script-src"]
    assert scripts[0] == "'self'" and all(source.startswith("'nonce-") for source in scripts[1:]), (url, scripts)
    assert policy["form-action"][0] == "'self'", (url, policy)


@pytest.fixture
def staff_client():
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


def test_every_site_page_and_api_read_carries_the_policy(staff_client):
    world = _world(owner_of_import=UserFactory(username="importer"))
    checked = 0
    for route in site_routes():
        if route in SITE_WRITES:
            continue
        # A token the user does not have: its confirmation page is the 404, with the policy too.
        url = _site_url(route, {**world.ids, "token_key": "0000000000000000"})
        assert_strict(staff_client.get(url), url)
        checked += 1
    for method, path in api_operations():
        if method != "get":
            continue
        url = _fill(path, world.ids)
        for accept in ("application/json", "text/html"):  # the JSON and the browsable page
            assert_strict(staff_client.get(url, HTTP_ACCEPT=accept), f"{url} as {accept}")
        checked += 1
    assert checked > 40


def test_the_admin_s_pages_carry_the_policy(staff_client):
    urls = ["/admin/", "/admin/login/"]
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        urls += [base, base + "add/"]
    for url in urls:
        response = staff_client.get(url)
        assert response.status_code in (200, 302, 403), (url, response.status_code)
        assert_strict(response, url)
    assert len(urls) > 10


def test_the_sign_in_pages_the_api_docs_and_the_static_files_answer_with_it_too(client):
    for url in ("/accounts/login/", "/accounts/logout/", "/accounts/signup/", "/accounts/tokens/", "/api/docs/",
                "/api/redoc/", "/api/schema/", "/healthz"):
        assert_strict(client.get(url), url)


def test_an_inline_script_a_page_needs_carries_the_nonce_its_header_names(client):
    response = client.get("/api/docs/")
    [nonce] = [source for source in policy_of(response)["script-src"] if source.startswith("'nonce-")]
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", response.content.decode())
    assert inline and all(f'nonce="{nonce[7:-1]}"' in attributes for attributes in inline)


@override_settings(DEBUG=False)
def test_error_pages_carry_the_policy(client, staff_client):
    assert_strict(client.get("/no/such/page/"), "a 404")
    assert_strict(client.get("/api/no/such/thing/"), "the API's 404")
    # A page a signed-in user may not see: the admin's login answers for a non-staff user.
    other = Client()
    other.force_login(UserFactory(username="plain"))
    assert_strict(other.get("/admin/"), "the admin for a non-staff user")


def test_a_server_error_page_carries_the_policy():
    from django.urls import path

    from recheck import urls as root

    def broken(request):
        raise RuntimeError("boom")

    class Urls:
        urlpatterns = [path("broken/", broken), *root.urlpatterns]
        handler500 = getattr(root, "handler500", "django.views.defaults.server_error")

    with override_settings(ROOT_URLCONF=Urls, DEBUG=False):
        response = Client(raise_request_exception=False).get("/broken/")
    assert response.status_code == 500
    assert_strict(response, "a 500")
