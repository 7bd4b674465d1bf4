"""The sender of the outbox for a server without a worker: `manage.py send_forge_calls` sends each
call to its forge (GitHub, GitLab) when it is due, until stopped (scripts/serve starts it beside the
site). With a broker, workers and beat do this; running it there as well is harmless (calls are
claimed). `send_github_calls` is its former name, kept as an alias."""
import signal
import threading

from django.core.management.base import BaseCommand

from forge.outbox.sending import forge_calls_send_due, forge_calls_send_forever
from forge.outbox.wake import sender_event


class Command(BaseCommand):
    help = "Send the calls to the forges that are due, as they fall due (or with --once, those due now)."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="Send what is due now, then stop.")
        parser.add_argument("--interval", type=float, default=2.0,
                            help="Seconds between looks for calls the site wrote (default 2); a call due "
                                 "sooner is sent at its time.")

    def handle(self, *args, once: bool, interval: float | None, **options):
        if once:
            attempted = forge_calls_send_due()
            self.stdout.write(f"{attempted} call(s) to the forges attempted.")
            return
        stop = threading.Event()

        def stopping(*_):
            stop.set()
            sender_event.set()  # no waiting out the interval

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, stopping)
        self.stdout.write("Sending calls to the forges as they fall due (stop with Ctrl-C).")
        forge_calls_send_forever(stop=stop, poll=interval)
