"""Sending the batched emails through Django's mail framework: one message per person and pull
request per batch window, plain text and HTML with the verdicts as a table, a one-click
`List-Unsubscribe`, and threading headers so one pull request's messages are one thread.

A message is claimed with a conditional update like a webhook. When it is sent, the person must
still read the repository and have an address: otherwise it is dropped, never sent. A server that
is down is tried again on RECHECK_WEBHOOK_RETRY_SCHEDULE; a recipient the server refuses fails the
message at once (retrying cannot change that)."""
import logging
import smtplib
from datetime import timedelta
from email.utils import make_msgid

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from access.permissions import Action, user_may
from notify.mail.services import unsubscribe_token
from notify.models import MailMessage
from notify.webhooks.sending import retry_delay
from notify.webhooks.wake import mails_wake
from presentation.events import summarised

logger = logging.getLogger(__name__)


def thread_id(message: MailMessage) -> str:
    """The Message-ID every email about the pull request replies to: one thread per pull request."""
    subject = f"pr{message.pull_request_id}" if message.pull_request_id else f"repo{message.repository_id}"
    return f"<recheck-{subject}@{_domain()}>"


def _domain() -> str:
    site = settings.RECHECK_SITE_URL
    return site.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0] or "recheck.localhost"


def mail_message_build(message: MailMessage) -> EmailMultiAlternatives:
    events = summarised(message.events.select_related("actor", "repository", "pull_request__repository")
                        .order_by("id"))
    repository, pull_request = message.repository, message.pull_request
    site = settings.RECHECK_SITE_URL
    token = unsubscribe_token(user_id=message.user_id, repository_id=repository.pk,
                              pull_request_id=pull_request.pk if pull_request else None)
    unsubscribe = f"{site}{reverse('findings:unsubscribe', args=[token])}"
    about = f"{repository.slug}#{pull_request.number} {pull_request.title}" if pull_request else repository.slug
    verdicts = [event for event in events if "from" in event.payload and event.finding_number is not None]
    context = {"events": events, "verdicts": verdicts, "about": about, "unsubscribe": unsubscribe,
               "link": f"{site}{pull_request.get_absolute_url()}timeline/" if pull_request
               else f"{site}{repository.get_absolute_url()}timeline/",
               "user": message.user}
    root = thread_id(message)
    mail = EmailMultiAlternatives(
        subject=f"[{repository.slug}] {about}: {len(events)} change{'s' if len(events) != 1 else ''}",
        body=render_to_string("notify/mail.txt", context), to=[message.user.email],
        headers={"Message-ID": make_msgid(f"recheck-mail{message.pk}", domain=_domain()),
                 "In-Reply-To": root, "References": root,
                 "List-Id": f"{repository.slug} reviews <{repository.slug.replace('/', '.')}.{_domain()}>",
                 "List-Unsubscribe": f"<{unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )
    mail.attach_alternative(render_to_string("notify/mail.html", context), "text/html")
    return mail


def mail_message_send(*, message_id: int, now=None) -> MailMessage | None:
    now = now or timezone.now()
    claimed = MailMessage.objects.filter(pk=message_id, status__in=[MailMessage.Status.PENDING,
                                                                     MailMessage.Status.SENDING],
                                         due_at__lte=now).update(
        status=MailMessage.Status.SENDING, attempts=F("attempts") + 1, due_at=now + timedelta(minutes=5))
    if claimed != 1:
        return None
    message = MailMessage.objects.select_related("user", "repository", "pull_request__repository").get(pk=message_id)
    user = message.user
    if not user.is_active or not user.email or not user_may(user, Action.READ, message.repository):
        # The role was lost (or the address removed) since the events were written: nothing goes out.
        MailMessage.objects.filter(pk=message.pk).update(status=MailMessage.Status.DROPPED)
        message.refresh_from_db()
        return message
    try:
        connection = get_connection(fail_silently=False, timeout=settings.EMAIL_TIMEOUT) \
            if "smtp" in settings.EMAIL_BACKEND else get_connection(fail_silently=False)
        mail = mail_message_build(message)
        mail.connection = connection
        mail.send()
    except smtplib.SMTPRecipientsRefused as refused:
        MailMessage.objects.filter(pk=message.pk).update(status=MailMessage.Status.FAILED,
                                                         last_error=f"The mail server refused {refused.recipients}")
    except (smtplib.SMTPException, OSError) as error:
        delay = retry_delay(message.attempts)
        if delay is None:
            MailMessage.objects.filter(pk=message.pk).update(status=MailMessage.Status.FAILED,
                                                             last_error=f"Gave up: {error}"[:2000])
        else:
            due_at = timezone.now() + timedelta(seconds=delay)
            MailMessage.objects.filter(pk=message.pk).update(status=MailMessage.Status.PENDING, due_at=due_at,
                                                             last_error=str(error)[:2000])
            message.due_at = due_at
            mails_wake([message])
    else:
        MailMessage.objects.filter(pk=message.pk).update(status=MailMessage.Status.SENT, sent_at=timezone.now(),
                                                         last_error="")
    message.refresh_from_db()
    return message


def mails_send_due(*, now=None, limit: int = 100) -> int:
    moment = now or timezone.now()
    due = list(MailMessage.objects.filter(status__in=[MailMessage.Status.PENDING, MailMessage.Status.SENDING],
                                          due_at__lte=moment).order_by("due_at", "id").values_list("pk", flat=True)
               [:limit])
    return sum(1 for pk in due if mail_message_send(message_id=pk, now=moment) is not None)
