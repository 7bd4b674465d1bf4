import pytest
from django.urls import reverse

from findings.models import Finding, FindingEvent
from reviews.models import Commit
from tests.factories import CommitFactory, EvidenceFactory, FindingFactory, UserFactory, VerificationFactory
from tests.findings.decision_data import fetched_review

pytestmark = pytest.mark.django_db


def resolve_url(status, *findings):
    return reverse("admin:findings_finding_resolve", args=[status]) + "?ids=" + ",".join(str(f.pk) for f in findings)


def test_mark_fixed_from_the_detail_page_asks_for_the_commit_and_records_history(client, staff_maintainer, tmp_path):
    review = fetched_review(tmp_path)
    finding = review.fixed_one
    commit = Commit.objects.get(sha=review.fix)
    client.force_login(staff_maintainer)

    page = client.get(reverse("admin:findings_finding_change", args=[finding.pk]))
    assert resolve_url("fixed", finding) in page.content.decode()

    form = client.get(resolve_url("fixed", finding))
    assert form.status_code == 200 and "Fixed in commit" in form.content.decode()

    response = client.post(
        reverse("admin:findings_finding_resolve", args=["fixed"]),
        {"ids": str(finding.pk), "status": "fixed", "commit": commit.sha[:10], "note": "Restored the comment."},
    )
    assert response.status_code == 302
    finding.refresh_from_db()
    assert (finding.status, finding.resolved_by, finding.resolved_commit) == ("fixed", staff_maintainer, commit)
    event = FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).get()
    assert (event.actor, event.source, event.note, event.to_status) == (
        staff_maintainer, "admin", "Restored the comment.", "fixed"
    )


def test_mark_fixed_without_a_commit_is_refused_with_a_message(client, staff_maintainer):
    finding = FindingFactory()
    client.force_login(staff_maintainer)
    response = client.post(
        reverse("admin:findings_finding_resolve", args=["fixed"]),
        {"ids": str(finding.pk), "status": "fixed", "commit": "", "note": ""},
    )
    assert response.status_code == 200 and "Say which commit fixed it" in response.content.decode()
    assert Finding.objects.get().status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()


def test_a_bad_sha_is_explained_and_nothing_changes(client, staff_maintainer):
    finding = FindingFactory()
    client.force_login(staff_maintainer)
    response = client.post(
        reverse("admin:findings_finding_resolve", args=["fixed"]),
        {"ids": str(finding.pk), "status": "fixed", "commit": "zzzzzzz", "note": ""},
        follow=True,
    )
    assert "hexadecimal" in response.content.decode()
    assert Finding.objects.get().status == "open"


def test_the_list_action_dismisses_several_findings_with_a_reason(client, staff_maintainer):
    first = FindingFactory()
    second = FindingFactory(pull_request=first.pull_request)
    client.force_login(staff_maintainer)
    response = client.post(
        reverse("admin:findings_finding_changelist"),
        {"action": "dismiss", "_selected_action": [first.pk, second.pk]},
    )
    assert response.status_code == 302 and "/resolve/dismissed/" in response["Location"]
    response = client.post(
        response["Location"].split("?")[0],
        {"ids": f"{first.pk},{second.pk}", "status": "dismissed", "note": "Out of scope for this PR."},
    )
    assert response.status_code == 302
    assert set(Finding.objects.values_list("status", flat=True)) == {"dismissed"}
    assert FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS, to_status="dismissed", note="Out of scope for this PR.").count() == 2


def test_reopen_records_a_history_row(client, staff_maintainer, tmp_path):
    review = fetched_review(tmp_path)
    finding = review.fixed_one
    commit = Commit.objects.get(sha=review.fix)
    client.force_login(staff_maintainer)
    client.post(
        reverse("admin:findings_finding_resolve", args=["fixed"]),
        {"ids": str(finding.pk), "status": "fixed", "commit": commit.sha},
    )
    client.post(
        reverse("admin:findings_finding_resolve", args=["open"]),
        {"ids": str(finding.pk), "status": "open", "note": "Regressed."},
    )
    assert list(FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).values_list("to_status", flat=True)) == ["fixed", "open"]
    assert Finding.objects.get(pk=finding.pk).status == "open"


