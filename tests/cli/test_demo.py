"""The demo: the #4108 review as shipped, the sample repository and its review, and load_demo."""
import io
import re
import subprocess
from pathlib import Path, PurePosixPath

import pytest
from django.core.management import call_command

from cli.demo import REVIEW_4108, demo_load
from cli.demo.sample_bundle import sample_bundle
from cli.demo.sample_commits import BRANCHES, SNIPPET_LINES
from cli.demo.sample_repository import EXPECTED_SHAS, EXPECTED_VERDICTS, sample_repository_build
from cli.demo.toolkit_repository import TOOLKIT_FEATURE, TOOLKIT_MAIN
from findings.services.review_import import parse_bundle, validate_bundle
from findings.models import Evidence, EvidenceResult, Finding, FindingEvent, Verification
from findings.services.verification.run import pull_request_verify
from core.errors import RecheckError
from reviews.models import Commit, PinnedCommit, PullRequest, Repository

PINNED = ("reviewed", "rebased", "head")


@pytest.fixture
def demo_root(settings, tmp_path) -> Path:
    """Where load_demo builds the sample: beside a mirror root of the test's own."""
    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    return tmp_path / "var" / "demo"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_repository_build(tmp_path_factory.mktemp("demo") / "sample.git")


def git(repository, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repository.path), *args], capture_output=True, text=True,
                          check=True).stdout


def row_counts() -> dict:
    models = (Repository, PullRequest, Commit, PinnedCommit, Finding, Evidence, FindingEvent, Verification,
              EvidenceResult)
    return {model.__name__: model.objects.count() for model in models}


# --- The #4108 review --------------------------------------------------------------------------


def review_4108() -> dict:
    return validate_bundle(parse_bundle(REVIEW_4108.read_bytes()))


def test_the_4108_review_has_nine_blockers_in_their_two_groups_and_no_cleanups():
    findings = review_4108()["findings"]
    assert [finding["number"] for finding in findings] == list(range(1, 10))
    assert {finding["kind"] for finding in findings} == {"blocker"}
    assert [finding["number"] for finding in findings if finding["caught_by"] == "ci"] == [1, 2, 3]
    assert [finding["number"] for finding in findings if finding["caught_by"] == "none"] == [4, 5, 6, 7, 8, 9]


def test_the_4108_review_keeps_the_locations_the_page_gives():
    locations = {finding["number"]: finding.get("location") for finding in review_4108()["findings"]}
    assert {number: (location["path"], location["line"]) for number, location in locations.items() if location} == {
        2: ("sft-super67b-generalist.n16soak.yaml", 104),
        4: ("generic_sft.py", 259),
        5: ("nemotron_multimodal.py", 460),
        6: ("cookers/nemotron.py", 371),
        7: ("nemotron_tokenization.py", 399),
        8: ("energon/config.py", 154),
        9: ("nemotron_multimodal.py", 679),
    }


def test_the_4108_review_invents_no_review_comment_links():
    assert all(not finding.get("review_comment_url") for finding in review_4108()["findings"])


def test_the_4108_bridge_pins_are_recorded_as_gitlink_evidence():
    first = review_4108()["findings"][0]
    gitlink = next(item for item in first["evidence"] if item["kind"] == "gitlink")
    assert gitlink["sha"] == "3961f399" and gitlink["commit"] == "d044f40"
    assert "5ed97996" in gitlink["caption"] and "assumed" in gitlink["caption"]
    assert "5ed97996" in first["body"] and "3961f399" in first["body"]


@pytest.mark.django_db
def test_the_4108_review_is_pinned_at_d044f40_left_unresolved(demo_root):
    demo_load()
    pull_request = PullRequest.objects.get(repository__slug="NVIDIA-NeMo/RL", number=4108)
    pin = PinnedCommit.objects.get(pull_request=pull_request)
    assert (pin.commit.sha, pin.role, pin.commit.resolved) == ("d044f40", "rebased", False)
    assert set(Evidence.objects.filter(finding__pull_request=pull_request).exclude(kind="note")
               .values_list("commit__sha", flat=True)) == {"d044f40"}
    assert pull_request.repository.clone_url == "https://github.com/NVIDIA-NeMo/RL.git"
    assert pull_request.repository.web_url == "https://github.com/NVIDIA-NeMo/RL"


def test_the_4108_review_tags_its_findings_with_described_tags(db, demo_root):
    from findings.models import Tag

    demo_load()
    silent = Tag.objects.get(slug="silent-failure")
    # Described in the review's own repository (descriptions are per repository).
    [described] = silent.descriptions.all()
    assert described.repository.slug == "NVIDIA-NeMo/RL"
    assert described.description.startswith("Something goes wrong and nothing says so")
    assert sorted(silent.findings.values_list("number", flat=True)) == [4, 5]
    assert Tag.objects.get(slug="dependency").findings.get().title.startswith("The Megatron-Bridge submodule")


