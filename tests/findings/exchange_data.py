"""A reviewed pull request for the export tests: findings in every state, verified at a later
commit where one snippet has moved."""
from dataclasses import dataclass

from findings.models import EvidenceResult, Finding
from findings.services.resolution import finding_resolve
from reviews.models import Commit, PullRequest
from tests.factories import (
    CommitFactory,
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    VerificationFactory,
    make_sha,
)


@dataclass
class Review:
    pull_request: PullRequest
    reviewed: Commit
    head: Commit
    moved: Finding  # open blocker, caught by CI, its snippet moved at head
    pattern_only: Finding  # open blocker nothing checks, evidence a glob: located by its own location
    fixed: Finding  # marked fixed
    note_only: Finding  # open cleanup, unverifiable
    unverified: Finding  # open blocker without a verification at head


def build_review() -> Review:
    repository = RepositoryFactory(slug="acme/loader", web_url="https://github.com/acme/loader")
    pull_request = PullRequestFactory(repository=repository, number=4108, title="Add the *streaming* loader")
    reviewed = CommitFactory(repository=repository, sha=make_sha("reviewed"))
    head = CommitFactory(repository=repository, sha=make_sha("head"))
    PinnedCommitFactory(pull_request=pull_request, commit=reviewed, role="reviewed")
    PinnedCommitFactory(pull_request=pull_request, commit=head, role="head")

    moved = FindingFactory(pull_request=pull_request, number=1, caught_by="ci", title="The pin is off main",
                           summary="CI refuses it.", path="src/loader.py", line=40)
    snippet = EvidenceFactory(finding=moved, position=0, commit=reviewed, path="src/loader.py", start_line=40,
                              end_line=42, caption="the loop")
    verification = VerificationFactory(finding=moved, commit=head, verdict="present")
    EvidenceResultFactory(verification=verification, evidence=snippet, path="src/stream/loader.py",
                          start_line=47, end_line=49)

    pattern_only = FindingFactory(pull_request=pull_request, number=2, title="Tolerance _0_ never stops",
                                  summary="- a [broken] dataset <runs> forever", path="src/generic_sft.py", line=259)
    pattern = EvidenceFactory(finding=pattern_only, position=0, kind="pattern", commit=reviewed, path="src/**/*.py",
                              regex=r"tolerance\s*=\s*0", expect="present", start_line=None, end_line=None, text="")
    verification = VerificationFactory(finding=pattern_only, commit=head, verdict="likely_fixed")
    EvidenceResultFactory(verification=verification, evidence=pattern, state=EvidenceResult.State.GONE,
                          path="src/**/*.py", start_line=None, end_line=None)

    fixed = FindingFactory(pull_request=pull_request, number=3, title="A personal config ships")
    EvidenceFactory(finding=fixed, position=0, kind="path", commit=reviewed, path="configs/mine.yaml",
                    expect="exists", start_line=None, end_line=None, text="")
    finding_resolve(finding=fixed, status="fixed", actor=None, source="admin", commit=head, note="Dropped.")

    note_only = FindingFactory(pull_request=pull_request, number=4, kind="cleanup", title="Name the loader better",
                               path="", line=None)
    EvidenceFactory(finding=note_only, position=0, kind="note", commit=None, path="", start_line=None,
                    end_line=None, text="A matter of taste.")
    VerificationFactory(finding=note_only, commit=head, verdict="unverifiable")

    unverified = FindingFactory(pull_request=pull_request, number=5, title="Audio runs die mid-run",
                                path="", line=None)
    EvidenceFactory(finding=unverified, position=0, commit=reviewed, path="src/audio.py", start_line=679,
                    end_line=679, text="import librosa\n")
    return Review(pull_request, reviewed, head, moved, pattern_only, Finding.objects.get(pk=fixed.pk), note_only,
                  unverified)
