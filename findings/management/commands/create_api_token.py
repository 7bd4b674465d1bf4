from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token

# What an API token may be allowed to do, by the endpoint's permission codename.
GRANTABLE = {
    "import_review": "POST /api/reviews/import",
    "verify_pullrequest": "POST /api/repos/<owner>/<name>/pulls/<number>/verify",
    "resolve_finding": "POST /api/findings/<id>/resolve",
}


class Command(BaseCommand):
    help = (
        "Print the API token of a user, creating it (and with --create-user the user) if needed, and "
        "grant API permissions. Only the key goes to standard output, so a script can capture it."
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
        parser.add_argument("--rotate", action="store_true", help="Replace an existing token with a new one.")

    @transaction.atomic
    def handle(self, *args, username: str, create_user: bool, grant: list[str], rotate: bool, **options):
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if user is None:
            if not create_user:
                raise CommandError(f"No user {username!r}: create it with --create-user, or in the admin.")
            user = User.objects.create_user(**{User.USERNAME_FIELD: username})
            user.set_unusable_password()
            user.save()
            self.stderr.write(f"Created user {username!r}.")
        codenames = sorted(GRANTABLE) if "all" in grant else sorted(set(grant))
        for codename in codenames:
            user.user_permissions.add(Permission.objects.get(content_type__app_label="findings", codename=codename))
            self.stderr.write(f"Granted findings.{codename} ({GRANTABLE[codename]}).")
        if rotate:
            Token.objects.filter(user=user).delete()
        token, created = Token.objects.get_or_create(user=user)
        if not created:
            self.stderr.write("Existing token (use --rotate for a new one).")
        self.stdout.write(token.key)
