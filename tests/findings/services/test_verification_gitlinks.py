"""Gitlink evidence verified end to end: a superproject and its submodule's repository built in
the test, a review imported through the bundle format, every pinned commit verified through the
service the tasks and commands use, and the stored figures compared with git's own."""
import pytest

from findings.exchange.bundle import bundle_export
from findings.services.review_import import review_import
from findings.models import EvidenceResult
from findings.services.verification.run import pull_request_verify
from reviews.mirrors import repository_mirror_dir
from reviews.models import Commit, PullRequest, Repository
from tests.gitrepo import GitRepoBuilder
from tests.submodules import BridgeHistory, git_answer, pin_submodule

pytestmark = pytest.mark.django_db

PATH = "3rdparty/bridge"


@pytest.fixture
def bridge(tmp_path):
    return BridgeHistory(tmp_path)


@pytest.fixture
def superproject(tmp_path, bridge):
    repo = GitRepoBuilder(tmp_path, "rl")
    repo.write("README.md", "rl\n")
    repo.base = pin_submodule(repo, PATH, bridge.base_pin, url=bridge.url).commit("base: bridge on main")
    repo.pr = pin_submodule(repo, PATH, bridge.pr_pin).commit("repin bridge to its feature branch")
    repo.fixed = pin_submodule(repo, PATH, bridge.head).commit("repin bridge to main")
    return repo


def import_review(superproject, evidence, *, submodule=None):
    for item in evidence:
        item.setdefault("kind", "gitlink")
        item.setdefault("path", PATH)
        if submodule:
            item["submodule"] = submodule
    review_import(
        data={
            "repository": {"slug": "acme/rl", "clone_url": superproject.url},
            "pull_request": {"number": 4108, "title": "Nemotron"},
            "commits": [
                {"sha": superproject.base, "role": "base"},
                {"sha": superproject.pr, "role": "reviewed"},
                {"sha": superproject.fixed, "role": "head"},
            ],
            "findings": [{"number": 1, "kind": "blocker", "title": "Bridge pin off main", "evidence": evidence}],
        }
    )
    return PullRequest.objects.get(number=4108)


def verify_all(pull_request):
    verdicts = {}
    for pin in pull_request.pins.select_related("commit"):
        [verification] = pull_request_verify(pull_request=pull_request, commit=pin.commit)
        verdicts[pin.role] = verification
    return verdicts


def results(pull_request, role, position):
    return EvidenceResult.objects.get(
        verification__commit__pins__role=role, verification__commit__pins__pull_request=pull_request,
        evidence__position=position,
    )


def test_the_stored_figures_equal_gits_at_every_pinned_commit(superproject, bridge):
    pull_request = import_review(superproject, [{"sha": bridge.pr_pin, "expect": "not_fast_forward"}])

    verify_all(pull_request)

    mirror = repository_mirror_dir(Repository.objects.get(clone_url=bridge.url))
    for role in ("base", "reviewed", "head"):
        facts = results(pull_request, role, 0).facts
        pin, base, head = facts["pin"], bridge.base_pin, bridge.head
        assert f"{facts['ahead']}\t{facts['behind']}" == git_answer(
            mirror, "rev-list", "--left-right", "--count", f"{pin}...{head}")[1]
        assert facts["fast_forward"] is (git_answer(mirror, "merge-base", "--is-ancestor", base, pin)[0] == 0)
        assert str(facts["added"]) == git_answer(mirror, "rev-list", "--count", f"{base}..{pin}")[1]
        assert str(facts["dropped"]) == git_answer(mirror, "rev-list", "--count", f"{pin}..{base}")[1]


def test_the_submodule_is_found_from_gitmodules_and_registered_under_its_url(superproject, bridge):
    pull_request = import_review(superproject, [{"sha": bridge.pr_pin, "expect": "off_branch"}])

    verdicts = verify_all(pull_request)

    registered = Repository.objects.exclude(slug="acme/rl").get()
    assert registered.clone_url == bridge.url and registered.fetched_at is not None
    assert {role: v.verdict for role, v in verdicts.items()} == {
        "base": "likely_fixed", "reviewed": "present", "head": "likely_fixed"
    }
    assert results(pull_request, "reviewed", 0).detail.endswith("is not on main: 4 ahead of main, 5 behind")


def test_a_known_repository_with_another_spelling_of_the_url_is_reused(superproject, bridge):
    known = Repository.objects.create(slug="acme/bridge", clone_url=f"file://{bridge.url}/.git/", default_branch="main")
    pull_request = import_review(superproject, [{"sha": bridge.pr_pin, "expect": "off_branch"}])

    verify_all(pull_request)

    assert Repository.objects.count() == 2
    assert results(pull_request, "reviewed", 0).facts["repository"] == known.slug


def test_a_named_submodule_repository_and_branch_come_from_the_bundle(superproject, bridge):
    pull_request = import_review(
        superproject, [{"sha": bridge.pr_pin, "expect": "off_branch", "branch": "feature"}],
        submodule={"slug": "acme/megatron-bridge", "clone_url": bridge.url},
    )

    verdicts = verify_all(pull_request)

    assert verdicts["reviewed"].verdict == "likely_fixed"
    facts = results(pull_request, "reviewed", 0).facts
    assert (facts["repository"], facts["branch"], facts["ahead"]) == ("acme/megatron-bridge", "feature", 0)
    exported = bundle_export(pull_request=pull_request)["findings"][0]["evidence"][0]
    assert (exported["submodule"]["slug"], exported["branch"]) == ("acme/megatron-bridge", "feature")


