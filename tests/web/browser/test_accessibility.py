"""axe-core on every page of the site's own, in a real Chromium, as the persona who sees it: no
serious or critical violation. The pages are enumerated from the site's URLconf, so a new page
must be added here (or named as no page: an action, a JSON answer, a download) or this fails.

axe-core is vendored from npm for the tests only (tests/web/browser/vendor/axe-core, never
served) and injected as an init script, which the pages' Content-Security-Policy does not govern."""
import io
from pathlib import Path

import pytest
from django.core.management import call_command

from findings.models import Finding, Tag
from access.models import AuditEntry
from forge.threads.models import ReviewComment, ReviewThread
from tests.factories import UserFactory
from tests.web.browser.test_companion_pages import DESKTOP, PHONE, chromium, signed_in
from web import urls as web_urls

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).with_name("vendor") / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")
# Routes that answer with no page of their own: actions (POST), JSON, a download, a fragment.
NOT_PAGES = {
    "latest_run", "verify", "companion_zip", "markdown_preview", "evidence_check", "evidence_new",
    "github_call_resend", "audit_entry_revert", "threads_sync", "thread_triage",
    "follow_up_decide", "since_last_visit", "pull_request_feed", "repository_feed", "mark_seen", "webhook_change",
    "webhook_resend", "gate_override", "gate_override_revoke", "repository_policy",
}


def pages(sample) -> dict[str, tuple[str, str]]:
    """Route name -> (persona, path) for every page, on the demo's data."""
    base = sample.get_absolute_url()
    head = sample.pins.select_related("commit").filter(role="head").last().commit.sha
    finding = Finding.objects.filter(pull_request=sample).order_by("number").first()
    path = finding.evidence.exclude(path="").first().path
    tag = Tag.objects.filter(findings__pull_request=sample).first() or Tag.objects.first()
    entry = AuditEntry.objects.order_by("pk").first()
    repository = sample.repository
    return {
        "index": ("reader", "/?q=record"),
        "tag": ("reader", f"/tags/{tag.slug}/"),
        "audit_log": ("admin", "/audit/"),
        "audit_entry": ("admin", f"/audit/{entry.pk}/"),
        "pull_request": ("reader", base),
        "blockers": ("maintainer", base + "blockers/"),
        "cleanups": ("reader", base + "cleanups/"),
        "finding": ("maintainer", f"{base}findings/{finding.number}/"),
        "code_tree": ("reviewer", f"{base}code/{head}/"),
        "code_file": ("reviewer", f"{base}code/{head}/{path}"),
        "bundle_import": ("reviewer", "/import/"),
        "finding_new": ("reviewer", f"{base}findings/new/"),
        "finding_edit": ("reviewer", f"{base}findings/{finding.number}/edit/"),
        "decisions": ("maintainer", "/decisions/"),
        "finding_decide": ("maintainer", f"{base}findings/{finding.number}/decide/"),
        "repository_decisions": ("maintainer", f"/{repository.slug}/decisions/"),
        # As its Admin: the merge policy's form is on it.
        "repository": ("admin", f"/{repository.slug}/"),
        "file": ("reader", f"/{repository.slug}/files/{path}"),
        "threads": ("reviewer", base + "threads/"),
        "code_diff": ("reviewer", base + "diff/"),
        "repository_follow_ups": ("maintainer", f"/{repository.slug}/follow-ups/"),
        "timeline": ("reader", base + "timeline/"),
        "repository_timeline": ("reader", f"/{repository.slug}/timeline/"),
        "webhooks": ("admin", f"/{repository.slug}/webhooks/"),
        "notifications": ("reader", "/notifications/"),
        "unsubscribe": ("anonymous", "/notifications/unsubscribe/not-a-signed-token/"),
        # Beyond the findings' URLconf: the 4108 review's pages, the tokens page, sign-in, a 404.
        "4108-blockers": ("reader", "/NVIDIA-NeMo/RL/pull/4108/blockers/"),
        "4108-overview": ("reader", "/NVIDIA-NeMo/RL/pull/4108/"),
        "tokens": ("reviewer", "/accounts/tokens/"),
        "login": ("anonymous", "/accounts/login/"),
        "not-found": ("anonymous", "/no/such/pull/1/"),
    }


def serious_violations(page) -> list[str]:
    results = page.evaluate("async () => await window.axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} — "
        + "; ".join(" ".join(node["target"]) if isinstance(node["target"], list) else str(node["target"])
                    for node in violation["nodes"][:4])
        for violation in results["violations"]
        if violation["impact"] in SERIOUS
    ]


def test_every_own_page_is_free_of_serious_and_critical_axe_violations(live_server, settings, tmp_path):
    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    load = io.StringIO()
    call_command("load_demo", stdout=load)
    from reviews.models import PullRequest

    sample = PullRequest.objects.get(repository__slug="recheck-demo/sample", number=1)
    # A review thread read from GitHub, so the inbox shows its discussion and its triage form.
    thread = ReviewThread.objects.create(pull_request=sample, root_comment_id=9001, path="src/loader.py",
                                         original_line=3, html_url="https://github.com/recheck-demo/sample/pull/1")
    ReviewComment.objects.create(thread=thread, github_id=9001, author_login="alice", body="Is **this** right?")
    routes = pages(sample)
    named = {pattern.name for pattern in web_urls.urlpatterns}
    assert named - NOT_PAGES <= set(routes), f"Pages with no accessibility check: {named - NOT_PAGES - set(routes)}"
    personas = {
        "reader": UserFactory(username="axe-reader", groups=["Reader"]),
        "reviewer": UserFactory(username="axe-reviewer", groups=["Reviewer"]),
        "maintainer": UserFactory(username="axe-maintainer", groups=["Maintainer"]),
        "admin": UserFactory(username="axe-admin", is_staff=True, is_superuser=True),
    }
    found = {}
    with chromium() as browser:
        contexts = {}
        for name, (persona, path) in routes.items():
            if persona not in contexts:
                if persona == "anonymous":
                    contexts[persona] = browser.new_context(viewport=DESKTOP)
                else:
                    contexts[persona] = signed_in(browser, live_server, personas[persona])
                contexts[persona].add_init_script(path=str(AXE))
            page = contexts[persona].new_page()
            for viewport in (DESKTOP, PHONE):
                page.set_viewport_size(viewport)
                page.goto(live_server.url + path)
                page.wait_for_load_state("load")
                if page.locator(".mermaid-diagram").count():
                    page.wait_for_selector("html[data-diagrams=done]", state="attached", timeout=60_000)
                problems = serious_violations(page)
                if problems:
                    found[f"{name} {viewport['width']}px ({persona}, {path})"] = problems
            page.close()
    assert not found, "\n".join(f"{where}:\n  " + "\n  ".join(problems) for where, problems in found.items())
