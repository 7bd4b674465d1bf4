"""`manage.py send_github_calls`: the name `send_forge_calls` had while every call went to GitHub,
kept as an alias so a deployment that starts the sender by it keeps sending (every forge's calls)."""
from forge.management.commands.send_forge_calls import Command as SendForgeCalls

ALIAS_NOTE = "send_github_calls is an alias of send_forge_calls, which sends every forge's calls: start that instead."


class Command(SendForgeCalls):
    help = f"An alias of send_forge_calls. {SendForgeCalls.help}"

    def handle(self, *args, **options):
        self.stderr.write(ALIAS_NOTE)
        super().handle(*args, **options)