def test_staff_without_change_permission_cannot_resolve(client, staff_reader):
    finding = FindingFactory()
    commit = CommitFactory(repository=finding.pull_request.repository)
    client.force_login(staff_reader)
    assert client.get(resolve_url("fixed", finding)).status_code == 403
    response = client.post(
        reverse("admin:findings_finding_resolve", args=["fixed"]),
        {"ids": str(finding.pk), "status": "fixed", "commit": commit.sha},
    )
    assert response.status_code == 403
    assert Finding.objects.get().status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()


def test_anonymous_users_are_sent_to_log_in(client):
    finding = FindingFactory()
    response = client.get(resolve_url("fixed", finding))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_the_finding_page_shows_evidence_and_verification_results_inline(client, staff_maintainer):
    evidence = EvidenceFactory(path="nemo_rl/data/generic_sft.py", start_line=259, end_line=259)
    verification = VerificationFactory(finding=evidence.finding)
    verification.results.create(evidence=evidence, state="holds", path=evidence.path, start_line=262, end_line=262,
                                detail="moved from line 259 to line 262")
    client.force_login(staff_maintainer)
    page = client.get(reverse("admin:findings_finding_change", args=[evidence.finding.pk])).content.decode()
    assert "nemo_rl/data/generic_sft.py" in page
    assert "moved from line 259 to line 262" in page


@pytest.mark.parametrize(
    "name", ["finding", "evidence", "verification", "findingevent", "verificationrun", "companionpages",
             "webhookdelivery"]
)
def test_every_findings_model_has_a_working_changelist(admin_client, name):
    VerificationFactory()
    assert admin_client.get(reverse(f"admin:findings_{name}_changelist") + "?q=x").status_code == 200


@pytest.mark.parametrize("name", ["repository", "pullrequest", "commit", "pinnedcommit"])
def test_every_reviews_model_has_a_working_changelist(admin_client, name):
    VerificationFactory()
    assert admin_client.get(reverse(f"admin:reviews_{name}_changelist") + "?q=x").status_code == 200


def _pinned(pull_request, role, sha=None):
    from tests.factories import PinnedCommitFactory

    commit = CommitFactory(repository=pull_request.repository, **({"sha": sha} if sha else {}))
    return PinnedCommitFactory(pull_request=pull_request, commit=commit, role=role).commit


def test_the_list_shows_and_filters_by_the_latest_verdict(client, staff_maintainer):
    finding = FindingFactory(title="Tolerance is zero")
    other = FindingFactory(pull_request=finding.pull_request, title="Librosa undeclared")
    reviewed = _pinned(finding.pull_request, "reviewed")
    head = _pinned(finding.pull_request, "head", sha="abcdef0" + "1" * 33)
    VerificationFactory(finding=finding, verdict="present", commit=reviewed)
    VerificationFactory(finding=finding, verdict="likely_fixed", commit=head)
    VerificationFactory(finding=other, verdict="present", commit=head)
    client.force_login(staff_maintainer)
    page = client.get(reverse("admin:findings_finding_changelist")).content.decode()
    assert "Likely fixed at abcdef01" in page
    filtered = client.get(reverse("admin:findings_finding_changelist"), {"latest_verdict": "likely_fixed"})
    assert "Tolerance is zero" in filtered.content.decode()
    assert "Librosa undeclared" not in filtered.content.decode()


