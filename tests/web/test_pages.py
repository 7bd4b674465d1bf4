"""What the three companion pages and a finding's page show, for a PR with blockers in both groups,
cleanups, three pinned commits and verifications at two of them."""
import re

import pytest
from django.urls import reverse

from findings.models import Finding, FindingEvent, Verification, VerificationRun
from findings.services.resolution import finding_resolve
from tests.factories import EvidenceFactory, FindingFactory, reviewed_pull_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return reviewed_pull_request(blockers=6, cleanups=2)


def page(client, url) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_overview_asks_its_question_and_computes_the_status(client, data):
    pr = data.pull_request
    html = page(client, pr.get_absolute_url())
    short = data.latest_commit.short_sha

    assert "<h1>What does #4108 change?</h1>" in html
    assert "The Energon SFT loader handled <strong>one</strong> family" in html
    assert "Adds a second family for Nemotron models" in html
    assert (
        f"Open — none of the six blockers are fixed. All re-checked against {short} after the rebase; "
        "all still present. Two cleanups can land afterwards."
    ) in html
    assert "Each finding has its own review comment" in html


def test_the_status_line_follows_fixes_and_verdicts(client, data):
    rebased = data.latest_commit
    Verification.objects.filter(finding=data.blockers[1], commit=rebased).update(verdict="likely_fixed")
    Verification.objects.filter(finding=data.blockers[2], commit=rebased).update(verdict="partly_fixed")
    # Its evidence still holds at the rebase: marked fixed anyway, as a maintainer may with a note.
    finding_resolve(finding=data.blockers[3], status="fixed", actor=None, source="command", commit=rebased,
                    still_holds_confirmed=True, note="Fixed in a way the evidence cannot see.")

    html = page(client, data.pull_request.get_absolute_url())

    assert (
        f"Open — five of six blockers are still open; one fixed. All re-checked against {rebased.short_sha} "
        "after the rebase: three still present, one likely fixed and one partly fixed."
    ) in html


def test_the_pinned_commits_form_a_timeline_with_roles_links_and_verification(client, data):
    html = page(client, data.pull_request.get_absolute_url())
    base, reviewed, rebased = (pin.commit for pin in data.pins)
    timeline_html = html.split('class="timeline"', 1)[1].split("</ol>", 1)[0]

    positions = [
        timeline_html.index(f'href="https://github.com/acme/rl/commit/{commit.sha}"')
        for commit in (base, reviewed, rebased)
    ]
    assert positions == sorted(positions)
    timeline = text_of(timeline_html)
    assert re.search(rf"{base.short_sha} Base Merge main The base commit\. Pinned .* not verified yet", timeline)
    assert re.search(rf"{rebased.short_sha} Rebased Latest verified Rebase on main", timeline)
    assert timeline.count("verified: eight still present") == 2


def test_the_three_pages_link_to_each_other(client, data):
    pr = data.pull_request
    for url in (pr.get_absolute_url(), pr.get_absolute_url() + "blockers/", pr.get_absolute_url() + "cleanups/"):
        nav = page(client, url).split('class="companion-nav"', 1)[1].split("</nav>", 1)[0]
        assert re.search(r'href="/acme/rl/pull/4108/"[^>]*>What it changes</a>', nav)
        assert re.search(r'href="/acme/rl/pull/4108/blockers/"[^>]*>What blocks the merge', nav)
        assert re.search(r'href="/acme/rl/pull/4108/cleanups/"[^>]*>What can land afterwards', nav)
        assert nav.count('aria-current="page"') == 1


def test_blockers_are_numbered_and_grouped_ci_first(client, data):
    html = page(client, data.pull_request.get_absolute_url() + "blockers/")

    assert "<h1>What has to be fixed before #4108 can merge?</h1>" in html
    assert "The review recorded eight findings. Two are cleanups that can land afterwards." in html
    assert "three that a CI job catches, and three that no job checks at all" in html
    ci, nothing = html.index("Caught by CI"), html.index("Nothing checks these")
    anchors = [html.index(f'id="finding-{number}"') for number in range(1, 7)]
    assert ci < anchors[0] < anchors[1] < anchors[2] < nothing < anchors[3] < anchors[4] < anchors[5]
    assert 'href="#finding-3" title="Link to this finding">3</a>' in html
    assert 'id="finding-7"' not in html  # a cleanup


