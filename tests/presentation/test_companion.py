"""The static companion pages: self-contained, linked to each other relatively, stored, written by
the command, zipped for download, and re-rendered by the task."""
import io
import re
import zipfile
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.core.management import CommandError, call_command

from presentation.companion import companion_pages_html, companion_render
from findings.models import CompanionPages, Finding
from presentation.tasks import render_companion_pages
from tests.factories import reviewed_pull_request

pytestmark = pytest.mark.django_db

FILES = ("index.html", "blockers.html", "cleanups.html")


class Page(HTMLParser):
    """The tags, ids and inline styles of an HTML page."""

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.ids: set[str] = set()
        self.styles: list[str] = []
        self._in_style = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if "style" in attributes:
            self.styles.append(attributes["style"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)

    def hrefs(self) -> list[str]:
        return [attributes["href"] for tag, attributes in self.tags if tag == "a" and attributes.get("href")]


@pytest.fixture
def data():
    return reviewed_pull_request(blockers=6, cleanups=2)


@pytest.fixture
def files(data):
    rendered, _ = companion_pages_html(pull_request=data.pull_request)
    return rendered


def test_the_render_loads_nothing_from_anywhere(files):
    for name, html in files.items():
        page = Page(html)
        assert not [tag for tag, _ in page.tags if tag in ("link", "iframe", "object", "embed")], name
        assert not [attrs for tag, attrs in page.tags if tag == "script"], name
        assert not [attrs for tag, attrs in page.tags if tag in ("img", "source", "video", "audio") and attrs.get("src")]
        styles = "\n".join(page.styles)
        assert "url(" not in styles and "@import" not in styles, name
        assert len(styles) > 1000, f"{name} has its stylesheet inlined"
        assert not re.search(r"""\ssrc=["']?https?://""", html), name


def test_links_between_the_pages_are_relative_and_resolve(files):
    pages = {name: Page(html) for name, html in files.items()}
    for name, page in pages.items():
        for href in page.hrefs():
            url = urlsplit(href)
            if url.scheme in ("http", "https"):
                assert url.netloc == "github.com", f"{name} links to {href}"
                continue
            assert not url.scheme and not href.startswith("/"), f"{name} has a site link {href}"
            target = url.path or name
            assert target in FILES, f"{name} links to {href}"
            if url.fragment:
                assert url.fragment in pages[target].ids, f"{name} links to a missing anchor {href}"
    assert "blockers.html#finding-3" in pages["index.html"].hrefs()
    assert "cleanups.html#finding-7" in pages["index.html"].hrefs()
    for page in pages.values():
        assert {"index.html", "blockers.html", "cleanups.html"} <= set(page.hrefs())


def test_the_render_shows_the_same_content_without_the_site_actions(files, data):
    blockers = files["blockers.html"]
    assert "What has to be fixed before #4108 can merge?" in blockers
    assert blockers.index("Caught by CI") < blockers.index('id="finding-3"') < blockers.index("Nothing checks these")
    assert f"https://github.com/acme/rl/blob/{data.pins[1].commit.sha}/nemo_rl/data/module_1.py#L259-L262" in blockers
    assert "none of the six blockers are fixed" in files["index.html"]
    for html in files.values():
        assert "<form" not in html and "csrfmiddlewaretoken" not in html
        assert "/findings/1/" not in html and "companion.zip" not in html
        assert "rendered by <strong>Recheck</strong>" in html


def test_markdown_stays_sanitised_in_the_render(data):
    Finding.objects.filter(pk=data.blockers[0].pk).update(body="<script>alert(1)</script> [x](javascript:alert(2))")
    files, _ = companion_pages_html(pull_request=data.pull_request)
    assert "<script" not in files["blockers.html"]
    assert 'href="javascript' not in files["blockers.html"]


def test_rendering_stores_the_pages_once_at_the_latest_verified_commit(data):
    first = companion_render(pull_request=data.pull_request)
    second = companion_render(pull_request=data.pull_request)

    assert CompanionPages.objects.count() == 1
    assert first.pk == second.pk
    second.refresh_from_db()
    assert second.commit == data.latest_commit
    assert "What does #4108 change?" in second.index_html
    assert "What has to be fixed before #4108 can merge?" in second.blockers_html
    assert "What can land after #4108 has merged?" in second.cleanups_html


def test_the_command_writes_the_three_files(data, tmp_path):
    out = tmp_path / "deep" / "companion"
    stdout = io.StringIO()
    call_command("render_companion", "acme/rl", "4108", "--out", str(out), stdout=stdout)

    assert sorted(path.name for path in out.iterdir()) == sorted(FILES)
    assert "What does #4108 change?" in (out / "index.html").read_text()
    assert 'href="blockers.html#finding-3"' in (out / "index.html").read_text()
    assert "Wrote index.html, blockers.html and cleanups.html" in stdout.getvalue()
    assert CompanionPages.objects.filter(pull_request=data.pull_request).exists()


def test_the_command_names_an_unknown_pull_request(data, tmp_path):
    with pytest.raises(CommandError, match=r"No pull request acme/rl#1 is tracked here.*Known pull requests of acme/rl: #4108"):
        call_command("render_companion", "acme/rl", "1", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="No repository nobody/nothing is recorded"):
        call_command("render_companion", "nobody/nothing", "4108", "--out", str(tmp_path))


def test_the_zip_download_holds_the_stored_pages(client, data):
    pages = companion_render(pull_request=data.pull_request)
    CompanionPages.objects.filter(pk=pages.pk).update(index_html="<p>stored index</p>")

    response = client.get(data.pull_request.get_absolute_url() + "companion.zip")

    assert response["Content-Type"] == "application/zip"
    assert 'filename="acme-rl-4108-companion.zip"' in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert sorted(archive.namelist()) == sorted(f"acme-rl-4108-companion/{name}" for name in FILES)
    assert archive.read("acme-rl-4108-companion/index.html").decode() == "<p>stored index</p>"


def test_the_zip_download_renders_on_demand_when_nothing_is_stored(client, data):
    response = client.get(data.pull_request.get_absolute_url() + "companion.zip")

    archive = zipfile.ZipFile(io.BytesIO(response.content))
    blockers = archive.read("acme-rl-4108-companion/blockers.html").decode()
    assert "What has to be fixed before #4108 can merge?" in blockers and "<style>" in blockers
    assert not CompanionPages.objects.exists()


def test_the_task_renders_and_stores_the_pages(data):
    render_companion_pages(data.pull_request.pk)
    render_companion_pages(data.pull_request.pk)
    assert CompanionPages.objects.get().pull_request == data.pull_request


def test_the_task_shrugs_at_a_pull_request_that_is_gone(db):
    render_companion_pages(987654)
    assert not CompanionPages.objects.exists()


def test_pages_rendered_at_the_current_generation_are_kept_and_a_change_renders_them_again(data):
    first = companion_render(pull_request=data.pull_request)
    assert companion_render(pull_request=data.pull_request).rendered_at == first.rendered_at

    Finding.objects.filter(pk=data.blockers[0].pk).update(title="A title changed in bulk")
    again = companion_render(pull_request=data.pull_request)
    assert again.rendered_at > first.rendered_at and "A title changed in bulk" in again.blockers_html


def test_a_download_never_serves_stored_pages_a_change_has_outdated(client, data):
    companion_render(pull_request=data.pull_request)
    blocker = data.blockers[0]
    blocker.title = "Retitled after the render"
    blocker.save()

    response = client.get(data.pull_request.get_absolute_url() + "companion.zip")

    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert "Retitled after the render" in archive.read("acme-rl-4108-companion/blockers.html").decode()


@pytest.mark.django_db
def test_the_static_render_links_one_shared_copy_of_mermaid_only_where_a_page_has_a_diagram():
    from findings.models import Finding
    from presentation.companion import companion_pages_html, with_scripts
    from tests.factories import reviewed_pull_request

    data = reviewed_pull_request(blockers=2, cleanups=1)
    Finding.objects.filter(pull_request=data.pull_request, number=1).update(body="```mermaid\ngraph LR\nA-->B\n```\n")
    files, _ = companion_pages_html(pull_request=data.pull_request)

    blockers = files["blockers.html"]
    assert '<script src="mermaid.min.js"></script>' in blockers and '<script src="mermaid-render.js"></script>' in blockers
    # Linked, not inlined: the page weighs what its own content does.
    assert len(blockers) < 200_000 and blockers.rstrip().endswith("</html>")
    for name in ("index.html", "cleanups.html"):
        assert "<script" not in files[name]
    shipped = with_scripts(files)
    assert set(shipped) == {"index.html", "blockers.html", "cleanups.html", "mermaid.min.js", "mermaid-render.js"}
    assert len(shipped["mermaid.min.js"]) > 1_000_000 and 'globalThis["mermaid"]' in shipped["mermaid.min.js"]
    assert 'securityLevel: "strict"' in shipped["mermaid-render.js"]
    # Without a diagram on any page, nothing but the pages.
    Finding.objects.filter(pull_request=data.pull_request, number=1).update(body="No diagram.")
    assert set(with_scripts(companion_pages_html(pull_request=data.pull_request)[0])) == {
        "index.html", "blockers.html", "cleanups.html"
    }
