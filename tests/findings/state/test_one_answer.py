"""One answer everywhere: random histories of a review (imports, verifications at new commits
where the evidence moved, was fixed or broke again, CI reports of a check item's check arriving
before or after them, fixed, fixed anyway, dismissed, reopened, evidence edited), and after every
step every interface reports what the pull request's stored state says, and the stored state is
what a fresh derivation makes of the facts.

The interfaces: the three companion pages, each finding's page, the site's search (by verdict and
the flags of every result), the file page, the needs-a-decision page, the admin's changelist and
its filter, the REST API's findings, pull request and gate, the GitHub check's content, and the
SARIF, Markdown and bundle exports, against a real git repository fetched into a mirror.

The same steps, with roles granted and taken away and the repository made private and public,
drive the kept pages (`PagesAsFresh`): for each persona, a page served from the cache or a 304 to
the copy its browser holds says what a render made for it alone says."""
import itertools
import re

import pytest
from django.test import Client, TestCase
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from rest_framework.test import APIClient

from core.errors import RecheckError
from findings.exchange.bundle import bundle_export
from findings.exchange.markdown import pull_request_markdown
from findings.exchange.sarif import pull_request_sarif
from findings.models import Finding, GateOverride
from findings.services.authoring import finding_evidence_set
from findings.services.policy import gate_override_create, gate_override_revoke, repository_policy_update
from findings.services.reports import check_report_record
from findings.services.resolution import finding_resolve
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from findings.state.derivation import derive
from findings.tasks import rederive_report
from findings.state.stored import pull_request_facts, pull_request_state
from presentation.companion import companion_pages_html
from recheck_gate.cli import text_report
from forge.content import ACTION_REQUIRED, FAILURE, SUCCESS, commit_report
from reviews.models import Commit, PullRequest, Repository
from reviews.services import pull_request_pin_commit
from tests import personas
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db

BAD, GOOD = "    tolerance = 0\n", "    tolerance = 100\n"
TITLES = {1: "Tolerance zero never stops", 2: "Debug flag left on", 3: "Loader helper is vague"}


def loader(*, fixed: bool, shift: int) -> str:
    """The file the evidence points at: the bad line at line 10 (+ `shift` when code moved above it)."""
    lines = [f"line {n}\n" for n in range(1, 21)]
    lines[9] = GOOD if fixed else BAD
    return "".join(["# moved\n"] * shift + lines)


def bundle(repo, *, variant: int) -> dict:
    """The review as its bundle states it; `variant` changes a title and finding 3's evidence."""
    return {
        "repository": {"slug": "acme/loader", "clone_url": str(repo.path), "web_url": "https://github.com/acme/loader"},
        "pull_request": {"number": 7, "title": "Loader"},
        "commits": [{"sha": repo.reviewed, "role": "reviewed"}],
        "findings": [
            {"number": 1, "kind": "blocker", "title": TITLES[1], "tags": ["loader"],
             "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 10, "end_line": 10}]},
            {"number": 2, "kind": "blocker", "title": TITLES[2] + (" (again)" if variant else ""),
             "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"},
                          {"kind": "check", "check": "config-lint"}]},
            {"number": 3, "kind": "cleanup", "title": TITLES[3], "tags": ["loader"],
             "evidence": [{"kind": "pattern", "path": "src/*.py", "regex": "tolerance = 0",
                           "expect": "present", "caption": f"variant {variant}"}]},
        ],
    }


# Each example's own number. Not `id(self)`: an example's machine is freed when it ends and the
# next one's often gets its address, so its repository's directory would already exist.
EXAMPLES = itertools.count()