# --- The sample repository ---------------------------------------------------------------------


def test_the_sample_repository_has_the_same_commits_every_time(sample, tmp_path):
    again = sample_repository_build(tmp_path / "again.git")
    assert again.commits == sample.commits == EXPECTED_SHAS


def test_rebuilding_the_sample_in_place_changes_nothing(tmp_path):
    first = sample_repository_build(tmp_path / "sample.git")
    second = sample_repository_build(tmp_path / "sample.git")
    assert first.commits == second.commits


def test_the_sample_refuses_to_build_over_something_else(tmp_path):
    (tmp_path / "sample.git").mkdir()
    (tmp_path / "sample.git" / "notes.txt").write_text("mine")
    with pytest.raises(RecheckError, match="is not the demo's git repository"):
        sample_repository_build(tmp_path / "sample.git")


def test_every_commit_the_review_needs_is_on_a_branch(sample):
    branches = dict(line.split() for line in git(sample, "for-each-ref", "--format=%(refname:short) %(objectname)")
                    .splitlines())
    assert branches == {branch: sample.commits[name] for branch, name in BRANCHES.items()}
    for role in PINNED:
        assert sample.commits[role] in branches.values() or git(sample, "branch", "--contains", sample.commits[role])


def test_the_rebase_moves_the_evidence_without_removing_it(sample):
    assert SNIPPET_LINES["tolerance"]["rebased"][1] - SNIPPET_LINES["tolerance"]["reviewed"][1] == 3
    reviewed_turns = git(sample, "show", f"{sample.commits['reviewed']}:src/sampleloader/turns.py")
    assert git(sample, "show", f"{sample.commits['rebased']}:src/sampleloader/conversation.py") == reviewed_turns
    renames = git(sample, "diff", "-M", "--name-status", sample.commits["reviewed"], sample.commits["rebased"])
    assert "R100\tsrc/sampleloader/turns.py\tsrc/sampleloader/conversation.py" in renames
    zstandard_reviewed = lines_at(sample, "reviewed", *SNIPPET_LINES["zstandard"]["reviewed"])
    zstandard_rebased = lines_at(sample, "rebased", *SNIPPET_LINES["zstandard"]["rebased"])
    assert zstandard_rebased != zstandard_reviewed
    assert [line[4:] if line else line for line in zstandard_rebased] == zstandard_reviewed


def test_each_snippet_sits_where_the_table_says(sample):
    texts = {
        evidence["text"]: key
        for finding in sample_bundle(sample)["findings"]
        for evidence in finding["evidence"]
        if evidence["kind"] == "snippet"
        for key in SNIPPET_LINES
        if SNIPPET_LINES[key]["reviewed"] == (evidence["path"], evidence["start_line"], evidence["end_line"])
    }
    assert sorted(texts.values()) == sorted(SNIPPET_LINES)
    for text, key in texts.items():
        for role in PINNED:
            where = SNIPPET_LINES[key][role]
            found = find_block(sample, role, text)
            if where is None:
                assert found is None, (key, role)
            else:
                assert found == where, (key, role)


def test_the_submodule_pin_moves_to_the_feature_branch_in_the_pr(sample):
    def pin(name):
        return git(sample, "ls-tree", sample.commits[name], "vendor/toolkit").split()[:3]

    assert pin("base") == ["160000", "commit", TOOLKIT_MAIN]
    assert pin("upstream") == ["160000", "commit", TOOLKIT_MAIN]
    assert all(pin(role) == ["160000", "commit", TOOLKIT_FEATURE] for role in PINNED)
    assert "path = vendor/toolkit" in git(sample, "show", f"{sample.commits['base']}:.gitmodules")


def test_the_files_give_the_expected_verdict_at_every_pin(sample):
    bundle = sample_bundle(sample)
    for finding in bundle["findings"]:
        for role in PINNED:
            assert verdict(sample, finding, role) == EXPECTED_VERDICTS[finding["number"]][role], (
                finding["number"], role)


# A small stand-in for the verification engine, reading the files at a commit: enough to check
# that the sample's files say what the expected-verdict table claims.


def lines_at(sample, role: str, path: str, start: int, end: int) -> list[str]:
    return git(sample, "show", f"{sample.commits[role]}:{path}").splitlines()[start - 1:end]


def files_at(sample, role: str) -> dict[str, str]:
    entries = [line.split(None, 3) for line in git(sample, "ls-tree", "-r", sample.commits[role]).splitlines()]
    return {path: git(sample, "show", f"{sample.commits[role]}:{path}") for mode, kind, sha, path in entries
            if kind == "blob"}


