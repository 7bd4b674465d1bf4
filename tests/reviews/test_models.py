import pytest
from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, transaction

from core.errors import RecheckError
from reviews.models import Commit, PullRequest
from reviews.services import commit_get_or_create, commit_lookup, pull_request_pin_commit
from tests.factories import CommitFactory, PullRequestFactory, RepositoryFactory, make_sha

pytestmark = pytest.mark.django_db


def test_it_refuses_a_second_pull_request_with_the_same_number():
    pull_request = PullRequestFactory(number=4108)
    with pytest.raises(IntegrityError), transaction.atomic():
        PullRequest.objects.create(repository=pull_request.repository, number=4108, title="Again")


def test_the_same_number_is_fine_in_another_repository():
    PullRequestFactory(number=4108)
    PullRequestFactory(number=4108)
    assert PullRequest.objects.filter(number=4108).count() == 2


@pytest.mark.parametrize("sha", ["xyz1234", "abc12", "ABCDEF1234", "g" * 40, "a" * 41])
def test_it_refuses_a_sha_that_is_not_7_to_40_lowercase_hex_digits(sha):
    repository = RepositoryFactory()
    # PostgreSQL refuses an over-long value before the check constraint sees it.
    with pytest.raises((IntegrityError, DataError)), transaction.atomic():
        Commit.objects.create(repository=repository, sha=sha)


def test_model_validation_explains_a_bad_sha():
    commit = Commit(repository=RepositoryFactory(), sha="not-a-sha")
    with pytest.raises(ValidationError) as error:
        commit.full_clean()
    assert "7 to 40" in str(error.value)


def test_a_resolved_commit_has_a_full_sha():
    with pytest.raises(IntegrityError), transaction.atomic():
        Commit.objects.create(repository=RepositoryFactory(), sha="d044f40", resolved=True)


def test_it_records_an_abbreviated_sha_as_unresolved():
    commit = commit_get_or_create(repository=RepositoryFactory(), sha="D044F40")
    assert (commit.sha, commit.resolved) == ("d044f40", False)


def test_an_abbreviation_finds_the_recorded_full_commit():
    full = CommitFactory()
    assert commit_get_or_create(repository=full.repository, sha=full.sha[:9]) == full


def test_an_ambiguous_abbreviation_names_the_candidates():
    repository = RepositoryFactory()
    first = CommitFactory(repository=repository, sha="abcdef1" + make_sha("one")[7:])
    second = CommitFactory(repository=repository, sha="abcdef1" + make_sha("two")[7:])
    with pytest.raises(RecheckError) as error:
        commit_lookup(repository=repository, sha="abcdef1")
    assert first.sha in str(error.value) and second.sha in str(error.value)


def test_it_refuses_a_malformed_sha_with_a_message_that_says_what_to_give():
    with pytest.raises(RecheckError, match="7 to 40 hexadecimal"):
        commit_get_or_create(repository=RepositoryFactory(), sha="HEAD~1")


def test_a_commit_is_pinned_once_per_pull_request():
    pull_request = PullRequestFactory()
    commit = CommitFactory(repository=pull_request.repository)
    pin, created = pull_request_pin_commit(pull_request=pull_request, commit=commit, role="reviewed")
    again, created_again = pull_request_pin_commit(pull_request=pull_request, commit=commit, role="rebased")
    assert created and not created_again
    assert again == pin and again.role == "reviewed"


def test_permalinks_point_at_the_commit_and_lines():
    repository = RepositoryFactory(slug="NVIDIA-NeMo/RL", web_url="https://github.com/NVIDIA-NeMo/RL")
    assert (
        repository.permalink("d044f40", "nemo_rl/data/generic_sft.py", 259, 261)
        == "https://github.com/NVIDIA-NeMo/RL/blob/d044f40/nemo_rl/data/generic_sft.py#L259-L261"
    )
    assert repository.permalink("d044f40", "a.py", 7, 7).endswith("a.py#L7")


@pytest.mark.parametrize("slug", ["owner", "owner/", "/name", "own er/name", "-x/../y"])
def test_it_refuses_a_slug_that_is_not_owner_slash_name(slug):
    with pytest.raises(IntegrityError), transaction.atomic():
        RepositoryFactory(slug=slug)


def test_a_pinned_commit_cannot_be_deleted_from_under_its_pull_request():
    from django.db.models import RestrictedError

    from tests.factories import PinnedCommitFactory

    pin = PinnedCommitFactory()
    with pytest.raises(RestrictedError):
        pin.commit.delete()


def test_deleting_a_repository_takes_its_commits_pins_and_findings_with_it():
    from findings.models import Evidence
    from tests.factories import EvidenceFactory, PinnedCommitFactory

    evidence = EvidenceFactory()
    PinnedCommitFactory(pull_request=evidence.finding.pull_request, commit=evidence.commit)
    evidence.finding.pull_request.repository.delete()
    assert not Commit.objects.exists() and not Evidence.objects.exists()