class OneAnswer(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.example = next(EXAMPLES)
        # Each example starts from nothing: the previous example's rows go with their repository.
        Repository.objects.all().delete()
        Commit.objects.all().delete()
        self.repo = GitRepoBuilder(self.tmp / f"repo-{self.example}")
        self.repo.reviewed = self.repo.write("src/loader.py", loader(fixed=False, shift=0)) \
            .write("config.yaml", "debug: true\n").commit("reviewed")
        self.fixed, self.shift, self.config = False, 0, True
        self.head = None

    tmp = None  # the test's temporary directory, set before the machine runs
    actor = None

    @initialize()
    def imported(self):
        review_import(data=bundle(self.repo, variant=0))
        self.pull_request = PullRequest.objects.get(number=7)

    def finding(self, number: int) -> Finding:
        return Finding.objects.select_related("pull_request__repository").get(
            pull_request=self.pull_request, number=number
        )

    @rule(variant=st.sampled_from([0, 1]))
    def import_again(self, variant):
        review_import(data=bundle(self.repo, variant=variant))

    @rule(change=st.sampled_from(["moved", "fixed", "broken again", "config removed", "config back", "same"]))
    def verify_again(self, change):
        self.verify_at_a_new_commit(change=change)

    @rule(change=st.sampled_from(["moved", "fixed", "broken again", "config removed", "config back", "same"]))
    def verify_at_a_new_commit(self, change):
        if change == "moved":
            self.shift += 2
        elif change == "fixed":
            self.fixed = True
        elif change == "broken again":
            self.fixed = False
        elif change == "config removed":
            self.config = False
        elif change == "config back":
            self.config = True
        self.repo.write("src/loader.py", loader(fixed=self.fixed, shift=self.shift))
        if self.config:
            self.repo.write("config.yaml", "debug: true\n")
        elif (self.repo.path / "config.yaml").exists():
            self.repo.delete("config.yaml")
        sha = self.repo.commit(f"push: {change}")
        commit, _ = Commit.objects.get_or_create(repository=self.pull_request.repository, sha=sha,
                                                 defaults={"resolved": True})
        pull_request_pin_commit(pull_request=self.pull_request, commit=commit, role="head")
        pull_request_verify(pull_request=self.pull_request, commit=commit)
        self.head = commit

    @rule(conclusion=st.sampled_from(["failure", "success", "cancelled"]), attempt=st.sampled_from([1, 2]))
    def report_arrives(self, conclusion, attempt):
        # A CI report of the head, before or after its verification: the state follows once a
        # worker has run the re-derivation queued when the report was committed (run here).
        if self.head is not None:
            with TestCase.captureOnCommitCallbacks():
                recorded = check_report_record(repository=self.pull_request.repository, sha=self.head.sha,
                                               check="config-lint", source="upload", conclusion=conclusion,
                                               attempt=attempt)
            rederive_report.apply(args=[recorded.report.pk])

    @rule(number=st.sampled_from([1, 2, 3]))
    def mark_fixed_anyway(self, number):
        self.mark_fixed(number=number, anyway=True)

    @rule(number=st.sampled_from([1, 2, 3]), anyway=st.booleans())
    def mark_fixed(self, number, anyway):
        if self.head is None:
            return
        try:
            finding_resolve(finding=self.finding(number), status="fixed", actor=self.actor, source="site",
                            commit=self.head, note="Fixed in review." if anyway else "",
                            still_holds_confirmed=anyway)
        except RecheckError:
            pass  # already fixed, or its evidence still holds and it was not confirmed

    @rule(number=st.sampled_from([1, 2, 3]))
    def dismiss(self, number):
        try:
            finding_resolve(finding=self.finding(number), status="dismissed", actor=self.actor, source="site",
                            note="Out of scope.")
        except RecheckError:
            pass

    @rule(number=st.sampled_from([1, 2, 3]))
    def reopen(self, number):
        try:
            finding_resolve(finding=self.finding(number), status="open", actor=self.actor, source="site")
        except RecheckError:
            pass

    @rule(block=st.booleans())
    def policy_changed(self, block):
        # The repository's policy: whether possibly regressed blockers block (an operator's change).
        repository_policy_update(repository=self.pull_request.repository, actor=None, possibly_regressed_block=block)

    @rule(reason=st.sampled_from(["urgent_fix", "accepted_risk", "other"]))
    def gate_overridden(self, reason):
        if self.head is None:
            return
        try:
            gate_override_create(pull_request=self.pull_request, sha=self.head.sha, reason=reason,
                                 note="Why: a test." if reason == "other" else "", actor=self.actor)
        except RecheckError:
            pass  # overridden at this head already

    @rule()
    def override_revoked(self):
        override = GateOverride.objects.active().filter(pull_request=self.pull_request).last()
        if override is not None:
            gate_override_revoke(override=override, actor=self.actor)

    @rule(end_line=st.sampled_from([10, 11]))
    def edit_evidence(self, end_line):
        finding = self.finding(1)
        finding_evidence_set(finding=finding, actor=self.actor, items=[
            {"kind": "snippet", "path": "src/loader.py", "start_line": 10, "end_line": end_line,
             "commit": self.repo.reviewed},
        ])

    @invariant()
    def every_interface_reports_the_stored_state(self):
        if not hasattr(self, "pull_request"):
            return
        state = pull_request_state(pull_request_id=self.pull_request.pk)
        fresh = derive(pull_request_facts(self.pull_request.pk))
        assert {**state, "generation": None} == {**fresh, "generation": None}, "stored state is not a fresh derivation"
        check_interfaces(self.pull_request, state)


def expected_of(state: dict) -> dict:
    findings = {item["number"]: item for item in state["findings"].values()}
    return {
        "findings": findings,
        "regressed": {number for number, item in findings.items() if item["possibly_regressed"]},
        "anyway": {number for number, item in findings.items() if item["resolution"] == "fixed_anyway"},
        "needs_decision": {number for number, item in findings.items() if item["needs_decision"]},
        "open_blockers": state["counts"].get("blocker", {}).get("open", 0),
        "open_cleanups": state["counts"].get("cleanup", {}).get("open", 0),
        "gate": state["gates"].get(state["head_sha"]) if state["head_sha"] else None,
    }


def check_interfaces(pull_request: PullRequest, state: dict) -> None:
    expected = expected_of(state)
    api, site, admin = APIClient(), Client(), Client()
    admin.force_login(personas.superuser(username=f"root-{pull_request.generation}-{id(state)}"))

    # The REST API: the findings, the pull request, the gate.
    rows = api.get("/api/findings/", {"pull_request": pull_request.pk, "page_size": 200}).json()["results"]
    assert {row["number"]: (row["status"], row["resolution"], row["verdict"], row["possibly_regressed"])
            for row in rows} == {number: (item["status"], item["resolution"], item["verdict"],
                                          item["possibly_regressed"])
                                 for number, item in expected["findings"].items()}
    detail = api.get(f"/api/pulls/{pull_request.pk}/").json()
    assert (detail["open_blockers"], detail["counts"], detail["latest_verified_commit"]) == (
        expected["open_blockers"], state["counts"], state["latest_sha"]
    )
    gate = expected["gate"]
    answer = api.get("/api/repos/acme/loader/pulls/7/gate").json()
    if gate is None:
        assert "detail" in answer  # no pinned head to default to
    else:
        assert (answer["verified"], answer["mergeable"], answer["reason"], answer["overridden"], answer["policy"]) == (
            gate["verified"], gate["mergeable"], gate["reason"], gate["overridden"], gate["policy"]
        )
        assert [(item["number"], item["verdict"], item["verdict_reason"]) for item in answer["open_blockers"]] == [
            (number, verdict, reason) for _, number, _, verdict, reason in gate["open_blockers"]
        ]
        assert {item["number"] for item in answer["possibly_regressed"]} == {
            number for _, number, *_ in gate["possibly_regressed"]
        }
        assert (answer["open_blockers_count"], answer["possibly_regressed_count"]) == (
            len(gate["open_blockers"]), len(gate["possibly_regressed"])
        )
        # recheck-gate prints what the API answered: the same reason and regressed blockers.
        report = text_report(answer)
        assert report.splitlines()[0] == gate["reason"]
        assert report.count("looks regressed") == len(gate["possibly_regressed"])
        # At the latest verified pin the gate's regressed blockers are the findings' own flags.
        if state["head_sha"] == state["latest_sha"]:
            blockers = {n for n, item in expected["findings"].items() if item["kind"] == "blocker"}
            assert {item["number"] for item in answer["possibly_regressed"]} == expected["regressed"] & blockers

    # The pages: the tab counts, each finding's status, flag and verdict.
    overview = site.get(pull_request.get_absolute_url()).content.decode()
    assert re.findall(r'<span class="count" title="open">(\d+)</span>', overview) == [
        str(expected["open_blockers"]), str(expected["open_cleanups"])
    ]
    for number, item in expected["findings"].items():
        glance = overview.split(f'<span class="glance-number">{number}</span>', 1)[1].split("</li>", 1)[0]
        assert ("Possibly regressed" in glance) == item["possibly_regressed"], (number, glance)
        assert ("Fixed anyway" in glance) == (item["resolution"] == "fixed_anyway"), (number, glance)
        assert f"verdict-{item['verdict'] or 'none'}" in glance, (number, glance)
    # The static render: the same counts and flags in its pages.
    files, _ = companion_pages_html(pull_request=pull_request)
    static = "".join(files.values())
    for html in files.values():
        assert re.findall(r'<span class="count" title="open">(\d+)</span>', html) == [
            str(expected["open_blockers"]), str(expected["open_cleanups"])
        ]
    assert static.count('<p class="resolution resolution-regressed">') == len(expected["regressed"])
    for page in ("blockers/", "cleanups/"):
        html = site.get(pull_request.get_absolute_url() + page).content.decode()
        if page == "blockers/" and gate is not None:
            said = "overridden" if gate["overridden"] else ("may merge" if gate["mergeable"] else "may not merge")
            assert f"<code>{gate['sha'][:8]}</code>: {said}</h2>" in html, said
        assert re.findall(r'<span class="count" title="open">(\d+)</span>', html) == [
            str(expected["open_blockers"]), str(expected["open_cleanups"])
        ], page
    # Each finding's own page: its status, its flag and its verdict beside its title.
    for number, item in expected["findings"].items():
        page = site.get(f"{pull_request.get_absolute_url()}findings/{number}/").content.decode()
        badges = page.split('<p class="badges">', 1)[1].split("</p>", 1)[0]
        assert ("Possibly regressed" in badges) == item["possibly_regressed"], (number, badges)
        assert ("Fixed anyway" in badges) == (item["resolution"] == "fixed_anyway"), (number, badges)
        assert f"verdict-{item['verdict'] or 'none'}" in badges, (number, badges)
    # Search on the site: `verdict:` finds the findings whose verdict the state names, and every
    # result, like the file page's list, wears the state's flags.
    for verdict in {item["verdict"] for item in expected["findings"].values() if item["verdict"]} | {"likely_fixed"}:
        found = results_of(site.get("/", {"q": f"verdict:{verdict} repo:acme/loader"}).content.decode())
        assert set(found) == {n for n, item in expected["findings"].items() if item["verdict"] == verdict}, verdict
        assert_flags(found, expected)
    assert_flags(results_of(site.get("/", {"q": "repo:acme/loader"}).content.decode()), expected, every=True)
    on_file = results_of(site.get("/acme/loader/files/src/loader.py").content.decode())
    assert 1 in on_file  # finding 1's snippet is in src/loader.py
    assert_flags(on_file, expected)
    on_tag = results_of(site.get("/tags/loader/").content.decode())
    assert set(on_tag) == {1, 3}  # the findings the bundle tags
    assert_flags(on_tag, expected)
    decisions = site.get("/decisions/").content.decode()
    assert {n for n in TITLES if f">{title_of(expected, n)}<" in decisions} == expected["needs_decision"]

    # The admin: the list's flag column and its filter.
    flagged = admin.get("/admin/findings/finding/", {"possibly_regressed": "1"}).content.decode()
    assert {n for n in TITLES if title_of(expected, n) in flagged} == expected["regressed"]

    # GitHub: the check run's conclusion and summary, from the gate.
    if gate is not None and state["head_sha"]:
        head = Commit.objects.get(repository=pull_request.repository, sha=state["head_sha"])
        report = commit_report(pull_request=pull_request, commit=head)
        holding = any(verdict in ("present", "partly_fixed") for _, _, _, verdict, *_ in gate["open_blockers"])
        conclusion = FAILURE if holding else (
            ACTION_REQUIRED if gate["open_blockers"] or not gate["verified"]
            else (SUCCESS if gate["mergeable"] else FAILURE)
        )
        if gate["overridden"]:
            conclusion = SUCCESS
        assert report.conclusion == conclusion
        assert report.summary.startswith(gate["reason"])

    # The exports.
    sarif = pull_request_sarif(pull_request=pull_request)["runs"][0]["results"]
    open_numbers = {n for n, item in expected["findings"].items() if item["status"] == "open"}
    assert {int(result["ruleId"].rsplit("/", 1)[1]): result["properties"].get("verdict") for result in sarif} == {
        n: expected["findings"][n]["verdict"] for n in open_numbers
    }
    markdown = pull_request_markdown(pull_request=pull_request)
    assert markdown.count("but its evidence holds again") == len(expected["regressed"])
    assert markdown.count("marked fixed anyway") == len(expected["anyway"])
    exported = {item["number"]: item["status"] for item in bundle_export(pull_request=pull_request)["findings"]}
    assert exported == {n: item["status"] for n, item in expected["findings"].items()}


def results_of(html: str) -> dict[int, str]:
    """A result list's entries by finding number: each one's title line and badges."""
    return {int(part.split("<", 1)[0]): part.split("</li>", 1)[0]
            for part in html.split('<li class="result">')[1:]
            for part in [part.split('<span class="glance-number">', 1)[1]]}


def assert_flags(results: dict[int, str], expected: dict, *, every: bool = False) -> None:
    if every:
        assert set(results) == set(expected["findings"])
    for number, entry in results.items():
        item = expected["findings"][number]
        assert ("Possibly regressed" in entry) == item["possibly_regressed"], (number, entry)
        assert ("Fixed anyway" in entry) == (item["resolution"] == "fixed_anyway"), (number, entry)


def title_of(expected: dict, number: int) -> str:
    return Finding.objects.filter(number=number).values_list("title", flat=True).first() or TITLES[number]


def test_every_interface_gives_the_stored_answer_after_every_step(tmp_path, settings_fixture):
    OneAnswer.tmp = tmp_path
    run_state_machine_as_test(
        OneAnswer,
        settings=settings(max_examples=15, stateful_step_count=10, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]),
    )