def test_a_blocker_shows_its_write_up_evidence_fix_comment_and_verdict(client, data):
    html = page(client, data.pull_request.get_absolute_url() + "blockers/")
    first = html.split('id="finding-1"', 1)[1].split("</article>", 1)[0]
    reviewed, rebased = data.pins[1].commit, data.latest_commit

    assert "The Megatron-Bridge pin points off the main branch" in first
    assert "Summary of the megatron-bridge pin" in first
    assert "This PR sets it to <code>0</code>" in first
    assert "Set it to <strong>100</strong> and restore the comment." in first
    assert 'href="https://github.com/acme/rl/pull/4108#discussion_r1001"' in first
    assert "Review comment — nemo_rl/data/module_1.py:251" in first
    assert "Still present" in first and f"at {rebased.short_sha}" in first
    assert "status-open" in first and ">Open<" in first
    # The snippet: a permalink at the commit it was recorded at, its real line numbers, highlighted.
    assert f'href="https://github.com/acme/rl/blob/{reviewed.sha}/nemo_rl/data/module_1.py#L259-L262"' in first
    numbers = first.split('class="linenos"', 1)[1].split("</td>", 1)[0]
    assert re.findall(r">(\d+)<", numbers) == ["259", "260", "261", "262"]
    assert '<span class="k">def</span>' in first
    # Where it is now: moved down the file at the rebased commit.
    assert "Moved" in first
    assert f'href="https://github.com/acme/rl/blob/{rebased.sha}/nemo_rl/data/module_1.py#L301-L304"' in first
    # Pattern, gitlink and note, in words.
    assert "contains a match for <code class=\"regex\">failure_tolerance\\s*=\\s*0</code>" in first
    assert "is pinned at <code>" in first and "Gone" in first and "no longer found at" in first
    assert "CI&#x27;s submodule <em>fast-forward</em> job refuses it." in first or (
        "CI's submodule <em>fast-forward</em> job refuses it." in first
    )
    assert 'href="/acme/rl/pull/4108/findings/1/"' in first


def test_a_resolved_blocker_says_how_when_and_by_whom(client, data, staff_maintainer):
    finding_resolve(
        finding=data.blockers[3], status="fixed", actor=staff_maintainer, source="admin",
        commit=data.latest_commit, note="Tolerance back to 100.", still_holds_confirmed=True,
    )
    html = page(client, data.pull_request.get_absolute_url() + "blockers/")
    section = text_of(html.split('id="finding-4"', 1)[1].split("</article>", 1)[0])

    # Fixed although its evidence still held there: the page says it was fixed anyway.
    assert f"Fixed anyway in {data.latest_commit.short_sha} by maintainer on" in section
    assert "Tolerance back to 100." in section
    assert "status-fixed" in html.split('id="finding-4"', 1)[1].split("</article>", 1)[0]


def test_the_cleanups_page_lists_the_cleanups_only(client, data):
    html = page(client, data.pull_request.get_absolute_url() + "cleanups/")

    assert "<h1>What can land after #4108 has merged?</h1>" in html
    assert 'id="finding-7"' in html and 'id="finding-8"' in html
    assert 'id="finding-1"' not in html
    assert "Two cookers share a copy-pasted media loader" in html


def test_without_cleanups_the_page_says_so_plainly(client):
    data = reviewed_pull_request(blockers=2, cleanups=0)
    html = page(client, data.pull_request.get_absolute_url() + "cleanups/")

    assert "No cleanups: the review recorded nothing that can wait until after the merge." in html
    assert 'class="finding ' not in html


def test_without_verifications_the_pages_say_nothing_is_verified(client):
    finding = FindingFactory(kind="blocker")
    html = page(client, finding.pull_request.get_absolute_url())

    assert "Open — its one blocker is not fixed. Not verified against any pinned commit yet." in html
    assert "not verified against any pinned commit yet" in html


def test_markdown_in_a_finding_cannot_run_script_or_javascript_links(client, data):
    Finding.objects.filter(pk=data.blockers[0].pk).update(
        body="<script>alert('body')</script> [click](javascript:alert(1))",
        fix='<img src=x onerror="alert(2)"> [ok](https://example.com)',
    )
    html = page(client, data.pull_request.get_absolute_url() + "blockers/")

    assert "<script>alert" not in html
    assert "javascript:" not in html.lower().replace("[click](javascript:alert(1))", "")
    assert 'href="javascript' not in html.lower()
    assert "<img" not in html  # shown as text: &lt;img src=x onerror=...&gt;
    assert '<a href="https://example.com" rel="noopener noreferrer">ok</a>' in html


def test_the_finding_page_shows_a_matrix_of_evidence_by_pinned_commit(client, data):
    html = page(client, data.pull_request.get_absolute_url() + "findings/1/")
    base, reviewed, rebased = (pin.commit for pin in data.pins)
    matrix = html.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    head, body = matrix.split("<tbody>", 1)

    assert [head.index(commit.short_sha) for commit in (base, reviewed, rebased)] == sorted(
        head.index(commit.short_sha) for commit in (base, reviewed, rebased)
    )
    assert re.findall(r"<span class=\"matrix-role\">(\w+)</span>", head) == ["Base", "Reviewed", "Rebased"]
    rows = body.split("</tr>")[:4]
    snippet_row = text_of(rows[0])
    assert re.search(r"not verified holds moved to nemo_rl/data/module_1\.py:301–304", snippet_row)
    assert "in nemo_rl/data/generic_sft.py" in text_of(rows[1])  # a pattern holds in a file, it does not move
    assert text_of(rows[2]).strip().endswith("not verified not verified gone")
    assert "not checkable" in text_of(rows[3])
    verdicts = text_of(body.split("<tfoot>", 1)[1])
    assert re.search(r"Verdict Not verified Still present .* Still present", verdicts)


