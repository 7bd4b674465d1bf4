"""What a verification asks git for before it checks anything: the files its snippets and patterns
read, each once, and the few commits most of its evidence was recorded at."""
import pytest

from findings.models import Evidence
from findings.services.verification.rows import _CHANGES_STARTED, _read_paths
from tests.factories import CommitFactory, EvidenceFactory, FindingFactory

pytestmark = pytest.mark.django_db


def test_it_names_each_file_once_and_the_commits_most_evidence_was_recorded_at():
    finding = FindingFactory()
    repository = finding.pull_request.repository
    commits = [CommitFactory(repository=repository) for _ in range(_CHANGES_STARTED + 2)]
    for index, commit in enumerate(commits):
        # The first commits hold the most items, each in a file of its own.
        for item in range(len(commits) - index):
            EvidenceFactory(finding=finding, commit=commit, path=f"src/{index}_{item}.py")
    EvidenceFactory(finding=finding, commit=commits[0], path="src/0_0.py")  # a file named twice
    EvidenceFactory(finding=finding, commit=commits[-1], kind=Evidence.Kind.PATH, path="docs/guide.md", start_line=None,
                    end_line=None, text="", expect="exists")  # no file read
    EvidenceFactory(finding=FindingFactory(), path="elsewhere.py")  # another pull request's

    paths, recorded_at = _read_paths(finding.pull_request)

    assert sorted(paths) == sorted(
        f"src/{index}_{item}.py" for index in range(len(commits)) for item in range(len(commits) - index)
    )
    assert recorded_at == [commit.sha for commit in commits[:_CHANGES_STARTED]]