def test_an_unreachable_submodule_repository_is_an_error_never_fixed(superproject, bridge, tmp_path):
    pull_request = import_review(
        superproject, [{"sha": bridge.pr_pin, "expect": "off_branch"}, {"sha": bridge.pr_pin}],
        submodule={"slug": "acme/gone", "clone_url": str(tmp_path / "nowhere")},
    )

    verdicts = verify_all(pull_request)

    assert {v.verdict for v in verdicts.values()} == {"error"}
    off_branch = results(pull_request, "head", 0)
    assert off_branch.state == "error" and "acme/gone could not be fetched" in off_branch.detail
    # The pin itself is the superproject's to tell: it is still read, and the facts say what is missing.
    pinned = results(pull_request, "reviewed", 1)
    assert pinned.state == "holds" and "could not be fetched" in pinned.facts["problem"]


def test_a_requested_run_checks_every_pinned_commit_against_the_submodules_history(superproject, bridge):
    from findings.services.runs import verification_run_request
    from findings.services.verification.run import verification_run_execute

    pull_request = import_review(superproject, [{"sha": bridge.pr_pin, "expect": "not_fast_forward"}])
    run = verification_run_request(pull_request=pull_request)
    run.refresh_from_db()
    if run.status == "queued":
        verification_run_execute(run=run)

    states = {r.verification.commit.sha: r.state for r in EvidenceResult.objects.select_related("verification__commit")}
    assert states == {superproject.base: "gone", superproject.pr: "holds", superproject.fixed: "gone"}
    assert Commit.objects.filter(repository__slug="acme/rl").count() == 3


def test_without_a_base_pin_the_move_starts_where_the_pr_forks_from_the_default_branch(tmp_path, bridge):
    repo = GitRepoBuilder(tmp_path, "rl2")
    repo.write("README.md", "rl\n")
    pin_submodule(repo, PATH, bridge.base_pin, url=bridge.url).commit("main pins bridge on its main line")
    repo.branch("pr-1").checkout("pr-1")
    pr = pin_submodule(repo, PATH, bridge.pr_pin).commit("repin bridge")
    review_import(
        data={
            "repository": {"slug": "acme/rl", "clone_url": repo.url},
            "pull_request": {"number": 1, "title": "Repin"},
            "commits": [{"sha": pr, "role": "reviewed"}],
            "findings": [{"number": 1, "kind": "blocker", "title": "Not a fast-forward", "evidence": [
                {"kind": "gitlink", "path": PATH, "sha": bridge.pr_pin, "expect": "not_fast_forward"}]}],
        }
    )
    pull_request = PullRequest.objects.get(number=1)

    [verification] = pull_request_verify(pull_request=pull_request, commit=pull_request.pins.get().commit)

    result = verification.results.get()
    assert verification.verdict == "present"
    assert (result.facts["base_pin"], result.facts["added"], result.facts["dropped"]) == (bridge.base_pin, 4, 3)


def test_the_api_gives_the_submodule_and_the_figures(client, superproject, bridge):
    pull_request = import_review(
        superproject, [{"sha": bridge.pr_pin, "expect": "off_branch", "branch": "main"}],
        submodule={"slug": "acme/bridge", "clone_url": bridge.url},
    )
    verify_all(pull_request)
    finding = pull_request.findings.get()

    detail = client.get(f"/api/findings/{finding.pk}/").json()
    verifications = client.get(f"/api/verifications/?finding={finding.pk}").json()["results"]

    assert (detail["evidence"][0]["submodule_repository"], detail["evidence"][0]["reference_branch"]) == (
        "acme/bridge", "main")
    at_pr = [v for v in verifications if v["commit"] == superproject.pr][0]["results"][0]
    assert (at_pr["state"], at_pr["facts"]["ahead"], at_pr["facts"]["behind"]) == ("holds", 4, 5)


@pytest.mark.parametrize(
    "url, message",
    [
        ("http://example.com/acme/bridge.git", "plain http:// is not allowed"),
        ("ext::sh%20-c%20touch%20/tmp/pwned", "remote-helper URLs can run programs"),
    ],
)
def test_a_gitmodules_url_outside_the_clone_url_rules_is_an_error_and_registers_nothing(tmp_path, bridge, url, message):
    repo = GitRepoBuilder(tmp_path, "rl3")
    repo.write("README.md", "rl\n")
    reviewed = pin_submodule(repo, PATH, bridge.pr_pin, url=url).commit("pin")
    review_import(
        data={
            "repository": {"slug": "acme/rl", "clone_url": repo.url},
            "pull_request": {"number": 2, "title": "Repin"},
            "commits": [{"sha": reviewed, "role": "reviewed"}],
            "findings": [{"number": 1, "kind": "blocker", "title": "Off main", "evidence": [
                {"kind": "gitlink", "path": PATH, "sha": bridge.pr_pin, "expect": "off_branch"}]}],
        }
    )
    pull_request = PullRequest.objects.get(number=2)

    [verification] = pull_request_verify(pull_request=pull_request, commit=pull_request.pins.get().commit)

    result = verification.results.get()
    assert verification.verdict == "error" and result.state == "error" and message in result.detail
    assert list(Repository.objects.values_list("slug", flat=True)) == ["acme/rl"]


def test_a_registered_slug_with_another_url_is_not_taken_over(superproject, bridge):
    Repository.objects.create(slug="pytest-of-root/bridge", clone_url="https://example.com/other/bridge.git")
    from reviews.services import repository_get_or_register
    from core.errors import RecheckError

    with pytest.raises(RecheckError, match="already registered with another clone URL"):
        repository_get_or_register(clone_url="https://github.com/pytest-of-root/bridge.git")
