"""What an API token may be allowed to do. Plain Python, so the command, the admin, the API and
the tests name scopes the same way."""

READ = "read"
VERIFY = "verify"
IMPORT = "import"
RESOLVE = "resolve"
SETTINGS = "settings"

SCOPES = {
    READ: "Read repositories, pull requests, findings, verifications, runs, the gate and exports",
    VERIFY: "Request verifications (POST …/pulls/<number>/verify)",
    IMPORT: "Import review bundles (POST /api/reviews/import)",
    RESOLVE: "Mark findings fixed, dismissed or open (POST /api/findings/<id>/resolve)",
    SETTINGS: "Change a repository's settings (PATCH /api/repos/<owner>/<name>/publishing)",
}

# The model permission each write scope goes with: a token does at most what its user may do.
SCOPE_PERMISSIONS = {
    VERIFY: "findings.verify_pullrequest",
    IMPORT: "findings.import_review",
    RESOLVE: "findings.resolve_finding",
    SETTINGS: "reviews.change_repository",
}


def scopes_checked(scopes) -> list[str]:
    """The scopes, known and in a stable order; an unknown scope is an error that lists the known ones."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise ValueError(f"Unknown scope(s) {', '.join(unknown)}: use {', '.join(SCOPES)}.")
    if not scopes:
        raise ValueError(f"Give a token at least one scope: {', '.join(SCOPES)}.")
    return [scope for scope in SCOPES if scope in set(scopes)]