def test_the_finding_page_shows_its_status_history(client, data, staff_maintainer):
    finding = data.blockers[0]
    finding_resolve(finding=finding, status="dismissed", actor=staff_maintainer, source="admin", note="Out of scope.")
    finding_resolve(finding=finding, status="open", actor=staff_maintainer, source="admin")
    html = page(client, data.pull_request.get_absolute_url() + "findings/1/")
    history = text_of(html.split('class="history"', 1)[1].split("</ol>", 1)[0])

    assert FindingEvent.objects.filter(finding=finding).count() == 2
    assert re.search(r"Open → Dismissed by maintainer \(admin\) ?: Out of scope\..*Dismissed → Open by maintainer", history)


def test_an_active_run_shows_its_progress_and_the_json_endpoint_reports_it(client, data):
    pr = data.pull_request
    VerificationRun.objects.create(pull_request=pr, status="running", done=3, total=8)

    html = page(client, pr.get_absolute_url() + "blockers/")
    assert '<progress max="8" value="3">' in html
    assert "3 of 8" in html and 'data-run-url="/acme/rl/pull/4108/runs/latest.json"' in html

    run = client.get(reverse("findings:latest_run", args=["acme", "rl", 4108])).json()["run"]
    assert (run["status"], run["done"], run["total"], run["percent"], run["is_active"]) == ("running", 3, 8, 37, True)


def test_without_an_active_run_there_is_no_progress_bar(client, data):
    VerificationRun.objects.create(pull_request=data.pull_request, status="done", done=8, total=8)
    html = page(client, data.pull_request.get_absolute_url())

    assert "<progress" not in html and "run-progress.js" not in html
    assert client.get(data.pull_request.get_absolute_url() + "runs/latest.json").json()["run"]["is_active"] is False


def test_the_index_lists_pull_requests_with_counts_and_the_last_verified_commit(client, data):
    finding_resolve(finding=data.blockers[0], status="fixed", actor=None, source="command", commit=data.latest_commit,
                    still_holds_confirmed=True, note="Fixed in a way the evidence cannot see.")
    html = page(client, "/")
    row = text_of(html.split('class="pull-requests"', 1)[1].split("</table>", 1)[0])

    assert "#4108 Nemotron multimodal SFT" in row
    # The chips count the open findings, as the columns do: the one fixed is in neither.
    assert re.search(rf"5 2 {data.latest_commit.short_sha} rebased 7 still present", row)


def test_the_index_searches_findings_by_text_and_filters(client, data):
    Verification.objects.filter(finding=data.blockers[4], commit=data.latest_commit).update(verdict="likely_fixed")

    audio = text_of(page(client, "/?q=audio"))
    assert "1 finding found" in audio
    assert "An omni run trains with no audio" in audio

    by_path = text_of(page(client, "/?q=module_5.py"))
    assert "1 finding found" in by_path and "An omni run trains with no audio" in by_path

    fixed = page(client, "/?verdict=likely_fixed")
    assert "1 finding found" in text_of(fixed)
    assert 'href="/acme/rl/pull/4108/findings/5/"' in fixed

    cleanups = text_of(page(client, "/?kind=cleanup&repository=acme/rl"))
    assert "2 findings found" in cleanups

    nothing = text_of(page(client, "/?q=audio&status=fixed"))
    assert "0 findings found" in nothing and "No finding matches" in nothing


def test_the_index_search_finds_findings_never_verified(client, data):
    unverified = FindingFactory(pull_request=data.pull_request, number=99, title="Unverified thing")
    html = page(client, "/?verdict=unverified")

    assert "1 finding found" in text_of(html)
    assert unverified.get_absolute_url() in html


def test_a_snippet_not_read_yet_says_when_it_will_be(client):
    evidence = EvidenceFactory(text="", path="generic_sft.py", start_line=259, end_line=259)
    pull_request = evidence.finding.pull_request
    page = client.get(f"{pull_request.get_absolute_url()}blockers/").content.decode()
    # What was recorded, in one line, and when its code will be read: not an empty box.
    assert "What the review recorded at" in page and evidence.commit.short_sha in page
    assert "read from the repository at the first verification" in page
    assert "generic_sft.py:259" in page and "evidence-pending" not in page


def test_only_pages_with_a_diagram_load_the_local_mermaid(client):
    from findings.models import Finding
    from tests.factories import reviewed_pull_request

    data = reviewed_pull_request(blockers=2, cleanups=1)
    Finding.objects.filter(pull_request=data.pull_request, number=2).update(fix="```mermaid\ngraph LR\nA-->B\n```\n")
    base = data.pull_request.get_absolute_url()
    # The drawing script, naming the module build it imports only once it finds a diagram.
    script = ('<script src="/static/findings/mermaid-render.js" '
              'data-mermaid="/static/findings/vendor/mermaid/esm/mermaid.esm.min.mjs" defer></script>')

    assert script in client.get(base + "blockers/").content.decode()
    assert script in client.get(base + "findings/2/").content.decode()
    for url in (base, base + "cleanups/", base + "findings/1/"):
        assert "mermaid" not in client.get(url).content.decode().split("<footer")[-1]