def test_the_admin_and_the_site_agree_on_the_latest_verdict_after_an_older_pin_is_re_verified(
    client, staff_maintainer
):
    """The head says likely fixed; re-verifying the reviewed commit afterwards (it still has the
    code) must not turn the admin's latest verdict back to present while the site says likely fixed."""
    from django.utils import timezone

    finding = FindingFactory(title="Tolerance is zero")
    reviewed = _pinned(finding.pull_request, "reviewed")
    head = _pinned(finding.pull_request, "head", sha="abcdef0" + "2" * 33)
    VerificationFactory(finding=finding, verdict="likely_fixed", commit=head, checked_at=timezone.now())
    VerificationFactory(finding=finding, verdict="present", commit=reviewed,
                        checked_at=timezone.now() + timezone.timedelta(minutes=5))
    client.force_login(staff_maintainer)
    admin_page = client.get(reverse("admin:findings_finding_changelist")).content.decode()
    assert "Likely fixed at abcdef02" in admin_page and "Still present at" not in admin_page
    site = client.get("/", {"q": "Tolerance"}).content.decode()
    assert 'class="badge verdict-likely_fixed"' in site and 'class="badge verdict-present"' not in site
    present = client.get(reverse("admin:findings_finding_changelist"), {"latest_verdict": "present"})
    assert "Tolerance is zero" not in present.content.decode()


def test_a_refused_mark_fixed_leaves_no_commit_behind(client, staff_maintainer, tmp_path):
    """The admin and the API both hand the SHA to finding_resolve, which records it only when the
    change is made: an already fixed finding refuses, and the new SHA is not recorded."""
    review = fetched_review(tmp_path)
    finding = review.fixed_one
    client.force_login(staff_maintainer)
    client.post(resolve_url("fixed", finding), {"ids": str(finding.pk), "status": "fixed", "commit": review.fix})
    assert Finding.objects.get(pk=finding.pk).status == "fixed"
    commits_before = Commit.objects.count()

    response = client.post(
        resolve_url("fixed", finding),
        {"ids": str(finding.pk), "status": "fixed", "commit": "abcdef1234567", "note": ""},
        follow=True,
    )
    assert "already fixed" in response.content.decode()
    assert Commit.objects.count() == commits_before
    assert not Commit.objects.filter(sha="abcdef1234567").exists()


# --- The same rules as the site and the API, through the same service ------------------------


def test_the_admin_refuses_an_unknown_sha_as_the_site_does(client, staff_maintainer, tmp_path):
    """`deadbeef` used to be accepted: now the mirror is asked, and nothing is written."""
    review = fetched_review(tmp_path)
    client.force_login(staff_maintainer)
    response = client.post(
        resolve_url("fixed", review.fixed_one),
        {"ids": str(review.fixed_one.pk), "status": "fixed", "commit": "deadbeef", "note": ""},
    )
    assert response.status_code == 200
    assert "No commit deadbeef in acme/loader: check the SHA" in response.content.decode()
    assert review.fixed_one.status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()
    assert not Commit.objects.filter(sha="deadbeef").exists()


def test_the_admin_names_the_candidates_of_an_ambiguous_sha(client, staff_maintainer, tmp_path):
    from reviews.mirrors import repository_fetch

    review = fetched_review(tmp_path)
    first, second = review.repo.colliding_commits()
    review.repo.update_ref("refs/heads/one", first).update_ref("refs/heads/two", second)
    repository_fetch(repository=review.pull_request.repository)
    client.force_login(staff_maintainer)
    page = client.post(
        resolve_url("fixed", review.fixed_one),
        {"ids": str(review.fixed_one.pk), "status": "fixed", "commit": first[:7]},
    ).content.decode()
    assert "is ambiguous in acme/loader" in page and first in page and second in page
    assert review.fixed_one.status == "open"


def test_the_admin_refuses_a_repository_not_fetched_yet(client, staff_maintainer):
    finding = FindingFactory()
    client.force_login(staff_maintainer)
    page = client.post(
        resolve_url("fixed", finding), {"ids": str(finding.pk), "status": "fixed", "commit": "abcdef12"}
    ).content.decode()
    assert "has not been fetched yet" in page and "fetch the repository first" in page
    assert Finding.objects.get().status == "open"


