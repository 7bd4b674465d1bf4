"""The companion pages of a pull request as self-contained HTML: the live pages' templates
rendered with `static_render`, the stylesheet inlined, links between the three pages relative.
The files open from a disk or a mail attachment with nothing to fetch from elsewhere: a page with a
diagram links one copy of Mermaid (the classic build: modules do not load from a disk) and the
script that draws with it, shipped beside the pages, rather than carrying its 5 MB inline."""
import io
import zipfile

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe

from findings.models import CompanionPages
from presentation.links import PAGES, STATIC_FILES
from presentation.pages import PAGE_TEMPLATES, page_context, pull_request_page
from reviews.models import PullRequest

STYLESHEET = "findings/recheck.css"
MERMAID = "findings/vendor/mermaid/mermaid.min.js"
MERMAID_RENDER = "findings/mermaid-render.js"


# The scripts a page with a diagram links, as files beside the pages: name in the folder -> static file.
STATIC_SCRIPTS = {"mermaid.min.js": MERMAID, "mermaid-render.js": MERMAID_RENDER}


def inline_stylesheet() -> str:
    """The site's stylesheet, to sit inside a <style> element."""
    path = finders.find(STYLESHEET)
    css = open(path, encoding="utf-8").read()
    # Our own file, but a stray "</style" would end the element and let the rest render as HTML.
    return mark_safe(css.replace("</", "<\\/"))


def companion_pages_html(*, pull_request: PullRequest) -> tuple[dict[str, str], object]:
    """File name -> HTML of the three pages, and the commit they were rendered at."""
    page = pull_request_page(pull_request, static=True)
    css = inline_stylesheet()
    files = {}
    for name in PAGES:
        context = page_context(page, current=name)
        context.update(inline_css=css, rendered_at=timezone.now())
        context.update(static_scripts={"mermaid": "mermaid.min.js", "render": "mermaid-render.js"})
        files[STATIC_FILES[name]] = render_to_string(PAGE_TEMPLATES[name], context)
    return files, page.latest_commit


def with_scripts(files: dict[str, str]) -> dict[str, str]:
    """The pages and, when one of them draws a diagram, the one copy of the scripts they link."""
    if not any('src="mermaid.min.js"' in html for html in files.values()):
        return files
    scripts = {}
    for name, static_name in STATIC_SCRIPTS.items():
        with open(finders.find(static_name), encoding="utf-8") as handle:
            scripts[name] = handle.read()
    return {**files, **scripts}


def _current_generation(pull_request: PullRequest) -> int:
    return PullRequest.objects.filter(pk=pull_request.pk).values_list("generation", flat=True).get()


def companion_render(*, pull_request: PullRequest) -> CompanionPages:
    """Render the three pages at the latest verified commit and store them (replacing any before),
    so running it twice leaves one row with the newer pages. Pages rendered at the PR's current
    generation are current (every change the pages show moves it): they are kept, not rendered
    again."""
    # Read before rendering: a change made while the pages render moves the generation past the
    # one stored, so the next render is not skipped.
    generation = _current_generation(pull_request)
    stored = CompanionPages.objects.filter(pull_request=pull_request).first()
    if stored is not None and stored.generation == generation:
        return stored
    files, commit = companion_pages_html(pull_request=pull_request)
    pages, _ = CompanionPages.objects.update_or_create(
        pull_request=pull_request,
        defaults={
            "commit": commit,
            "rendered_at": timezone.now(),
            "generation": generation,
            "index_html": files["index.html"],
            "blockers_html": files["blockers.html"],
            "cleanups_html": files["cleanups.html"],
        },
    )
    return pages


def companion_files(*, pull_request: PullRequest) -> dict[str, str]:
    """The stored render of the three pages while it is current, or a fresh one (not stored)."""
    stored = CompanionPages.objects.filter(pull_request=pull_request).first()
    if stored is not None and stored.generation == _current_generation(pull_request):
        return with_scripts({
            "index.html": stored.index_html,
            "blockers.html": stored.blockers_html,
            "cleanups.html": stored.cleanups_html,
        })
    files, _ = companion_pages_html(pull_request=pull_request)
    return with_scripts(files)


def zip_name(pull_request: PullRequest) -> str:
    return f"{pull_request.repository.slug.replace('/', '-')}-{pull_request.number}-companion"


def companion_zip_bytes(files: dict[str, str], *, folder: str) -> bytes:
    """The pages zipped in memory under one folder, so unpacking does not scatter them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, html in files.items():
            archive.writestr(f"{folder}/{name}", html)
    return buffer.getvalue()
