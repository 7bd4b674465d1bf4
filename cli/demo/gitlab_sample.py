"""A GitLab-shaped review of the same sample repository: a merge request (!2) of a project in
nested groups on a self-managed GitLab, so the GitLab side of every page (the group/subgroup
addresses, GitLab's permalinks) can be tried offline. It is fetched from the same local sample."""
from cli.demo.sample_bundle import REVIEWER_NOTE
from cli.demo.sample_commits import GUARD_SNIPPET, SNIPPET_LINES, TOLERANCE_SNIPPET
from cli.demo.sample_repository import SampleRepository

SLUG = "recheck-demo/gitlab/sample-loader"
GITLAB_URL = "https://gitlab.example.com"
NUMBER = 2


def gitlab_sample_bundle(repository: SampleRepository) -> dict:
    commits = repository.commits

    def snippet(key: str, text: str) -> dict:
        path, start, end = SNIPPET_LINES[key]["reviewed"]
        return {"kind": "snippet", "path": path, "start_line": start, "end_line": end, "text": text}

    return {
        "repository": {
            "slug": SLUG, "forge": "gitlab", "forge_url": GITLAB_URL, "clone_url": repository.clone_url,
            "web_url": f"{GITLAB_URL}/{SLUG}", "default_branch": "main",
        },
        "pull_request": {
            "number": NUMBER,
            "title": "Stream chat transcripts (sample merge request on GitLab)",
            "state": "open",
            "url": f"{GITLAB_URL}/{SLUG}/-/merge_requests/{NUMBER}",
            "before": ("**This is a sample** of a GitLab project in nested groups "
                       f"(`{SLUG}`): its pages live under `/{SLUG}/`. " + REVIEWER_NOTE),
        },
        "commits": [
            {"sha": commits["reviewed"], "role": "reviewed", "note": "The merge request's first push."},
            {"sha": commits["head"], "role": "head", "note": "The latest push."},
        ],
        "findings": [
            {"number": 1, "kind": "blocker", "caught_by": "none",
             "title": "A tolerance of 0 never stops on bad records",
             "evidence": [snippet("tolerance", TOLERANCE_SNIPPET)]},
            {"number": 2, "kind": "blocker", "caught_by": "ci",
             "title": "An empty transcript is not guarded against",
             "evidence": [snippet("guard", GUARD_SNIPPET)]},
        ],
    }