def find_block(sample, role: str, text: str) -> tuple[str, int, int] | None:
    """Where `text`'s lines are at `role`, ignoring indentation."""
    wanted = [line.strip() for line in text.splitlines()]
    for path, content in files_at(sample, role).items():
        lines = [line.strip() for line in content.splitlines()]
        for index in range(len(lines) - len(wanted) + 1):
            if lines[index:index + len(wanted)] == wanted:
                return path, index + 1, index + len(wanted)
    return None


def holds(sample, evidence: dict, role: str) -> bool | None:
    files = files_at(sample, role)
    tree = git(sample, "ls-tree", "-r", sample.commits[role])
    if evidence["kind"] == "snippet":
        return find_block(sample, role, evidence["text"]) is not None
    if evidence["kind"] == "pattern":
        matched = any(re.search(evidence["regex"], content, re.MULTILINE)
                      for path, content in files.items() if PurePosixPath(path).match(evidence["path"]))
        return matched == (evidence["expect"] == "present")
    if evidence["kind"] == "path":
        return (evidence["path"] in files) == (evidence["expect"] == "exists")
    if evidence["kind"] == "gitlink":
        return f"160000 commit {evidence['sha']}\t{evidence['path']}" in tree
    return None


def verdict(sample, finding: dict, role: str) -> str:
    checked = [state for state in (holds(sample, item, role) for item in finding["evidence"]) if state is not None]
    if not checked:
        return "unverifiable"
    return "present" if all(checked) else "likely_fixed" if not any(checked) else "partly_fixed"


# --- The sample's review -----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_sample_review_uses_every_kind_of_evidence(demo_root):
    loaded = demo_load()
    pull_request = loaded.sample
    assert "sample" in pull_request.before.lower() and "made up" in pull_request.before
    findings = pull_request.findings.all()
    assert findings.blockers().filter(caught_by="ci").count() == 4
    assert findings.blockers().filter(caught_by="none").count() == 2
    assert findings.cleanups().count() == 3
    kinds = set(Evidence.objects.filter(finding__pull_request=pull_request).values_list("kind", "expect"))
    assert kinds == {("snippet", ""), ("pattern", "present"), ("pattern", "absent"), ("path", "exists"),
                     ("path", "missing"), ("gitlink", ""), ("gitlink", "off_branch"),
                     ("gitlink", "not_fast_forward"), ("note", ""), ("check", "")}
    pins = {pin.role: pin.commit for pin in PinnedCommit.objects.filter(pull_request=pull_request)}
    assert {role: commit.sha for role, commit in pins.items()} == {role: EXPECTED_SHAS[role] for role in PINNED}
    assert all(commit.resolved for commit in pins.values())
    # Evidence without a commit of its own is recorded at the reviewed pin.
    assert set(Evidence.objects.filter(finding__pull_request=pull_request).exclude(kind="note")
               .values_list("commit_id", flat=True)) == {pins["reviewed"].pk}
    assert pull_request.repository.clone_url == str(demo_root / "sample.git")
    assert list(findings.filter(evidence__kind="note").exclude(evidence__kind__in=["snippet", "pattern", "path",
                                                                                   "gitlink"])
                .values_list("number", flat=True)) == [9]


# --- load_demo ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_loading_the_demo_twice_duplicates_nothing(demo_root):
    call_command("load_demo", stdout=io.StringIO())
    counts = row_counts()
    call_command("load_demo", stdout=io.StringIO())
    assert row_counts() == counts
    # The two reviewed repositories and the two submodules their gitlink evidence names, and the
    # GitLab-shaped project of the sample's merge request.
    assert counts["Repository"] == 4 + 1 and counts["PullRequest"] == 2 + 1
    assert counts["Finding"] == 9 + 9 + 2 and counts["PinnedCommit"] == 1 + 3 + 2


@pytest.mark.django_db
def test_load_demo_verifies_the_sample_at_every_pin(demo_root):
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    for role in PINNED:
        assert Verification.objects.filter(
            commit__sha=EXPECTED_SHAS[role], finding__pull_request__number=1
        ).count() == 9
    assert "verified recheck-demo/sample#1 at" in out.getvalue()
    assert not Verification.objects.filter(finding__pull_request__number=4108).exists()


@pytest.mark.django_db
def test_without_local_repositories_the_demo_is_the_4108_review_alone(demo_root, settings, monkeypatch):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = False
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "The offline sample was left out" in out.getvalue()
    assert list(PullRequest.objects.values_list("number", flat=True)) == [4108]
    assert not demo_root.exists()


