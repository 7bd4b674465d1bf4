"""Steps the reporting tests share: verify as every entry point does, and read what GitHub got."""
from findings.services.runs import verification_run_request


def verify(pull_request, sha, capture):
    with capture(execute=True):
        return verification_run_request(pull_request=pull_request, commit_sha=sha)


def the_check_run(fake_github) -> dict:
    assert len(fake_github.check_runs) == 1, fake_github.check_runs
    return next(iter(fake_github.check_runs.values()))
