import copy
import io

import pytest
import yaml
from django.core.management import CommandError, call_command

from findings.services.review_import import BundleInvalid, parse_bundle, review_import
from findings.models import Evidence, Finding, FindingEvent
from core.errors import BundleError
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

REVIEWED = "d044f40"
BUNDLE = {
    "repository": {"slug": "NVIDIA-NeMo/RL", "clone_url": "https://github.com/NVIDIA-NeMo/RL.git",
                   "web_url": "https://github.com/NVIDIA-NeMo/RL"},
    "pull_request": {"number": 4108, "title": "Nemotron SFT loaders", "state": "open",
                     "before": "One family.", "change": "A second family.", "status": "Open."},
    "commits": [{"sha": REVIEWED, "role": "reviewed", "note": "after the rebase"}],
    "findings": [
        {
            "number": 4, "kind": "blocker", "caught_by": "none", "title": "A broken dataset never stops the job",
            "summary": "Tolerance 0 switches the check off.", "body": "Energon reads 0 as *stop counting*.",
            "fix": "Set it to 100.", "review_comment_url": "https://github.com/NVIDIA-NeMo/RL/pull/4108#c4",
            "location": {"path": "nemo_rl/data/generic_sft.py", "line": 259},
            "evidence": [
                {"kind": "snippet", "path": "nemo_rl/data/generic_sft.py", "start_line": 259, "end_line": 259},
                {"kind": "pattern", "path": "nemo_rl/**/*.py", "regex": r"tolerance\s*=\s*0", "expect": "present"},
                {"kind": "path", "path": "examples/n16soak.yaml", "expect": "exists"},
                {"kind": "gitlink", "commit": "5ed97996", "path": "3rdparty/Megatron-Bridge", "sha": "3961f399"},
                {"kind": "note", "text": "Three of us ran the suite."},
                {"kind": "check", "check": "unit-tests (3.11)", "tests": ["tests/test_sft.py::test_tolerance"]},
            ],
        },
        {"number": 10, "kind": "cleanup", "title": "Rename the cooker"},
    ],
}


def bundle(**changes):
    data = copy.deepcopy(BUNDLE)
    for dotted, value in changes.items():
        target = data
        *parents, last = dotted.split(".")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return data


def test_it_imports_a_bundle_with_every_kind_of_evidence():
    report = review_import(data=bundle())
    pull_request = PullRequest.objects.get(repository__slug="NVIDIA-NeMo/RL", number=4108)
    assert report.pull_request == "NVIDIA-NeMo/RL#4108"
    assert pull_request.status_note == "Open."
    finding = pull_request.findings.get(number=4)
    assert (finding.path, finding.line) == ("nemo_rl/data/generic_sft.py", 259)
    assert list(finding.evidence.values_list("kind", flat=True)) == [
        "snippet", "pattern", "path", "gitlink", "note", "check",
    ]
    snippet = finding.evidence.get(kind="snippet")
    assert snippet.commit.sha == REVIEWED and not snippet.commit.resolved
    assert finding.evidence.get(kind="gitlink").commit.sha == "5ed97996"
    assert finding.evidence.get(kind="note").commit is None
    check = finding.evidence.get(kind="check")
    assert (check.commit.sha, check.check_name, check.check_tests) == (
        REVIEWED, "unit-tests (3.11)", ["tests/test_sft.py::test_tolerance"]
    )
    assert PinnedCommit.objects.get().role == "reviewed"


def test_importing_twice_creates_nothing_new():
    review_import(data=bundle())
    counts = [model.objects.count() for model in (Repository, PullRequest, Commit, Finding, Evidence, PinnedCommit)]
    report = review_import(data=bundle())
    assert [model.objects.count() for model in (Repository, PullRequest, Commit, Finding, Evidence, PinnedCommit)] == counts
    assert not report.created and not report.updated


def test_a_changed_finding_is_updated_in_place():
    review_import(data=bundle())
    finding_id = Finding.objects.get(number=4).pk
    report = review_import(data=bundle(**{"findings.0.title": "Tolerance 0 never stops"}))
    assert Finding.objects.get(number=4).pk == finding_id
    assert Finding.objects.get(number=4).title == "Tolerance 0 never stops"
    assert report.updated == ["finding 4"]