@pytest.fixture
def settings_fixture(settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    return settings


def test_a_blocker_fixed_anyway_and_pushed_again_reads_possibly_regressed_everywhere(tmp_path, settings_fixture):
    """The issue's break: fixed anyway at the head while the evidence is present, then a push where
    it still is. The gate said regressed, the API, the admin and the needs-a-decision page did not."""
    OneAnswer.tmp = tmp_path
    machine = OneAnswer()
    machine.imported()
    machine.verify_at_a_new_commit(change="same")
    machine.mark_fixed(number=1, anyway=True)
    state = pull_request_state(pull_request_id=machine.pull_request.pk)
    # Fixed anyway at the head it was decided at: not regressed there, and said to be fixed anyway.
    assert expected_of(state)["regressed"] == set() and expected_of(state)["anyway"] == {1}
    machine.every_interface_reports_the_stored_state()
    machine.verify_at_a_new_commit(change="moved")
    state = pull_request_state(pull_request_id=machine.pull_request.pk)
    assert expected_of(state)["regressed"] == {1} and expected_of(state)["needs_decision"] >= {1}
    machine.every_interface_reports_the_stored_state()


# The pages kept by generation (web.pagecache), for each persona: what is served (a kept page, or a
# 304 to the copy the persona's browser holds) is what a fresh render says after every step. The
# PR's pages and a finding's, its threads and code diff, its repository's pages, a tag's and the
# decisions queue across repositories.
PERSONAS = ("anonymous", "no role", "reader", "reviewer", "maintainer", "superuser")
MEMBERS = ("reader", "reviewer", "maintainer")
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
# The views that keep pages: a fresh render is theirs with nothing kept.
PAGE_MODULES = ("web.views.pages", "web.views.repository_pages", "web.views.follow_ups", "web.views.decisions",
                "web.views.threads", "web.views.code")


def comparable(response) -> tuple[int, str]:
    return response.status_code, CSRF.sub("", response.content.decode())


class PagesAsFresh(OneAnswer):
    """OneAnswer's steps, roles granted or taken away, the repository made private or public, and
    a review thread's and a follow-up's writes; after each, every persona's page is what a render
    made for it alone says."""

    def __init__(self):
        super().__init__()
        from tests.factories import UserFactory

        self.users = {name: UserFactory(username=f"pages-{name}-{self.example}") for name in ("no role", *MEMBERS)}
        self.users["superuser"] = personas.superuser(username=f"pages-root-{self.example}")
        self.clients = {name: Client() for name in PERSONAS}
        for name, client in self.clients.items():
            if name != "anonymous":
                client.force_login(self.users[name])
        self.held = {}  # (persona, url) -> (ETag, what the page said)

    @initialize()
    def imported(self):
        super().imported()
        for name in MEMBERS:
            personas.member_of(self.pull_request.repository, self.users[name], name)

    @rule(persona=st.sampled_from(MEMBERS), role=st.sampled_from(["none", "reader", "reviewer", "maintainer"]))
    def role_changed(self, persona, role):
        from access.models import Membership

        user = self.users[persona]
        if role == "none":
            Membership.objects.filter(user=user).delete()
        else:
            personas.member_of(self.pull_request.repository, user, role)

    @rule(private=st.booleans())
    def visibility_changed(self, private):
        repository = Repository.objects.get(pk=self.pull_request.repository_id)
        repository.visibility = "private" if private else "public"
        repository.save()

    def thread(self):
        from forge.threads.models import ReviewThread

        return ReviewThread.objects.get_or_create(pull_request=self.pull_request, root_comment_id=9001,
                                                  defaults={"path": "src/loader.py", "original_line": 10})[0]

    @rule(resolved=st.booleans())
    def thread_resolved(self, resolved):
        # As the sync writes it: a bulk update, which sends no signal.
        from forge.threads.models import ReviewThread

        ReviewThread.objects.filter(pk=self.thread().pk).update(resolved=resolved)

    @rule(body=st.sampled_from(["Still there?", "Fixed now."]))
    def comment_written(self, body):
        # As a delivery writes it: a comment saved.
        self.thread().comments.update_or_create(github_id=9001, defaults={"author_login": "octocat", "body": body})

    @rule(state=st.sampled_from(["open", "verified_fixed"]))
    def follow_up_written(self, state):
        # As a check on the default branch writes it.
        from findings.models import FollowUp

        FollowUp.objects.update_or_create(finding=self.finding(3), defaults={
            "repository_id": self.pull_request.repository_id, "pull_request": self.pull_request,
            "origin": FollowUp.Origin.OPEN_CLEANUP, "state": state})

    def every_interface_reports_the_stored_state(self):
        pass  # OneAnswer's check; this machine checks the pages

    @invariant()
    def every_page_served_is_what_a_fresh_render_says(self):
        if not hasattr(self, "pull_request"):
            return
        from unittest import mock

        from contextlib import ExitStack

        from web import pagecache

        base = self.pull_request.get_absolute_url()
        repository = f"/{self.pull_request.repository.slug}/"
        urls = (base, base + "blockers/", base + "cleanups/", base + "findings/1/", base + "threads/",
                base + "diff/", repository, repository + "files/src/loader.py", repository + "follow-ups/",
                repository + "decisions/", "/decisions/", "/tags/loader/")
        for url in urls:
            for name, client in self.clients.items():
                held = self.held.get((name, url))
                served = client.get(url, HTTP_IF_NONE_MATCH=held[0]) if held else client.get(url)
                with ExitStack() as rendered_alone:
                    for module in PAGE_MODULES:
                        rendered_alone.enter_context(mock.patch(
                            f"{module}.page_served", lambda request, key, build: pagecache.page_rendered(request, build)))
                    fresh = comparable(client.get(url))
                if served.status_code == 304:
                    assert held[1] == fresh, (name, url, "a 304 kept a copy a fresh render no longer makes")
                    continue
                assert comparable(served) == fresh, (name, url)
                if served.has_header("ETag"):
                    self.held[(name, url)] = (served["ETag"], fresh)
                else:
                    self.held.pop((name, url), None)


def test_every_page_kept_or_revalidated_is_what_a_fresh_render_says_for_each_persona(tmp_path, settings_fixture):
    PagesAsFresh.tmp = tmp_path
    run_state_machine_as_test(
        PagesAsFresh,
        settings=settings(max_examples=6, stateful_step_count=8, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]),
    )
