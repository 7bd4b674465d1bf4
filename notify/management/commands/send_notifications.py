"""`manage.py send_notifications`: the sender of notifications for a server without a worker (the
embedded default, started beside the site by scripts/serve): it writes the events of the pull
requests that moved and sends the webhooks as they fall due, until stopped."""
import signal
import threading

from django.core.management.base import BaseCommand

from notify.sender import notifications_send_forever


class Command(BaseCommand):
    help = "Write the timelines' events and send the outgoing webhooks as they fall due, until stopped."

    def add_arguments(self, parser):
        parser.add_argument("--poll", type=float, default=None,
                            help="Seconds between rounds (default: RECHECK_NOTIFY_BATCH_SECONDS).")

    def handle(self, *args, poll=None, **options):
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        self.stdout.write("Sending notifications as they fall due (Ctrl-C stops).")
        notifications_send_forever(stop=stop, poll=poll)