@pytest.mark.django_db
def test_the_engine_gives_the_documented_verdict_at_every_pin(demo_root):
    from cli.demo.sample_ci import sample_ci_run

    loaded = demo_load()
    # The sample's check items read the reports of its own CI, run here as load_demo runs it.
    assert all(run.recorded for run in sample_ci_run(loaded.sample, loaded.sample_repository))
    pins = {pin.role: pin.commit for pin in PinnedCommit.objects.filter(pull_request=loaded.sample)}
    for role in PINNED:
        pull_request_verify(pull_request=loaded.sample, commit=pins[role])
    verdicts = {
        (verification.finding.number, role): verification.verdict
        for role in PINNED
        for verification in Verification.objects.filter(finding__pull_request=loaded.sample, commit=pins[role])
        .select_related("finding")
    }
    assert verdicts == {(number, role): by_role[role] for number, by_role in EXPECTED_VERDICTS.items()
                        for role in PINNED}


@pytest.mark.django_db
def test_verifying_4108_offline_is_an_error_that_says_the_repository_is_unreachable(demo_root):
    loaded = demo_load()
    # What an offline machine sees: nothing answers where the forge would be.
    Repository.objects.filter(pk=loaded.review.repository_id).update(
        clone_url="https://127.0.0.1:9/NVIDIA-NeMo/RL.git"
    )
    loaded.review.repository.refresh_from_db()
    commit = Commit.objects.get(repository=loaded.review.repository, sha="d044f40")
    verifications = pull_request_verify(pull_request=loaded.review, commit=commit)
    assert len(verifications) == 9
    assert {verification.verdict for verification in verifications} == {"error"}
    assert all(verification.detail.startswith("Repository unreachable") for verification in verifications)
    assert not Commit.objects.get(pk=commit.pk).resolved
    assert not Finding.objects.filter(pull_request=loaded.review).exclude(status="open").exists()


# --- the toolkit submodule's real history ------------------------------------------------------


def test_the_toolkit_is_a_real_repository_with_a_main_line_and_a_feature_branch(sample):
    from cli.demo.sample_repository import SampleRepository
    from cli.demo.toolkit_repository import toolkit_path

    toolkit = SampleRepository(path=toolkit_path(sample.path), commits={})
    assert git(toolkit, "rev-parse", "main~2").strip() == TOOLKIT_MAIN
    assert git(toolkit, "rev-parse", "feature/streaming").strip() == TOOLKIT_FEATURE
    assert git(toolkit, "rev-list", "--left-right", "--count", f"{TOOLKIT_FEATURE}...main").strip() == "3\t4"


@pytest.mark.django_db
def test_the_samples_first_blocker_shows_a_real_pin_history(demo_root):
    call_command("load_demo", stdout=io.StringIO())

    results = EvidenceResult.objects.filter(
        evidence__finding__number=1, evidence__finding__pull_request__number=1, evidence__kind="gitlink",
        verification__commit__sha=EXPECTED_SHAS["reviewed"],
    ).order_by("evidence__position")
    assert [result.state for result in results] == ["holds", "holds", "holds"]
    facts = results[0].facts
    assert (facts["repository"], facts["branch"], facts["ahead"], facts["behind"]) == ("recheck-demo/toolkit", "main", 3, 4)
    assert (facts["base_pin"], facts["fast_forward"], facts["added"], facts["dropped"]) == (TOOLKIT_MAIN, False, 3, 2)
    assert facts["dropped_subjects"] == ["Fix the record validator for empty turns",
                                         "Validate record fields before yielding them"]


@pytest.mark.django_db
def test_the_4108_ci_blockers_name_their_jobs_and_wait_for_ci_with_no_report_invented(demo_root):
    from core import vocabulary
    from engine.verification import EvidenceSpec
    from engine.verification.specs import CheckResultRef
    from findings.models import CheckReport
    from findings.services.verification.check_reports import CheckReadings

    loaded = demo_load()
    items = Evidence.objects.filter(finding__pull_request=loaded.review, kind="check").order_by("finding__number")
    assert [(item.finding.number, item.check_name) for item in items] == [
        (1, "submodule fast-forward"), (2, "secrets-detector"), (3, "L0_Unit_Tests_Megatron")]
    assert items[1].check_results == [
        {"rule": "Base64 High Entropy String", "path": "sft-super67b-generalist.n16soak.yaml", "start_line": line}
        for line in (104, 109)]
    assert not CheckReport.objects.filter(repository=loaded.review.repository).exists()
    # What each item reads at d044f40 with no report there: waiting for CI, and so does its finding.
    readings = CheckReadings(loaded.review, None, "d044f40")
    for item in items:
        spec = EvidenceSpec(kind="check", commit="d044f40", check=item.check_name, tests=tuple(item.check_tests),
                            results=tuple(CheckResultRef(**ref) for ref in item.check_results))
        result = readings.result(spec)
        assert (result.state, result.facts["outcome"]) == ("error", vocabulary.CHECK_WAITING)
    assert vocabulary.finding_verdict_label("error", vocabulary.verdict_reason("error", ["waiting"])) == "Waiting for CI"