def test_a_status_in_the_bundle_is_recorded_in_the_history():
    review_import(data=bundle(**{"findings.1.status": "dismissed", "findings.1.resolution": {"note": "Not needed."}}))
    finding = Finding.objects.get(number=10)
    assert finding.status == "dismissed"
    # Created first, then dismissed: the history reads in that order.
    assert list(FindingEvent.objects.filter(finding=finding).values_list("kind", "to_status", "source")) == [
        ("created", "open", "import"), ("status", "dismissed", "import"),
    ]


def test_an_import_records_who_created_and_who_changed_each_finding_once():
    importer = UserFactory(username="importer", groups=["Reviewer"])
    review_import(data=bundle(), actor=importer)
    review_import(data=bundle(), actor=importer)  # unchanged: nothing more in the history
    finding = Finding.objects.get(number=4)
    assert list(finding.history.values_list("kind", "actor__username")) == [("created", "importer")]
    review_import(data=bundle(**{"findings.0.title": "Tolerance 0 never stops"}), actor=importer)
    edited = finding.history.get(kind="edited")
    assert edited.note == "Changed title." and edited.source == "import"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"pull_request.number": "four"}, "pull_request.number"),
        ({"repository.slug": "no-slash"}, "repository.slug"),
        ({"repository.clone_url": "ext::sh -c touch% /tmp/pwned"}, "repository.clone_url"),
        ({"repository.clone_url": "--upload-pack=touch /tmp/pwned"}, "repository.clone_url"),
        ({"commits.0.sha": "HEAD"}, "commits[0].sha"),
        ({"commits.0.role": "merged"}, "commits[0].role"),
        ({"findings.0.kind": "nit"}, "findings[0].kind"),
        ({"findings.1.number": 4}, "findings[1].number"),
        ({"findings.0.evidence.0": {"kind": "snippet", "path": "a.py"}}, "findings[0].evidence[0].start_line"),
        ({"findings.0.evidence.0": {"kind": "snippet", "path": "a.py", "start_line": 5, "end_line": 2}},
         "findings[0].evidence[0].end_line"),
        ({"findings.0.evidence.0": {"kind": "snippet", "path": "../etc/passwd", "start_line": 1, "end_line": 2}},
         "findings[0].evidence[0].path"),
        ({"findings.0.evidence.0": {"kind": "path", "path": "/etc/passwd", "expect": "exists"}},
         "findings[0].evidence[0].path"),
        ({"findings.0.evidence.1": {"kind": "pattern", "path": "a.py", "regex": "(unclosed", "expect": "present"}},
         "findings[0].evidence[1].regex"),
        ({"findings.0.evidence.1": {"kind": "pattern", "path": "a.py", "regex": "x", "expect": "exists"}},
         "findings[0].evidence[1].expect"),
        ({"findings.0.evidence.3": {"kind": "gitlink", "path": "b", "sha": "3961f399", "expect": "present"}},
         "findings[0].evidence[3].expect"),
        ({"findings.0.evidence.3": {"kind": "gitlink", "path": "b", "sha": "3961f399", "branch": "--all"}},
         "findings[0].evidence[3].branch"),
        ({"findings.0.evidence.3": {"kind": "gitlink", "path": "b", "sha": "3961f399",
                                    "submodule": {"slug": "o/n", "clone_url": "ext::sh -c touch%20/tmp/x"}}},
         "findings[0].evidence[3].submodule.clone_url"),
        ({"findings.0.evidence.2": {"kind": "path", "path": "a", "expect": "exists", "branch": "main"}},
         "findings[0].evidence[2].branch"),
        ({"findings.0.evidence.4": {"kind": "unknown"}}, "findings[0].evidence[4].kind"),
        ({"findings.0.evidence.4": {"kind": "note"}}, "findings[0].evidence[4].text"),
        ({"findings": "none"}, "findings"),
    ],
)
def test_a_malformed_bundle_changes_nothing_and_names_the_field(changes, field):
    review_import(data=bundle())
    before = [list(model.objects.order_by("pk").values()) for model in (Finding, Evidence, Commit, PinnedCommit)]
    broken = bundle(**changes)
    broken["pull_request"]["title"] = "Renamed by a broken bundle"
    with pytest.raises(BundleInvalid) as error:
        review_import(data=broken)
    assert error.value.field == field, str(error.value)
    assert PullRequest.objects.get().title == "Nemotron SFT loaders"
    assert [list(model.objects.order_by("pk").values()) for model in (Finding, Evidence, Commit, PinnedCommit)] == before


