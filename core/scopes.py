"""What an API token may be allowed to do. Plain Python, so the command, the admin, the API and
the tests name scopes the same way."""
from dataclasses import dataclass

READ = "read"
VERIFY = "verify"
IMPORT = "import"
RESOLVE = "resolve"
SETTINGS = "settings"
REPORTS_WRITE = "reports:write"



@dataclass(frozen=True)
class Scope:
    """One row of the scope table. `actions` are the `access.permissions.Action` values (plain
    strings here: core imports nothing of the project) the scope opens to a token; the first is the
    one its user must hold for a token to be given the scope. `audit_action` names a refused
    request in the audit log."""

    name: str
    description: str
    actions: tuple[str, ...]
    audit_action: str | None = None


# The one table: every other view of scopes (the descriptions, which action a scope opens, which
# scope an action needs, a refusal's audit action) is derived from it below or in
# `access.permissions` and `access.tokens`.
SCOPE_TABLE: tuple[Scope, ...] = (
    Scope(READ, "Read repositories, pull requests, findings, verifications, runs, the gate and exports",
          actions=("read",)),
    Scope(VERIFY, "Request verifications (POST …/pulls/<number>/verify)",
          actions=("verify",), audit_action="verification.request"),
    # Writing findings rides on the import scope: a bundle import writes findings.
    Scope(IMPORT, "Import review bundles (POST /api/reviews/import)",
          actions=("import", "write"), audit_action="review.import"),
    Scope(RESOLVE, "Mark findings fixed, dismissed or open (POST /api/findings/<id>/resolve)",
          actions=("resolve",), audit_action="finding.resolve"),
    # A CI job's token: it sends the reports of a repository's commits and nothing else.
    Scope(REPORTS_WRITE, "Send CI reports of a repository's commits (POST …/commits/<sha>/reports/)",
          actions=("report",), audit_action="report.record"),
    # Who holds roles on a repository is one of its settings.
    Scope(SETTINGS, "Change a repository's settings (PATCH /api/repos/<owner>/<name>/publishing)",
          actions=("settings", "members"), audit_action="repository.settings"),
)

# Scope -> what it allows, in words (the command's help, the admin, the tokens page).
SCOPES: dict[str, str] = {scope.name: scope.description for scope in SCOPE_TABLE}
# Write scope -> the action a token's user must hold for the token to be given it.
SCOPE_ACTION_NAMES: dict[str, str] = {scope.name: scope.actions[0] for scope in SCOPE_TABLE if scope.name != READ}
# Action -> the scope that opens it to a token.
ACTION_SCOPE_NAMES: dict[str, str] = {action: scope.name for scope in SCOPE_TABLE for action in scope.actions}
# Write scope -> the audit action of a request refused for it.
SCOPE_AUDIT_ACTIONS: dict[str, str] = {
    scope.name: scope.audit_action for scope in SCOPE_TABLE if scope.audit_action is not None
}

def scopes_checked(scopes) -> list[str]:
    """The scopes, known and in a stable order; an unknown scope is an error that lists the known ones."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise ValueError(f"Unknown scope(s) {', '.join(unknown)}: use {', '.join(SCOPES)}.")
    if not scopes:
        raise ValueError(f"Give a token at least one scope: {', '.join(SCOPES)}.")
    return [scope for scope in SCOPES if scope in set(scopes)]
