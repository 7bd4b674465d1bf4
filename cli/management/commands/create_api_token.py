from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import CommandError
from django.db import transaction

from access.audit import audit_record, audit_source
from access.models import ApiToken
from core.scopes import READ, SCOPES
from access.permissions import user_may
from access.tokens import SCOPE_ACTIONS, api_token_create, api_token_revoke
from core.errors import RecheckError
from reviews.models import Repository
from cli.management.base import OperationalCommand

# What an API token may be allowed to do, by the endpoint's permission codename.
GRANTABLE = {
    "import_review": "POST /api/reviews/import",
    "verify_pullrequest": "POST /api/repos/<owner>/<name>/pulls/<number>/verify",
    "resolve_finding": "POST /api/findings/<id>/resolve",
}


class Command(OperationalCommand):
    help = (
        "Create an API token for a user (and with --create-user the user), granting API permissions first if "
        "asked. The token is printed once, alone on standard output so a script can capture it: only its "
        "digest is stored, so it cannot be shown again."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--create-user", action="store_true",
            help="Create the user if missing (without a password: it signs in with the token only).",
        )
        parser.add_argument(
            "--grant", nargs="+", default=[], choices=sorted(GRANTABLE) + ["all"], metavar="PERMISSION",
            help=f"Grant permissions: {', '.join(sorted(GRANTABLE))}, or all.",
        )
        parser.add_argument("--name", default="Made with create_api_token", help="What the token is for.")
        parser.add_argument(
            "--scope", nargs="+", choices=list(SCOPES), metavar="SCOPE", dest="scopes",
            help=f"Scopes: {', '.join(SCOPES)}. Default: read, and each write the user is permitted.",
        )
        parser.add_argument("--days", type=int, default=None, help="Days until it expires (default RECHECK_API_TOKEN_DAYS).")
        parser.add_argument(
            "--repository", nargs="+", default=[], metavar="OWNER/NAME", dest="repositories",
            help="Limit the token to these repositories.",
        )
        parser.add_argument("--rotate", action="store_true", help="Revoke the user's other tokens.")

    def handle(self, *args, username: str, create_user: bool, grant: list[str], name: str, scopes: list[str] | None,
               days: int | None, repositories: list[str], rotate: bool, **options):
        # Not one transaction: a refused token is recorded in the audit log, and the user and
        # permissions it was refused for stay as the messages above said.
        with transaction.atomic(), audit_source("command"):
            user = self._user_with_grants(username, create_user, grant)
        found = {repository.slug: repository for repository in Repository.objects.filter(slug__in=repositories)}
        missing = [slug for slug in repositories if slug not in found]
        if missing:
            raise CommandError(f"No repository {', '.join(missing)} is recorded: import a review of it first.")
        if scopes is None:
            # Read, and each write the user may do on the token's repositories (or on some repository).
            limit = list(found.values())
            scopes = [READ] + [
                scope for scope, action in SCOPE_ACTIONS.items()
                if (all(user_may(user, action, repository) for repository in limit) if limit else user_may(user, action))
            ]
        with audit_source("command"):
            if rotate:
                for token in ApiToken.objects.filter(user=user, revoked_at__isnull=True):
                    api_token_revoke(token=token)
                    self.stderr.write(f"Revoked {token.label}.")
            try:
                token, secret = api_token_create(
                    user=user, name=name, scopes=scopes, days=days, repositories=list(found.values())
                )
            except RecheckError as error:
                raise CommandError(str(error)) from None
        limit = f", limited to {', '.join(sorted(found))}" if found else ""
        self.stderr.write(
            f"Created {token.label} for {username!r}: scopes {', '.join(token.scopes)}{limit}, expires "
            f"{token.expiry:%Y-%m-%d}. It is shown once, below; store it now."
        )
        self.stdout.write(secret)

    def _user_with_grants(self, username: str, create_user: bool, grant: list[str]):
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if user is None:
            if not create_user:
                raise CommandError(f"No user {username!r}: create it with --create-user, or in the admin.")
            user = User.objects.create_user(**{User.USERNAME_FIELD: username})
            user.set_unusable_password()
            user.save()
            audit_record(action="user.add", target=username, message="Made by create_api_token, without a password.")
            self.stderr.write(f"Created user {username!r}.")
        codenames = sorted(GRANTABLE) if "all" in grant else sorted(set(grant))
        before = sorted(user.user_permissions.values_list("codename", flat=True))
        for codename in codenames:
            user.user_permissions.add(Permission.objects.get(content_type__app_label="findings", codename=codename))
            self.stderr.write(f"Granted findings.{codename} ({GRANTABLE[codename]}).")
        after = sorted(user.user_permissions.values_list("codename", flat=True))
        if after != before:
            audit_record(action="user.edit", target=username, changes={"user_permissions": [before, after]})
        return User.objects.get(pk=user.pk)  # without the permission cache of before the grants
