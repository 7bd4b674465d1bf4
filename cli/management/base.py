"""What every Recheck command has in common."""
from django.core.management.base import BaseCommand


class OperationalCommand(BaseCommand):
    """A command that does work (verify, import, export, render) rather than set the project up.

    It skips Django's system checks: they validate the whole project's configuration, cost about
    half a second on every run, and say nothing about the work at hand. They run where they belong:
    `manage.py check` in the test command and `check --deploy` before a deployment."""

    requires_system_checks = []