def test_gitlink_evidence_names_its_submodules_repository_and_branch():
    data = bundle(**{"findings.0.evidence.3": {
        "kind": "gitlink", "commit": "5ed97996", "path": "3rdparty/Megatron-Bridge", "sha": "3961f399",
        "expect": "off_branch", "branch": "release",
        "submodule": {"slug": "NVIDIA-NeMo/Megatron-Bridge", "clone_url": "https://github.com/NVIDIA-NeMo/Megatron-Bridge.git"},
    }})

    review_import(data=data)

    evidence = Evidence.objects.get(kind="gitlink")
    assert (evidence.expect, evidence.reference_branch) == ("off_branch", "release")
    assert evidence.submodule_repository.slug == "NVIDIA-NeMo/Megatron-Bridge"


def test_evidence_without_a_commit_needs_a_reviewed_commit():
    data = bundle(commits=[{"sha": REVIEWED, "role": "base"}])
    with pytest.raises(BundleInvalid) as error:
        review_import(data=data)
    assert error.value.field == "findings[0].evidence[0].commit"
    assert not Finding.objects.exists()


def test_an_evidence_error_names_its_finding_where_a_finding_before_it_has_no_evidence():
    data = bundle(commits=[{"sha": REVIEWED, "role": "base"}])
    data["findings"].reverse()  # finding 10, without evidence, first
    with pytest.raises(BundleInvalid) as error:
        review_import(data=data)
    assert error.value.field == "findings[1].evidence[0].commit"
    assert not Finding.objects.exists()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"repository: [unclosed", "Not valid YAML at line 1"),
        (b'{"repository": ', "Not valid JSON"),
        (b"- just\n- a list\n", "A bundle is a mapping"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_unreadable_bundles_say_what_is_wrong(raw, message):
    with pytest.raises(BundleError, match=message):
        parse_bundle(raw)


def test_the_command_imports_a_yaml_file(tmp_path):
    path = tmp_path / "review.yaml"
    path.write_text(yaml.safe_dump(bundle()))
    out = io.StringIO()
    call_command("import_review", str(path), stdout=out)
    assert "Imported NVIDIA-NeMo/RL#4108" in out.getvalue()
    assert Finding.objects.count() == 2


def test_the_command_reports_a_malformed_bundle_and_imports_nothing(tmp_path):
    path = tmp_path / "review.json"
    path.write_text('{"repository": {"slug": "a/b", "clone_url": "https://x/a.git"}, "pull_request": {"number": 0}}')
    with pytest.raises(CommandError) as error:
        call_command("import_review", str(path))
    assert "nothing was imported" in str(error.value)
    assert "pull_request.number" in str(error.value) and "pull_request.title" in str(error.value)
    assert not Repository.objects.exists()


def test_the_command_explains_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_review", str(tmp_path / "missing.yaml"))


@pytest.mark.parametrize(
    "url",
    ["http://example.com/a.git", "ssh://-oProxyCommand=touch%20x/a", "file:///srv/repo", "/srv/repo", "../repo"],
)
def test_without_local_repositories_only_https_and_ssh_urls_are_accepted(settings, url):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = False
    with pytest.raises(BundleInvalid) as error:
        review_import(data=bundle(**{"repository.clone_url": url}))
    assert error.value.field == "repository.clone_url"
    assert not Repository.objects.exists()


def test_a_local_path_is_accepted_where_local_repositories_are_allowed(settings, tmp_path):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    review_import(data=bundle(**{"repository.clone_url": str(tmp_path / "not-cloned-yet")}))
    assert Repository.objects.get().clone_url == str(tmp_path / "not-cloned-yet")


def _statistics_of(table: str):
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # What the planner believes the table holds: ANALYZE sets it, inside this test's
            # transaction, where autovacuum cannot see the rows.
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
            return cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
        if not cursor.fetchone()[0]:
            return 0
        cursor.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = %s", [table])
        return cursor.fetchone()[0]


def test_a_large_import_refreshes_the_planners_statistics(django_capture_on_commit_callbacks):
    from django.db import connection

    from findings.services.review_import import ANALYZE_AFTER_ROWS

    before = _statistics_of("findings_finding")
    assert before < ANALYZE_AFTER_ROWS
    with django_capture_on_commit_callbacks(execute=True):
        review_import(data={
            "repository": {"slug": "acme/big", "clone_url": "https://github.com/acme/big.git"},
            "pull_request": {"number": 1, "title": "Big"},
            "findings": [
                {"number": n, "kind": "blocker", "title": f"Finding {n}", "evidence": []}
                for n in range(1, ANALYZE_AFTER_ROWS + 1)
            ],
        })
    assert _statistics_of("findings_finding") > before
    assert _statistics_of("findings_finding") >= (ANALYZE_AFTER_ROWS if connection.vendor == "postgresql" else 1)


def test_a_small_import_leaves_the_statistics_to_the_database(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        review_import(data={
            "repository": {"slug": "acme/small", "clone_url": "https://github.com/acme/small.git"},
            "pull_request": {"number": 1, "title": "Small"},
            "findings": [{"number": 1, "kind": "blocker", "title": "One", "evidence": []}],
        })
    assert not [callback for callback in callbacks if "analyze" in getattr(callback, "__name__", "")]


def test_an_import_moves_the_pull_requests_generation_once_not_once_a_row():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def bundle(title):
        return {
            "repository": {"slug": "acme/gen", "clone_url": "https://github.com/acme/gen.git"},
            "pull_request": {"number": 1, "title": "Gen"},
            "findings": [
                {"number": n, "kind": "blocker", "title": f"{title} {n}",
                 "evidence": [{"kind": "note", "text": "a"}, {"kind": "note", "text": "b"}]}
                for n in range(1, 51)
            ],
        }

    review_import(data=bundle("First"))
    before = PullRequest.objects.get().generation
    with CaptureQueriesContext(connection) as queries:
        review_import(data=bundle("Second"))
    moves = [q for q in queries.captured_queries if 'SET "generation"' in q["sql"] and "reviews_pullrequest" in q["sql"]]
    assert len(moves) == 1
    assert PullRequest.objects.get().generation == before + 1


def test_owner_name_and_owner_name_dot_git_are_one_repository_with_one_mirror(settings):
    from reviews.mirrors import repository_mirror_dir

    plain = copy.deepcopy(BUNDLE)
    suffixed = copy.deepcopy(BUNDLE)
    suffixed["repository"]["slug"] = "NVIDIA-NeMo/RL.git"
    suffixed["pull_request"]["number"] = 4109
    review_import(data=plain)
    review_import(data=suffixed)
    repository = Repository.objects.get()
    assert repository.slug == "NVIDIA-NeMo/RL"
    assert set(repository.pull_requests.values_list("number", flat=True)) == {4108, 4109}
    assert repository_mirror_dir(repository) == settings.RECHECK_MIRROR_ROOT / "NVIDIA-NeMo" / "RL.git"


@pytest.mark.parametrize("slug", ["acme/..", "acme/.", "acme/..git", "acme/a b", "acme/x/y"])
def test_a_slug_that_is_no_forge_name_is_refused_with_its_field(slug):
    data = copy.deepcopy(BUNDLE)
    data["repository"]["slug"] = slug
    with pytest.raises(BundleInvalid) as caught:
        review_import(data=data)
    assert caught.value.errors[0][0] == "repository.slug"
    assert not Repository.objects.exists()


# --- Decisions a bundle records ------------------------------------------------------------


def test_a_bundle_records_its_resolution_sha_without_a_mirror():
    """A bundle records a decision made elsewhere, and may arrive before its repository is
    fetched: its SHA is kept as given (the site, the admin and the API ask the mirror)."""
    data = copy.deepcopy(BUNDLE)
    data["findings"][1].update(status="fixed", resolution={"commit": "abcdef12", "note": "Renamed."})
    review_import(data=data)
    finding = Finding.objects.get(number=10)
    assert (finding.status, finding.resolved_commit.sha, finding.resolved_commit.resolved) == (
        "fixed", "abcdef12", False
    )


def test_a_bundle_marking_fixed_where_the_evidence_still_holds_is_refused_on_its_commit(tmp_path):
    from tests.findings.decision_data import fetched_review
    from tests.findings.services.test_verification import import_review

    review = fetched_review(tmp_path)
    with pytest.raises(BundleInvalid) as error:
        import_review(review.repo, findings=[
            {"number": 2, "kind": "blocker", "title": "Debug flag left on", "status": "fixed",
             "resolution": {"commit": review.fix},
             "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"}]},
        ])
    [(field, message)] = error.value.errors
    assert field == "findings[0].resolution.commit" and "The evidence still holds at" in message
    assert review.still_there.status == "open"
