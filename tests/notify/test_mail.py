"""Email: a push's events of one pull request are one batched message to the people they are for,
plain text and HTML with the verdicts as a table, one-click unsubscribe, one thread per pull
request; only to who may read the repository; through Django's mail outbox and once end to end
against a local SMTP server (aiosmtpd on 127.0.0.1)."""
import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from access.models import Membership
from core.vocabulary import events as ev
from notify.mail.sending import mails_send_due
from notify.mail.services import subscription_set
from notify.models import MailMessage, Subscription
from reviews.models import Repository
from tests import personas
from tests.timeline_world import TimelineWorld

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 60
    settings.RECHECK_SITE_URL = "https://recheck.example"
    ada = personas.user_with_role("maintainer", username="ada")
    ada.email = "ada@example.com"
    ada.save()
    return TimelineWorld(tmp_path, actor=ada)


def later(seconds=61):
    return timezone.now() + timedelta(seconds=seconds)


def test_the_person_who_decided_gets_one_message_per_push_threaded_with_a_verdict_table(world):
    world.imported().first_push()
    mails_send_due(now=later())
    first = [message for message in mail.outbox if message.to == ["ada@example.com"]]
    assert len(first) == 1  # ada marked finding 2 fixed: she is sent its review's changes
    mail.outbox.clear()
    world.second_push()
    assert mails_send_due(now=later()) == 1
    [message] = mail.outbox
    text, (html, kind) = message.body, message.alternatives[0]
    assert kind == "text/html"
    assert "Finding 1: Still present → Likely fixed" in text and "Finding 2 was marked fixed" in text
    table = html.split('<table class="verdicts"', 1)[1].split("</table>", 1)[0]
    assert re.search(r"<td>1</td>\s*<td>Still present</td><td>Likely fixed</td>", table)
    assert re.search(r"<td>2</td>\s*<td>Likely fixed</td><td>Still present</td>", table)
    assert message.extra_headers["In-Reply-To"] == first[0].extra_headers["In-Reply-To"] \
        == message.extra_headers["References"]
    assert message.extra_headers["Message-ID"] != first[0].extra_headers["Message-ID"]
    assert message.extra_headers["List-Unsubscribe"].startswith("<https://recheck.example/notifications/unsubscribe/")
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_a_watcher_who_loses_their_role_is_sent_nothing_more(world):
    world.imported()
    repository = world.pull_request.repository
    repository.visibility = Repository.Visibility.PRIVATE
    repository.save()
    watcher = personas.member_of(repository, personas.user_with_role("no_role", username="wes"), Membership.Role.READER)
    watcher.email = "wes@example.com"
    watcher.save()
    subscription_set(actor=watcher, repository=repository, kinds=[ev.FINDING_VERDICT_CHANGED, ev.FINDING_REGRESSED])
    outsider = personas.user_with_role("no_role", username="olga")
    outsider.email = "olga@example.com"
    outsider.save()
    Subscription.objects.create(user=outsider, repository=repository)  # as if made while she could read it
    world.first_push()
    mails_send_due(now=later())
    assert "wes@example.com" in [to for message in mail.outbox for to in message.to]
    assert "olga@example.com" not in [to for message in mail.outbox for to in message.to]
    mail.outbox.clear()
    world.second_push()
    assert MailMessage.objects.filter(user=watcher, status="pending").count() == 1
    Membership.objects.filter(user=watcher).delete()  # the role goes before the window ends
    mails_send_due(now=later())
    assert "wes@example.com" not in [to for message in mail.outbox for to in message.to]
    assert MailMessage.objects.filter(user=watcher).latest("id").status == "dropped"


def test_a_person_without_an_address_or_who_chose_none_gets_nothing(world):
    world.imported()
    ada = world.actor
    ada.email = ""
    ada.save()
    world.first_push()
    assert not MailMessage.objects.filter(user=ada).exists()
    ada.email = "ada@example.com"
    ada.save()
    subscription_set(actor=ada, repository=world.pull_request.repository, pull_request=world.pull_request,
                     channel="none")
    world.second_push()
    assert not MailMessage.objects.filter(user=ada).exists()


def test_the_unsubscribe_link_works_once_and_a_forged_one_not_at_all(world):
    world.imported().first_push()
    mails_send_due(now=later())
    [message] = [message for message in mail.outbox if message.to == ["ada@example.com"]]
    url = message.extra_headers["List-Unsubscribe"].strip("<>").removeprefix("https://recheck.example")
    client = personas.site_client()
    assert client.get(url).status_code == 200  # a button: a scanner's GET changes nothing
    assert not Subscription.objects.filter(user=world.actor).exists()
    assert client.post(url).status_code == 200  # one click, no session, no CSRF token
    assert Subscription.objects.get(user=world.actor, pull_request=world.pull_request).channel == "none"
    assert client.post(url).status_code == 400  # replayed
    forged = url.replace(url.split("/")[-2], url.split("/")[-2][:-3] + "abc")
    assert client.post(forged).status_code == 400
    mail.outbox.clear()
    world.second_push()
    mails_send_due(now=later())
    assert "ada@example.com" not in [to for message in mail.outbox for to in message.to]


def test_the_notifications_page_saves_a_choice(world):
    world.imported()
    site = personas.site_client(world.actor)
    assert site.get("/notifications/").status_code == 200
    site.post("/notifications/", {"repository": "acme/loader", "pull_request": "7",
                                  "kinds": [ev.FINDING_REGRESSED], "channel": "email"})
    subscription = Subscription.objects.get(user=world.actor)
    assert (subscription.pull_request, subscription.kinds) == (world.pull_request, [ev.FINDING_REGRESSED])
    assert "Possibly regressed" in site.get("/notifications/").content.decode()
    assert personas.site_client().get("/notifications/").status_code == 302


def test_end_to_end_through_a_local_smtp_server(world, settings):
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    received = []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        world.imported().first_push()
        mails_send_due(now=later())
    finally:
        controller.stop()
    [message] = [message for message in received if message["To"] == "ada@example.com"]
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["In-Reply-To"].startswith("<recheck-pr") and message.is_multipart()
    assert MailMessage.objects.filter(user=world.actor, status="sent").exists()


def test_a_mail_server_that_is_down_is_tried_again(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 2
    world.imported().first_push()
    mails_send_due(now=later())
    message = MailMessage.objects.get(user=world.actor)
    assert message.status == "pending" and message.attempts == 1 and message.last_error


def test_a_recipient_the_mail_server_refuses_fails_that_message_only(world, settings):
    import socket

    from aiosmtpd.controller import Controller

    class Refusing:
        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            return "550 5.1.1 No such user here"

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(Refusing(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        world.imported().first_push()
        mails_send_due(now=later())
    finally:
        controller.stop()
    message = MailMessage.objects.get(user=world.actor)
    assert message.status == "failed" and "refused" in message.last_error and message.attempts == 1
