"""Three users to try the site's roles with on a laptop: a reader, a reviewer and a maintainer,
each in the role's group, with a fresh random password printed on every run (so the one on the
screen is always the one that works): `scripts/serve` prints it last, and this command prints a
working one again whenever it has scrolled away. Refused outside the demo (RECHECK_DEMO=1, which
scripts/serve sets) or DEBUG: a server never gets accounts whose passwords went to a terminal."""
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import CommandError

from access.permissions import Role
from cli.management.base import OperationalCommand

DEMO_USERS = {"reader": Role.READER, "reviewer": Role.REVIEWER, "maintainer": Role.MAINTAINER}


class Command(OperationalCommand):
    help = "Make (or reset) the demo users reader, reviewer and maintainer, and print their password. Demo or DEBUG only."

    def handle(self, *args, **options):
        if not (settings.RECHECK_DEMO or settings.DEBUG):
            raise CommandError("demo_users is for the demo (RECHECK_DEMO=1, as scripts/serve runs it) or DEBUG=1 only; "
                               "on a server, grant roles in the admin (Access → Memberships) to users who sign in.")
        password = secrets.token_urlsafe(9)
        for username, role in DEMO_USERS.items():
            user, _ = get_user_model().objects.get_or_create(username=username)
            user.set_password(password)
            user.save()
            user.groups.add(Group.objects.get(name=role.value))
        self.stdout.write(
            f"Sign in as reader, reviewer or maintainer (each with the role of that name), password: {password}"
        )