def test_where_the_evidence_still_holds_the_admin_asks_to_mark_fixed_anyway_with_a_note(
    client, staff_maintainer, tmp_path
):
    review = fetched_review(tmp_path)
    finding = review.still_there
    client.force_login(staff_maintainer)
    data = {"ids": str(finding.pk), "status": "fixed", "commit": review.fix[:10]}
    form = client.get(resolve_url("fixed", finding)).content.decode()
    assert 'name="anyway"' not in form

    warned = client.post(resolve_url("fixed", finding), data).content.decode()
    assert "The evidence still holds at this commit: mark fixed anyway?" in warned
    assert f"at <code>{review.fix[:12]}</code> says <strong>still present</strong>" in warned
    assert 'name="anyway"' in warned and "Mark fixed anyway" in warned

    no_note = client.post(resolve_url("fixed", finding), {**data, "anyway": "on"}).content.decode()
    assert "needs a note" in no_note
    assert Finding.objects.get(pk=finding.pk).status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()

    done = client.post(resolve_url("fixed", finding), {**data, "anyway": "on", "note": "Nothing reads the flag."})
    assert done.status_code == 302
    event = FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).get()
    assert (event.to_status, event.commit.sha, event.note) == ("fixed", review.fix, "Nothing reads the flag.")


def test_the_admin_asks_user_may_not_the_change_permission(client, tmp_path):
    """A Reviewer may change findings but not resolve them; a Maintainer without staff-only model
    permissions of their own may, through the role's group."""
    review = fetched_review(tmp_path)
    reviewer = UserFactory(username="rita", is_staff=True, groups=["Reviewer"])
    client.force_login(reviewer)
    response = client.post(
        resolve_url("fixed", review.fixed_one),
        {"ids": str(review.fixed_one.pk), "status": "fixed", "commit": review.fix},
    )
    assert response.status_code == 403 and review.fixed_one.status == "open"
    client.force_login(UserFactory(username="mona", is_staff=True, groups=["Maintainer"]))
    response = client.post(
        resolve_url("fixed", review.fixed_one),
        {"ids": str(review.fixed_one.pk), "status": "fixed", "commit": review.fix},
    )
    assert response.status_code == 302 and review.fixed_one.status == "fixed"


def test_the_history_button_shows_each_status_change(client, staff_maintainer, tmp_path):
    from findings.services.resolution import finding_resolve

    review = fetched_review(tmp_path)
    finding = review.fixed_one
    bot = UserFactory(username="ci-bot", groups=["Maintainer"])
    finding_resolve(finding=finding, status="fixed", actor=staff_maintainer, source="site", commit_sha=review.fix,
                    note="Tolerance back to 100.")
    finding_resolve(finding=finding, status="open", actor=bot, source="api", note="Came back in the rebase.")
    finding_resolve(finding=finding, status="dismissed", actor=staff_maintainer, source="admin", note="Out of scope.")
    client.force_login(staff_maintainer)
    change = client.get(reverse("admin:findings_finding_change", args=[finding.pk])).content.decode()
    history_url = reverse("admin:findings_finding_history", args=[finding.pk])
    assert history_url in change

    page = client.get(history_url).content.decode()
    assert "doesn’t have a change history" not in page
    rows = page.split('class="finding-event"')[1:]
    # The import recorded the finding first; then each status change, oldest first.
    assert len(rows) == 4 and "<strong>Created</strong>" in rows.pop(0)
    assert "maintainer" in rows[0] and "Open → <strong>Fixed</strong>" in rows[0] and review.fix in rows[0]
    assert "Tolerance back to 100." in rows[0] and "Site" in rows[0]
    assert "ci-bot" in rows[1] and "Fixed → <strong>Open</strong>" in rows[1] and "Came back in the rebase." in rows[1]
    assert "Open → <strong>Dismissed</strong>" in rows[2] and "Out of scope." in rows[2] and "Admin" in rows[2]


def test_a_finding_without_status_changes_says_so_on_its_history(client, staff_maintainer):
    finding = FindingFactory()
    client.force_login(staff_maintainer)
    page = client.get(reverse("admin:findings_finding_history", args=[finding.pk])).content.decode()
    assert "No change recorded yet" in page
